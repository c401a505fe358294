// The Windows executable that ships on a real Windows API: Debian 13's Wine 10 runs signgate-win-x64.exe (built by
// scripts/build-sea.js on its default Node, 24 LTS, as the packages carry it) in a fresh prefix set to Windows 10.
// Node there reports win32, `\` and a case-insensitive file system. Wine 10 lives in a Debian 13 root made by
// scripts/wine-root.sh (Debian 12's Wine 8 cannot start Node 24); each run enters it with `unshare -m` and `chroot`,
// the temporary folder and the repository bound at the same paths, so a Linux path means the same file inside.
// The network is the host's: a service on 127.0.0.1 answers inside. Stdout and stderr go to files.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './fixtures.js';
import { waitFor, WaitError } from './wait.js';

/** The Debian 13 root with Wine 10 (scripts/wine-root.sh). */
export const WINE_ROOT = process.env.SIGNGATE_WINE_ROOT ?? '/var/cache/signgate/wine-trixie';
/** The root is complete: scripts/wine-root.sh writes this file last. */
export const hasWine = existsSync(join(WINE_ROOT, '.signgate-wine-ready'));
const LOADER = '/usr/lib/wine/wine64';

export interface WineRun {
  readonly status: number | null;
  /** The signal that ended the process, when one did. */
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A run in progress: its process (the Windows program itself once Wine has started it) and its end. */
export interface WineProcess {
  readonly child: ChildProcess;
  readonly done: Promise<WineRun>;
}

/**
 * A run under a Windows parent (`start /wait`): `done` ends with the exit code that Windows gives the parent
 * (GetExitCodeProcess, what cmd.exe, PowerShell and MSBuild read), and `program` finds the Linux process of the
 * program itself, to send it a signal.
 */
export interface WineParentedProcess {
  readonly done: Promise<WineRun>;
  /** The program's own process id, once Wine has started it (found by a mark in its environment). */
  program(): Promise<number>;
}

export interface WineHost {
  /** The prefix's C: drive as a Linux folder. */
  readonly driveC: string;
  readonly exe: string;
  /** The `wine64 --version` of the root. */
  readonly version: string;
  /** Runs the executable with `args` in `cwd` (a Linux folder, which Wine shows as Z:\…) to its end. */
  run(args: readonly string[], cwd: string, env?: Record<string, string>): Promise<WineRun>;
  /** Starts the executable and returns at once: for a signal or a kill while it works. */
  start(args: readonly string[], cwd: string, env?: Record<string, string>): WineProcess;
  /**
   * Starts the executable under Wine's `start /wait`, a Windows parent that ends with the program's Windows exit
   * code. The program's own Linux exit status can differ from it: once in CI it was 0 after the program had called
   * process.exit(130) on Ctrl-C. Wine's Linux process ends with the status of the thread it ends on, likely here
   * the console control handler's thread, which was still ending.
   */
  startUnderParent(args: readonly string[], cwd: string, env?: Record<string, string>): WineParentedProcess;
  /** Stops the prefix's wineserver and removes the executable and the prefix. */
  close(): Promise<void>;
}

/** A Windows path for a Linux one: Wine maps Z: to the root of the Linux file system. */
export function zPath(linuxPath: string): string {
  return `Z:${linuxPath.split('/').join('\\')}`;
}

/**
 * `command` inside the Wine 10 root: a private mount namespace (the mounts end with the process) with /proc, /dev,
 * the temporary folder and the repository bound at their own paths; `exec` all the way, so the process that
 * `spawn` returns becomes Wine's loader and then the Windows program (a signal to it reaches the program).
 */
function inRoot(command: readonly string[], cwd: string): [string, string[]] {
  const binds = [...new Set(['/tmp', tmpdir(), repoRoot])];
  const script = [
    'set -e',
    'r=$1; cwd=$2; shift 2',
    'mount -t proc proc "$r/proc"',
    'mount --rbind /dev "$r/dev"',
    ...binds.map((b) => `mkdir -p "$r${b}" && mount --bind '${b.replaceAll("'", "'\\''")}' "$r${b}"`),
    'exec chroot "$r" env -C "$cwd" "$@"',
  ].join('\n');
  return ['unshare', ['-m', 'sh', '-c', script, 'wine-root', WINE_ROOT, cwd, ...command]];
}

/**
 * Builds the Windows executable as it ships and makes a fresh prefix (the executable takes a minute or two the
 * first time: Node's package is fetched with npm into ~/.cache/signgate/node).
 * @throws when the Wine 10 root is missing or the build fails
 */
export async function startWine(): Promise<WineHost> {
  if (!hasWine) throw new Error(`Wine 10 is not set up in ${WINE_ROOT}; run bash scripts/wine-root.sh (as .ci/run does)`);
  const work = mkdtempSync(join(tmpdir(), 'signgate-wine-'));
  const out = join(work, 'sea');
  await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts', 'build-sea.js'), '--out', out, '--target', 'win-x64'], {
    cwd: repoRoot,
    maxBuffer: 16 << 20,
  }).catch((e: { stdout: string; stderr: string }) => {
    throw new Error(`scripts/build-sea.js failed:\n${e.stdout}\n${e.stderr}`);
  });
  const prefix = join(work, 'prefix');
  // Without TMPDIR: Wine 10 aborts at start ("free(): invalid pointer") when it names a folder other than /tmp, as
  // vitest's run folder does; the Windows program takes its TEMP from the prefix.
  const { TMPDIR: _tmpdir, ...hostEnv } = process.env;
  const env = { ...hostEnv, WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=', NO_COLOR: '1' };
  const exec = (command: readonly string[]) => {
    const [file, args] = inRoot(command, work);
    return promisify(execFile)(file, args, { env });
  };
  await exec([LOADER, 'winecfg', '-v', 'win10']);
  const version = (await exec([LOADER, '--version'])).stdout.trim();
  const exe = join(out, 'signgate-win-x64.exe');
  let n = 0;
  const launch = (command: readonly string[], cwd: string, extra: Record<string, string>): WineProcess => {
    const base = join(work, `run-${++n}`);
    const stdout = openSync(`${base}.out`, 'w');
    const stderr = openSync(`${base}.err`, 'w');
    const [file, argv] = inRoot(command, cwd);
    const child = spawn(file, argv, { env: { ...env, ...extra }, stdio: ['ignore', stdout, stderr] });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    const done = new Promise<WineRun>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (status, signal) => {
        clearTimeout(timer);
        closeSync(stdout);
        closeSync(stderr);
        resolve({ status, signal, stdout: readFileSync(`${base}.out`, 'utf8'), stderr: readFileSync(`${base}.err`, 'utf8') });
      });
    });
    return { child, done };
  };
  const start = (args: readonly string[], cwd: string, extra: Record<string, string> = {}) => launch([LOADER, exe, ...args], cwd, extra);
  const startUnderParent = (args: readonly string[], cwd: string, extra: Record<string, string> = {}): WineParentedProcess => {
    // start.exe hands the program to a new Linux process (not a child of ours): a mark in the environment finds it.
    const mark = `signgate-wine-run-${randomUUID()}`;
    // start.exe starts the program in a folder of its own choosing unless /d names one.
    const { done } = launch([LOADER, 'start', '/d', zPath(cwd), '/wait', '/b', '/unix', exe, ...args], cwd, { ...extra, SIGNGATE_WINE_RUN: mark });
    let ended: WineRun | undefined;
    void done.then((run) => (ended = run));
    const program = () =>
      waitFor<number>(
        `the Windows program of run ${mark} to start`,
        () => {
          const pid = findProgram(mark);
          if (pid !== undefined) return { done: true, value: pid };
          if (ended)
            throw new WaitError(
              `the run ended (exit code ${ended.status}) before its Windows program was found; its error output: ${ended.stderr.slice(-2000)}`,
            );
          return { done: false, seen: 'no process with the mark in its environment' };
        },
        { intervalMs: 100 },
      );
    return { done, program };
  };
  return {
    close: async () => {
      await exec([LOADER.replace(/wine64$/, 'wineserver'), '-k']).catch(() => {});
      rmSync(work, { recursive: true, force: true });
    },
    driveC: join(prefix, 'drive_c'),
    exe,
    version,
    start,
    startUnderParent,
    run: (args, cwd, extra) => start(args, cwd, extra).done,
  };
}

/** The Linux process of the Windows program (not of start.exe) whose environment carries `mark`. */
function findProgram(mark: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`SIGNGATE_WINE_RUN=${mark}`)) continue;
      // Wine shows a Windows process's command line as its own: the program's begins with its own path (start.exe's
      // with start.exe's, the program's path being an argument there).
      const command = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      if (/^(?:"[a-z]:\\[^"]*|[a-z]:\\[^ "\0]*)signgate-win-x64\.exe\b/i.test(command)) return Number(entry);
    } catch {
      // The process ended, or is not ours to read.
    }
  }
  return undefined;
}
