// The .NET SDK for the tests that run `dotnet build`: where it is missing they skip, except in CI, where they
// must fail (CI's machine has the SDK; a missing one would otherwise hide the proof that these builds work).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { repoRoot } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

export const hasDotnet = spawnSync('dotnet', ['--version'], { encoding: 'utf8' }).status === 0;

/** Run the dotnet tests here: always in CI, elsewhere only when the SDK is installed. */
export const runDotnetTests = hasDotnet || Boolean(process.env.CI);

/** Throws in CI when the SDK is missing, so that the tests fail instead of skipping. */
export function requireDotnet(): void {
  if (!hasDotnet) throw new Error('CI is set but the .NET SDK (dotnet) is not installed; the SDK fixture and MSBuild tests need it');
}

export interface ProcessResult {
  status: number | null;
  output: string;
}

/**
 * Runs a command without blocking the event loop (the reference service may run in this process), with
 * stdout and stderr in one string as a build log reads. Build servers are off so no process outlives the build.
 */
export function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1', MSBUILDDISABLENODEREUSE: '1', NO_COLOR: '1', ...options.env },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, output }));
  });
}

/**
 * `dotnet build <project> -c Release --nologo -v q ...args` (a tool of this repository: tools/srm-oracle,
 * tools/fix-host ...) once per test run, whichever test file asks first: the others, in this worker or another,
 * wait for that build and get its result, instead of running MSBuild again on the same project (a second build,
 * even with nothing to do, costs seconds; two at once in one obj/ folder collide). The run's temporary folder
 * (test/helpers/temp-root.ts) keeps the result, so the next run builds again and sees changed sources.
 */
export async function buildOnce(project: string, ...args: string[]): Promise<ProcessResult> {
  const key = createHash('sha256').update(JSON.stringify([project, args])).digest('hex').slice(0, 16);
  const done = join(tmpdir(), `dotnet-build-${key}.json`);
  const lock = `${done}.lock`;
  let mine = false;
  try {
    mkdirSync(lock);
    mine = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if (mine) {
    try {
      if (!existsSync(done)) {
        const result = await run('dotnet', ['build', project, '-c', 'Release', '--nologo', '-v', 'q', ...args], { cwd: repoRoot });
        writeFileSync(`${done}.tmp`, JSON.stringify(result));
        renameSync(`${done}.tmp`, done);
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  } else {
    await waitUntil(`another test file's dotnet build of ${relative(repoRoot, project)}`, () => existsSync(done), () => (existsSync(lock) ? 'still building' : 'the build ended without a result'), { ceilingMs: 600_000, intervalMs: 200 });
  }
  return JSON.parse(readFileSync(done, 'utf8')) as ProcessResult;
}

/** The C# of a small add-in that uses the vendor API; with BROKEN defined it lacks the vendor attribute. */
export function addinSource(namespace: string, name: string): string {
  return `#if !BROKEN
[assembly: Contoso.ContosoSignedAssembly(true)]
#endif
namespace ${namespace}
{
    public class Addin : Contoso.AddinBase
    {
        public override string Name => "${name}";
    }
}
`;
}
