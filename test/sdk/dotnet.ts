// The .NET SDK for the tests that run `dotnet build`: where it is missing they skip, except in CI, where they
// must fail (CI's machine has the SDK; a missing one would otherwise hide the proof that these builds work).
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from '../helpers/fixtures.js';
import { waitUntil } from '../helpers/wait.js';

const sdkVersion = spawnSync('dotnet', ['--version'], { encoding: 'utf8' });
export const hasDotnet = sdkVersion.status === 0;

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
 * Where the builds of the tools of tools/ are kept between runs and clones: one folder per tool and content (its
 * files, tools/common, the build's arguments and the SDK's version), holding the tool's bin/ folder as the build
 * wrote it. A fresh clone, or a second worktree, finds the build a run of any other copy made; a changed source is
 * another key, so it is built. A fresh machine (CI) has no such folder and builds.
 */
export const TOOL_CACHE = process.env.SIGNGATE_DOTNET_TOOL_CACHE ?? join(homedir(), '.cache', 'signgate', 'dotnet-tools');

/** The files of `folder` (bin/ and obj/ left out), as paths relative to the repository, sorted. */
function sourceFiles(folder: string): string[] {
  if (!existsSync(folder)) return [];
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (dir !== folder || (entry.name !== 'bin' && entry.name !== 'obj')) walk(path);
      } else if (entry.isFile()) files.push(relative(repoRoot, path));
    }
  };
  walk(folder);
  return files.sort();
}

/** The cache key of a build of `project` (a folder of tools/) with `args`: every input that changes its output. */
export function toolBuildKey(project: string, args: readonly string[]): string {
  const hash = createHash('sha256').update(JSON.stringify([relative(repoRoot, project), args, sdkVersion.stdout.trim()]));
  for (const file of [...sourceFiles(project), ...sourceFiles(join(repoRoot, 'tools', 'common'))])
    hash.update(`\0${file}\0`).update(readFileSync(join(repoRoot, file)));
  return hash.digest('hex').slice(0, 32);
}

/**
 * `dotnet build <project> -c Release --nologo -v q ...args` (a tool of this repository: tools/srm-oracle,
 * tools/fix-host ...) once per test run, whichever test file asks first: the others, in this worker or another,
 * wait for that build and get its result, instead of running MSBuild again on the same project (a second build,
 * even with nothing to do, costs seconds; two at once in one obj/ folder collide). The run's temporary folder
 * (test/helpers/temp-root.ts) keeps the result. A build of the same sources made before, by this clone or another
 * (TOOL_CACHE), is copied into the project's bin/ instead: on a fresh clone MSBuild's restore and first build of
 * a tool took 45-55 s, its up-to-date check in a warm clone 10-20 s, the copy takes milliseconds.
 */
export async function buildOnce(project: string, ...args: string[]): Promise<ProcessResult> {
  const key = createHash('sha256')
    .update(JSON.stringify([project, args]))
    .digest('hex')
    .slice(0, 16);
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
        const cached = join(TOOL_CACHE, `${project.split(/[\\/]/).at(-1)}-${toolBuildKey(project, args)}`);
        let result: ProcessResult;
        if (existsSync(join(cached, 'bin'))) {
          cpSync(join(cached, 'bin'), join(project, 'bin'), { recursive: true, force: true });
          result = { status: 0, output: `the build of these sources kept in ${cached}, copied to ${relative(repoRoot, project)}/bin` };
        } else {
          result = await run('dotnet', ['build', project, '-c', 'Release', '--nologo', '-v', 'q', ...args], { cwd: repoRoot });
          if (result.status === 0) keepBuild(join(project, 'bin'), cached);
        }
        writeFileSync(`${done}.tmp`, JSON.stringify(result));
        renameSync(`${done}.tmp`, done);
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  } else {
    await waitUntil(
      `another test file's dotnet build of ${relative(repoRoot, project)}`,
      () => existsSync(done),
      () => (existsSync(lock) ? 'still building' : 'the build ended without a result'),
      { ceilingMs: 600_000, intervalMs: 200 },
    );
  }
  return JSON.parse(readFileSync(done, 'utf8')) as ProcessResult;
}

/** Copies a tool's bin/ into the cache, whole or not at all (a run of another copy may be keeping the same build). */
function keepBuild(bin: string, cached: string): void {
  const partial = `${cached}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(cached), { recursive: true });
    cpSync(bin, join(partial, 'bin'), { recursive: true });
    renameSync(partial, cached);
  } catch {
    // Kept by another run meanwhile, or no cache folder to write: the next run builds again.
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
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

/** A .resx with one string, `Hello`: Strings.resx is compiled into the assembly, Strings.fr.resx into fr/<name>.resources.dll. */
export const resx = (hello: string) => `<?xml version="1.0" encoding="utf-8"?>
<root>
  <resheader name="resmimetype"><value>text/microsoft-resx</value></resheader>
  <resheader name="version"><value>2.0</value></resheader>
  <resheader name="reader"><value>System.Resources.ResXResourceReader, System.Windows.Forms, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089</value></resheader>
  <resheader name="writer"><value>System.Resources.ResXResourceWriter, System.Windows.Forms, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089</value></resheader>
  <data name="Hello" xml:space="preserve"><value>${hello}</value></data>
</root>
`;
