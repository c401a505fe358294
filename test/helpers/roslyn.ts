// Roslyn's csc from the installed .NET SDK, for the tests that compile small programs the way an add-in's own build
// does (test/strongname/strong-name-writer.test.ts, test/strongname/strong-name-layout.test.ts).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Mono's mscorlib: the one reference the programs compile against. */
export const MSCORLIB = '/usr/lib/mono/4.5/mscorlib.dll';

let compiler: string | undefined;
/** csc.dll of the newest installed SDK (asked of `dotnet --list-sdks` once per file). */
function compilerPath(): string {
  if (compiler) return compiler;
  const sdks = execFileSync('dotnet', ['--list-sdks'], { encoding: 'utf8' }).trim().split('\n');
  const last = /^(\S+) \[(.*)\]$/.exec(sdks.at(-1)!)!;
  compiler = join(last[2]!, last[1]!, 'Roslyn', 'bincore', 'csc.dll');
  return compiler;
}

/** Roslyn's csc from the installed .NET SDK, compiling against Mono's mscorlib: what the add-in's own build does. */
export function csc(args: readonly string[]): void {
  execFileSync('dotnet', [compilerPath(), '-nologo', '-noconfig', '-nostdlib', `-r:${MSCORLIB}`, ...args], {
    env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' },
  });
}
