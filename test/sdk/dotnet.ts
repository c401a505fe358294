// The .NET SDK for the tests that run `dotnet build`: where it is missing they skip, except in CI, where they
// must fail (CI's machine has the SDK; a missing one would otherwise hide the proof that these builds work).
import { spawn, spawnSync } from 'node:child_process';

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
