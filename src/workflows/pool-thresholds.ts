// From how many files on the commands use worker threads, apart from the pools themselves (scan.ts, engine/runner.ts),
// so that a command of a few files, and its --help, decide without loading the pools' modules.
import { poolThreads } from '../runtime/worker-module.js';

/**
 * From this many files on, a scan may run in worker threads by default. `node scripts/bench-scan-threshold.js`
 * measures where the pool starts to pay; each thread loads the code and warms its JIT up again (about 0.3 s of
 * CPU more for a 2,600-file inspect), so it pays only for hundreds of files and only with cores to spare.
 */
export const SCAN_POOL_THRESHOLD = 200;

/**
 * From this many files on, check and audit may run in worker threads by default (and only with two idle cores).
 * Measured with `node scripts/bench-scan-threshold.js --mode check` (Mono corpus, vendor Mono, 2 shared cores,
 * load averages of 1.4 to 10): two threads cost about 0.2 s of CPU to start (each loads the code and warms its
 * JIT up) and 20–40% more CPU per file (a second parse of the files the rules read, garbage collection in 8 MB
 * young generations). CPU ratio --threads 2 / --threads 0, check: 1.57–1.83x at 100 files, 1.47–1.83x at 400,
 * 1.20–1.35x at 1,600, 1.29–1.52x at 2,629 (audit alike); wall time never fell below --threads 0 on these
 * 2 busy cores. Estimate for two idle cores: the per-file work is about half of a check (0.45 ms per file; the
 * rest is reading, start-up and the report), so two threads at 1.3x its CPU win back their start-up from about
 * 650 files on. On the quiet machine (`npm run bench`, load average 1.6) that estimate did not hold: over all
 * 2,629 files `check --threads 2` took 1.19x and `audit --threads 2` 1.11x the time of one thread (the reading of
 * the files, the set rules and the report stay on the calling thread). So the default uses threads only beyond the
 * largest set measured; `--threads` chooses for a given build (docs/performance.md).
 */
export const CHECK_POOL_THRESHOLD = 10_000;

/** How many threads a check or audit of `count` files uses (none inside a one-file executable). */
export function checkThreads(count: number, threads?: number, idle?: number): number {
  return poolThreads(count, threads, idle, CHECK_POOL_THRESHOLD);
}
