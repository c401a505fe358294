// Where the compiled module a worker thread runs lives. Run from the TypeScript sources (as the tests run), the
// worker runs the same module from dist/, which `npm test` and `npm run build` compile first.
// A process helper that reads the file system (test/architecture-fs.test.ts lists it): whether the compiled module is
// there (else the error names the build to run), and the threads runnable now from /proc.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { isSea } from 'node:sea';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Whether worker threads can load our modules: not inside a one-file executable (scripts/build-sea.js), whose
 * code is one bundled script with no module files beside it. There, work that would go to threads runs in the
 * calling thread.
 */
export function workerThreadsAvailable(): boolean {
  return !isSea();
}

/**
 * The compiled package's root folder (dist/), from this module's place: dist/runtime/ when run from dist, a chunk in
 * dist/cli-bundle/ when run from the bundled command line (scripts/bundle-cli.js), src/runtime/ when run from the
 * TypeScript sources (as the tests run), where the compiled copy in dist/ is meant.
 */
function compiledRoot(): string {
  const root = fileURLToPath(new URL('../', import.meta.url));
  if (!fileURLToPath(import.meta.url).endsWith('.ts')) return root;
  return join(dirname(root.replace(/[\\/]+$/, '')), 'dist');
}

/**
 * The path of the compiled module `module` (a path below dist/ without its extension, e.g. `engine/thread`)
 * that a worker thread loads. Worker threads always load the module files of dist/, also when the command line
 * runs bundled.
 * @throws Error naming the missing file and the build to run
 */
export function workerModulePath(module: string, extension = '.js'): string {
  const path = join(compiledRoot(), `${module}${extension}`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` before running signgate from its sources`);
  return path;
}

/**
 * Piscina's `filename` and `workerData` for a pool whose threads run the default export of the ES module at
 * `taskModulePath`: the threads load a small CommonJS entry (worker-entry.cts) that imports the task module.
 */
export function piscinaTask(taskModulePath: string): { filename: string; workerData: { module: string } } {
  return { filename: workerModulePath('runtime/worker-entry', '.cjs'), workerData: { module: pathToFileURL(taskModulePath).href } };
}

/**
 * Cores no other process keeps busy: the cores less the load average of the last minute (Windows reports no
 * load: all cores). On a machine already busy with a parallel build, more threads only add their start-up.
 */
export function idleCores(): number {
  const cores = availableParallelism();
  return Math.max(0, Math.min(cores, Math.round(cores - loadavg()[0]!)));
}

/**
 * Cores no other thread of the machine wants at this moment. On Linux, from the number of threads runnable now
 * (`/proc/loadavg`'s fourth field, this one included), not from the load average: the last minute's average still
 * counts a build step that has just ended, and counts a parallel build that has just begun as less than it is,
 * while a build running on every core keeps its compilers runnable and leaves none idle here. Elsewhere (no
 * /proc), the load average of the last minute as idleCores (Windows reports no load: all cores).
 */
export function idleCoresNow(): number {
  const cores = availableParallelism();
  let text: string;
  try {
    text = readFileSync('/proc/loadavg', 'latin1');
  } catch {
    return idleCores();
  }
  const runnable = Number(/^\S+ \S+ \S+ (\d+)\//.exec(text)?.[1]);
  if (!Number.isInteger(runnable)) return idleCores();
  return Math.max(0, Math.min(cores, cores - Math.max(0, runnable - ownRunnableThreads())));
}

/**
 * This process's threads runnable now (at least this one): V8 compiles and collects garbage in threads of its own,
 * which must not count as another program's load. From /proc/self/task/<id>/stat, whose third field is the state.
 */
function ownRunnableThreads(): number {
  let running = 0;
  try {
    for (const id of readdirSync('/proc/self/task')) {
      try {
        if (/^\d+ \(.*\) R /s.test(readFileSync(`/proc/self/task/${id}/stat`, 'latin1'))) running++;
      } catch {
        // the thread has ended since the folder was read
      }
    }
  } catch {
    return 1;
  }
  return Math.max(1, running);
}

/**
 * How many threads a pool for `count` files uses (none inside a one-file executable): `threads` when given, else
 * one per idle core from `threshold` files on when at least two cores are idle (each command has its threshold).
 */
export function poolThreads(count: number, threads: number | undefined, idle: number = idleCores(), threshold: number): number {
  if (!workerThreadsAvailable()) return 0;
  if (threads !== undefined) {
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, not ${threads}`);
    return Math.min(threads, Math.max(count, 1));
  }
  return count >= threshold && idle >= 2 ? idle : 0;
}

/**
 * How many consecutive items one pool task takes: small enough that the threads finish together (about eight
 * tasks per thread), large enough to keep messages few (4 to 32).
 */
export function taskRunSize(count: number, threads: number): number {
  return Math.min(32, Math.max(4, Math.ceil(count / (threads * 8))));
}
