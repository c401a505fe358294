// `inspect` and `verify` over many files: in the calling thread for a few files, in a pool of worker threads
// (piscina, one per core) above SCAN_POOL_THRESHOLD files. Records come back one by one, in the order of the
// files, so that a caller can print each as it comes instead of holding them all.
import { availableParallelism } from 'node:os';
import { workerModulePath, workerThreadsAvailable } from '../core/worker-module.js';
import { scanners, type ScanInput, type ScanKind, type ScanRecord, type ScanSettings } from './scan-file.js';
import type { ScanTask } from './scan-worker.js';

export { inspectFile, verifyFile, type ScanInput, type ScanKind, type ScanRecord, type ScanSettings, type VerifyRecord } from './scan-file.js';

/**
 * From this many files on, a scan runs in worker threads by default. Measured on a 2-core machine with
 * `node scripts/bench-scan-threshold.js`: below it, starting the threads (about 40 ms) costs more than the
 * second core gives back.
 */
export const SCAN_POOL_THRESHOLD = 200;

export interface ScanOptions extends ScanSettings {
  /** Worker threads; 0 scans in the calling thread. Default: one per core from SCAN_POOL_THRESHOLD files on, else 0. */
  readonly threads?: number;
}

/** How many threads a scan of `count` files uses (none inside a one-file executable). */
export function scanThreads(count: number, threads?: number): number {
  if (!workerThreadsAvailable()) return 0;
  if (threads !== undefined) {
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number of at least 0, not ${threads}`);
    return Math.min(threads, Math.max(count, 1));
  }
  return count >= SCAN_POOL_THRESHOLD ? availableParallelism() : 0;
}

/** Scans `files` (see inspectFile and verifyFile); yields one record per file, in order. */
export async function* scanFiles<K extends ScanKind>(kind: K, files: readonly ScanInput[], options: ScanOptions = {}): AsyncGenerator<ScanRecord<K>> {
  const settings: ScanSettings = {
    ...(options.verify === undefined ? {} : { verify: options.verify }),
    ...(options.keyMap ? { keyMap: options.keyMap } : {}),
    ...(options.expectedKey ? { expectedKey: options.expectedKey } : {}),
    ...(options.authenticode ? { authenticode: true } : {}),
    ...(options.trustStore ? { trustStore: options.trustStore } : {}),
  };
  const threads = scanThreads(files.length, options.threads);
  const scan = scanners[kind] as (file: ScanInput, settings: ScanSettings) => ScanRecord<K>;
  if (threads === 0) {
    for (const file of files) yield scan(file, settings);
    return;
  }
  // Loaded only here: a scan of a few files starts no faster with piscina loaded. A young generation of 8 MB
  // per thread (V8's default is 16 or more) keeps the peak RSS of a 2,600-file scan near 180 MB, at the same CPU.
  const { Piscina } = await import('piscina');
  const pool = new Piscina<ScanTask, ScanRecord<K>[]>({ filename: workerModulePath(import.meta.url, 'scan-worker'), minThreads: threads, maxThreads: threads, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  // Runs of consecutive files, small enough that the threads finish together, large enough to keep messages few.
  const size = Math.min(32, Math.max(4, Math.ceil(files.length / (threads * 8))));
  let next = 0;
  const pending: Promise<ScanRecord<K>[]>[] = [];
  // A few runs per thread in flight: the threads never wait, and records not yet printed stay few.
  const fill = () => {
    while (next < files.length && pending.length < threads * 2) {
      const task = pool.run({ kind, files: files.slice(next, next + size).map((f) => ({ absolutePath: f.absolutePath, displayPath: f.displayPath })), settings });
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
    await pool.destroy();
  }
}
