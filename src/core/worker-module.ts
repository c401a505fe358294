// Where the compiled module a worker thread runs lives. Run from the TypeScript sources (as the tests run), the
// worker runs the same module from dist/, which `npm test` and `npm run build` compile first.
import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { isSea } from 'node:sea';
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
 * The path of `name`.js beside the module at `importMetaUrl`, or of its compiled copy in dist/ when that module
 * is a .ts source.
 * @throws Error naming the missing file and the build to run
 */
export function workerModulePath(importMetaUrl: string, name: string, extension = '.js'): string {
  const sibling = fileURLToPath(new URL(`./${name}${extension}`, importMetaUrl));
  if (!fileURLToPath(importMetaUrl).endsWith('.ts')) return sibling;
  const at = Math.max(sibling.lastIndexOf('/src/'), sibling.lastIndexOf('\\src\\'));
  const compiled = at < 0 ? sibling : `${sibling.slice(0, at + 1)}dist${sibling.slice(at + 4)}`;
  if (!existsSync(compiled)) throw new Error(`${compiled} is missing: run \`npm run build\` before running signgate from its sources`);
  return compiled;
}

/**
 * Piscina's `filename` and `workerData` for a pool whose threads run the default export of the ES module at
 * `taskModulePath`: the threads load a small CommonJS entry (worker-entry.cts) that imports the task module.
 */
export function piscinaTask(taskModulePath: string): { filename: string; workerData: { module: string } } {
  return { filename: workerModulePath(import.meta.url, 'worker-entry', '.cjs'), workerData: { module: pathToFileURL(taskModulePath).href } };
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
