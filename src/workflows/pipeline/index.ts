// What check, audit (and `audit --verify-report`), sign and pack prepare before the engine (src/engine/) runs, and
// the runner the engine runs on. Each workflow reads as a sequence: prepare (this) → licenses → engine → report.
//
// settings.ts           the options over signgate.config.json, the keys, the service address
// read-files.ts         the inputs expanded (../input-paths.ts) and read (../files.ts) with their upload names: held,
//                       shared with worker threads, or read when the engine needs them
// vendor-attributes.ts  the vendor attribute types that vendor API assemblies among them and the references declare
import { inPool, inThisThread, type Runner } from '../../engine/index.js';
import { readFiles, type PreparedCheck, type ReadChoice, type ReadFiles } from './read-files.js';
import { prepareSettings, type CheckOptions } from './settings.js';

export { DEFAULT_MAX_UPLOAD_BYTES, prepareSettings, type CheckOptions, type PreparedSettings } from './settings.js';
export { readFiles, type PreparedCheck, type ReadChoice, type ReadFiles } from './read-files.js';
export { inputReading } from '../files.js';
export { withDeclaredVendorAttributes } from './vendor-attributes.js';
export { keepHeapSmall } from '../../runtime/heap.js';
export { checkThreads, CHECK_POOL_THRESHOLD } from '../pool-thresholds.js';

/**
 * How check and audit read: into shared memory when worker threads will run (see checkThreads), on demand when the
 * set is larger than `readAtOnceBytes`, else into memory. Sign and pack hold what they read (`{}`): they upload or
 * archive the bytes they checked.
 */
export const BOUNDED: ReadChoice = { forPool: true, onDemand: true };

/**
 * Everything a check needs: prepareSettings, then the inputs read with their upload names (see readFiles).
 * @throws UsageError SG_ERR_USAGE / SG_ERR_CONFIG / SG_ERR_NO_INPUT; SignGateError SG_ERR_IO_READ; KeyError
 */
export async function prepareCheck(options: CheckOptions, read: ReadChoice = {}): Promise<PreparedCheck> {
  const prepared = prepareSettings(options, true);
  return readFiles({ paths: prepared.paths, root: prepared.root, threads: options.threads, readAtOnceBytes: options.readAtOnceBytes }, read, prepared);
}

/**
 * Where the engine runs for inputs read this way: this thread for inputs held or read on demand, a pool of worker
 * threads for inputs in shared memory.
 */
export async function engineRunner(read: Pick<ReadFiles, 'threads' | 'onDemand'>): Promise<Runner> {
  return !read.onDemand && read.threads > 0 ? inPool(read.threads) : inThisThread();
}
