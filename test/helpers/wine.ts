// The Windows executable on a real Windows API: Debian's Wine runs signgate-win-x64.exe (built by
// scripts/build-sea.js on Node 22.23, the newest Node whose win-x64 binary starts under Wine 8) in a fresh prefix
// set to Windows 10. Node there reports win32, `\` and a case-insensitive file system. Its stdout and stderr go to
// files: a pipe fails there with EBADF.
import { execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './fixtures.js';

/** Debian's wine64 loader. */
export const WINE_LOADER = ['/usr/lib/wine/wine64', '/usr/bin/wine64'].find((p) => existsSync(p));
export const hasWine = WINE_LOADER !== undefined;
/** Node 24 dies at start under Wine 8 (V8 cannot reserve its code range); 22.23 runs. */
export const WINE_NODE_VERSION = '22.23.0';

export interface WineRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface WineHost {
  /** The prefix's C: drive as a Linux folder. */
  readonly driveC: string;
  readonly exe: string;
  /** Runs the executable with `args` in `cwd` (a Linux folder, which Wine shows as Z:\…); output read from files afterwards. */
  run(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<WineRun>;
  /** Stops the prefix's wineserver and removes the executable and the prefix. */
  close(): Promise<void>;
}

/** A Windows path for a Linux one: Wine maps Z: to the root of the Linux file system. */
export function zPath(linuxPath: string): string {
  return `Z:${linuxPath.split('/').join('\\')}`;
}

/**
 * Builds the Windows executable and makes a fresh prefix (about 30 s the first time; Node's packages are cached
 * in ~/.cache/signgate/node).
 * @throws when Wine or the build fails
 */
export async function startWine(): Promise<WineHost> {
  if (!WINE_LOADER) throw new Error('Wine is not installed; .ci/run must apt-get install wine64');
  const work = mkdtempSync(join(tmpdir(), 'signgate-wine-'));
  const out = join(work, 'sea');
  await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts', 'build-sea.js'), '--out', out, '--node-version', WINE_NODE_VERSION, '--target', 'win-x64'], { cwd: repoRoot, maxBuffer: 16 << 20 }).catch((e: { stdout: string; stderr: string }) => {
    throw new Error(`scripts/build-sea.js failed:\n${e.stdout}\n${e.stderr}`);
  });
  const prefix = join(work, 'prefix');
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=', NO_COLOR: '1' };
  await promisify(execFile)(WINE_LOADER, ['winecfg', '-v', 'win10'], { env });
  const exe = join(out, 'signgate-win-x64.exe');
  let n = 0;
  return {
    close: async () => {
      await promisify(execFile)(WINE_LOADER.replace(/wine64$/, 'wineserver'), ['-k'], { env }).catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
    driveC: join(prefix, 'drive_c'),
    exe,
    run: (args, cwd, extra = {}) =>
      new Promise((resolve, reject) => {
        const base = join(work, `run-${++n}`);
        const stdout = openSync(`${base}.out`, 'w');
        const stderr = openSync(`${base}.err`, 'w');
        const child = spawn(WINE_LOADER, [exe, ...args], { cwd, env: { ...env, ...extra }, stdio: ['ignore', stdout, stderr] });
        const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
        child.on('error', reject);
        child.on('close', (status) => {
          clearTimeout(timer);
          closeSync(stdout);
          closeSync(stderr);
          resolve({ status, stdout: readFileSync(`${base}.out`, 'utf8'), stderr: readFileSync(`${base}.err`, 'utf8') });
        });
      }),
  };
}
