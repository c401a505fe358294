// `inspect` and `verify` over many files: in the calling thread for a few files; from SCAN_POOL_THRESHOLD files on,
// when cores are idle, in the calling thread and worker threads beside it. Records come back one
// by one, in the order of the files, so that a caller can print each as it comes instead of holding them all.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { reapplyV8Flags } from '../runtime/v8-flags.js';
import { idleCoresNow, poolThreads, taskRunSize, workerModulePath } from '../runtime/worker-module.js';
import { SCAN_POOL_THRESHOLD } from './pool-thresholds.js';
import { scanJson, scanners, type ScanInput, type ScanJson, type ScanKind, type ScanRecord, type ScanSettings } from './scan-file.js';
import type { ScanAnswer, ScanMessage, ScanTask } from './scan-thread.js';

export { idleCores, idleCoresNow } from '../runtime/worker-module.js';
export { SCAN_POOL_THRESHOLD } from './pool-thresholds.js';
export { inspectFile, verifyFile, type ScanJson, type ScanInput, type ScanKind, type ScanRecord, type ScanSettings, type VerifyRecord } from './scan-file.js';

export interface ScanOptions extends ScanSettings {
  /**
   * Worker threads beside the calling thread, which scans files too; 0 scans in the calling thread alone. Default:
   * from SCAN_POOL_THRESHOLD files on, one per core idle at this moment (idleCoresNow) beside the one the calling
   * thread takes; else 0.
   */
  readonly threads?: number;
}

/**
 * How many worker threads a scan of `count` files uses (none inside a one-file executable): `threads` when given,
 * else, from SCAN_POOL_THRESHOLD files on, one per idle core but the one the calling thread scans on.
 * @param idle cores idle now (default idleCoresNow())
 */
export function scanThreads(count: number, threads?: number, idle: number = idleCoresNow()): number {
  return threads === undefined
    ? Math.max(0, poolThreads(count, undefined, idle, SCAN_POOL_THRESHOLD) - 1)
    : poolThreads(count, threads, idle, SCAN_POOL_THRESHOLD);
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
  const scanRun = (from: number, to: number): T[] => {
    const out: T[] = [];
    for (let i = from; i < to; i++) out.push((json ? scanJson(one(files[i]!, settings)) : one(files[i]!, settings)) as T);
    return out;
  };
  if (threads === 0) {
    for (const file of files) yield (json ? scanJson(one(file, settings)) : one(file, settings)) as T;
    return;
  }
  // A young generation of 8 MB per thread (V8's default is 16 or more) keeps the peak RSS of a 2,600-file scan
  // low, at the same CPU. The threads are plain worker threads running scan-thread.ts: a pool library took longer
  // to load (about 0.1 s on a busy machine) than this thread needs to scan a hundred files.
  const entry = pathToFileURL(workerModulePath('workflows/scan-thread'));
  // A run a thread failed, or a thread that stopped; none once the threads are being ended below (they end where
  // they are, and a run this thread has scanned itself may still be answered).
  let failure: unknown;
  let closing = false;
  const failed = (error: unknown) => {
    if (!closing) failure ??= error;
  };
  const waiting = new Map<number, { resolve: (records: T[]) => void; reject: (error: unknown) => void }>();
  const workers = Array.from({ length: threads }, () => {
    const worker = new Worker(entry, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
    // The thread's start set V8's flags back (see reapplyV8Flags): set them again once it runs, or once it has
    // ended when it was ended before it ran.
    worker.once('online', reapplyV8Flags);
    worker.once('exit', reapplyV8Flags);
    worker.on('message', (answer: ScanAnswer) => {
      const task = waiting.get(answer.id);
      waiting.delete(answer.id);
      if ('records' in answer) task?.resolve(answer.records as T[]);
      else task?.reject(answer.error);
    });
    // A thread that fails or stops fails the runs it has, so that nothing waits for them.
    const stopped = (error: unknown) => {
      if (closing) return;
      failed(error);
      for (const task of waiting.values()) task.reject(error);
      waiting.clear();
    };
    worker.on('error', stopped);
    worker.on('exit', (code) => stopped(new Error(`a scan worker thread stopped (exit code ${code})`)));
    // Kept alive only while it has runs: a caller that leaves the records unread does not keep the process alive.
    worker.unref();
    return { worker, inFlight: 0 };
  });
  let ids = 0;
  const run = (task: ScanTask): Promise<T[]> => {
    const thread = workers.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));
    if (thread.inFlight++ === 0) thread.worker.ref();
    const id = ids++;
    return new Promise<T[]>((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      thread.worker.postMessage({ id, task } satisfies ScanMessage);
    }).finally(() => {
      if (--thread.inFlight === 0) thread.worker.unref();
    });
  };
  // Runs of consecutive files, small enough that the threads finish together, large enough to keep messages few.
  // This thread scans runs too: it has its code loaded and compiled, while a worker thread starts cold (about
  // 0.1 s to load the modules, then its JIT warms up); the records are yielded in the order of the files.
  const size = taskRunSize(files.length, threads + 1);
  const runs = Math.ceil(files.length / size);
  const done: (T[] | undefined)[] = new Array(runs);
  // Runs handed to the threads and not answered yet; those this thread has scanned itself meanwhile.
  const inPool = new Map<number, Promise<void>>();
  const scannedHere = new Set<number>();
  let next = 0;
  let answered = false;
  // A few runs per thread in flight: the threads never wait, and records not yet printed stay few.
  const fill = () => {
    while (next < runs && inPool.size < threads * 2) {
      const i = next++;
      const task = run({
        kind,
        files: files.slice(i * size, (i + 1) * size).map((f) => ({ absolutePath: f.absolutePath, displayPath: f.displayPath })),
        settings,
        json,
      })
        .then((records) => {
          answered = true;
          if (!scannedHere.has(i)) done[i] = records;
        })
        .finally(() => inPool.delete(i));
      task.catch(failed);
      inPool.set(i, task);
    }
  };
  try {
    for (let head = 0; head < runs; head++) {
      fill();
      while (done[head] === undefined) {
        if (failure) throw failure;
        if (next < runs && next - head <= MAX_RUNS_AHEAD) {
          // The next run in line is in a thread: scan the one after it here, then take in what the threads answered.
          const i = next++;
          done[i] = scanRun(i * size, Math.min(files.length, (i + 1) * size));
          await new Promise(setImmediate);
          fill();
        } else if (answered) {
          await inPool.get(head)?.catch(() => {});
        } else {
          // No thread has answered yet (they are still starting): this thread scans the run rather than wait.
          scannedHere.add(head);
          done[head] = scanRun(head * size, Math.min(files.length, (head + 1) * size));
        }
      }
      const records = done[head]!;
      done[head] = undefined;
      yield* records;
    }
  } finally {
    // Stopped early, or runs scanned here that a thread still has: the threads end where they are.
    closing = true;
    await Promise.all(workers.map((w) => w.worker.terminate()));
  }
}

/** How many runs this thread scans ahead of the next one to print while that one is in a worker thread. */
const MAX_RUNS_AHEAD = 16;
