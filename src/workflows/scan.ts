// `inspect` and `verify` over many files: in the calling thread for a few files, in a pool of worker threads
// (piscina, one per idle core) from SCAN_POOL_THRESHOLD files on. Records come back one by one, in the order of the
// files, so that a caller can print each as it comes instead of holding them all.
import { piscinaTask, poolThreads, taskRunSize, workerModulePath } from '../core/worker-module.js';
import { SCAN_POOL_THRESHOLD } from './pool-thresholds.js';
import { scanJson, scanners, type ScanInput, type ScanJson, type ScanKind, type ScanRecord, type ScanSettings } from './scan-file.js';
import type { ScanTask } from './scan-worker.js';

export { idleCores } from '../core/worker-module.js';
export { SCAN_POOL_THRESHOLD } from './pool-thresholds.js';
export { inspectFile, verifyFile, scanJson, type ScanJson, type ScanInput, type ScanKind, type ScanRecord, type ScanSettings, type VerifyRecord } from './scan-file.js';

export interface ScanOptions extends ScanSettings {
  /**
   * Worker threads; 0 scans in the calling thread. Default: from SCAN_POOL_THRESHOLD files on, one per idle core
   * when at least two cores are idle, else 0.
   */
  readonly threads?: number;
}

/** How many threads a scan of `count` files uses (see poolThreads; none inside a one-file executable). */
export function scanThreads(count: number, threads?: number, idle?: number): number {
  return poolThreads(count, threads, idle, SCAN_POOL_THRESHOLD);
}

/** Scans `files` (see inspectFile and verifyFile); yields one record per file, in order. */
export function scanFiles<K extends ScanKind>(kind: K, files: readonly ScanInput[], options: ScanOptions = {}): AsyncGenerator<ScanRecord<K>> {
  return scan<K, ScanRecord<K>>(kind, files, options, false);
}

/**
 * Like scanFiles, but yields each record's JSON text (see scanJson), made in the worker threads: what
 * `inspect --json` and `verify --json` print, with no record crossing between threads.
 */
export function scanFilesAsJson(kind: ScanKind, files: readonly ScanInput[], options: ScanOptions = {}): AsyncGenerator<ScanJson> {
  return scan<ScanKind, ScanJson>(kind, files, options, true);
}

async function* scan<K extends ScanKind, T>(kind: K, files: readonly ScanInput[], options: ScanOptions, json: boolean): AsyncGenerator<T> {
  const settings: ScanSettings = {
    ...(options.verify === undefined ? {} : { verify: options.verify }),
    ...(options.keyMap ? { keyMap: options.keyMap } : {}),
    ...(options.expectedKey ? { expectedKey: options.expectedKey } : {}),
    ...(options.authenticode === undefined ? {} : { authenticode: options.authenticode }),
    ...(options.trustStore ? { trustStore: options.trustStore } : {}),
  };
  const threads = scanThreads(files.length, options.threads);
  const one = scanners[kind] as (file: ScanInput, settings: ScanSettings) => ScanRecord<K>;
  if (threads === 0) {
    for (const file of files) yield (json ? scanJson(one(file, settings)) : one(file, settings)) as T;
    return;
  }
  // Loaded only here: a scan of a few files starts no faster with piscina loaded. A young generation of 8 MB
  // per thread (V8's default is 16 or more) keeps the peak RSS of a 2,600-file scan near 180 MB, at the same CPU.
  const { Piscina } = await import('piscina');
  const pool = new Piscina<ScanTask, T[]>({ ...piscinaTask(workerModulePath('workflows/scan-worker')), minThreads: threads, maxThreads: threads, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  // Runs of consecutive files, small enough that the threads finish together, large enough to keep messages few.
  const size = taskRunSize(files.length, threads);
  let next = 0;
  const pending: Promise<T[]>[] = [];
  // A few runs per thread in flight: the threads never wait, and records not yet printed stay few.
  const fill = () => {
    while (next < files.length && pending.length < threads * 2) {
      const task = pool.run({ kind, files: files.slice(next, next + size).map((f) => ({ absolutePath: f.absolutePath, displayPath: f.displayPath })), settings, json });
      task.catch(() => {}); // awaited in order below, unless the caller stops early
      pending.push(task);
      next += size;
    }
  };
  try {
    fill();
    while (pending.length) {
      const records = await pending.shift()!;
      fill();
      yield* records;
    }
  } finally {
    // Stopped early: the runs already handed out finish first. A thread that answers a pool destroyed under it
    // makes piscina throw an uncaught "Unexpected message from Worker".
    await Promise.allSettled(pending);
    await pool.destroy();
  }
}
