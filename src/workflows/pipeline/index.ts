// The pipeline that `check`, `audit` (and `audit --verify-report`) and the pre-flight of `sign` stand on, and its one
// entry point for the other workflows:
//
//   inputs → read (held, shared with worker threads, or on demand) → parse → facts → verdicts
//
// settings.ts   the options over signgate.config.json, the keys, the service address and token
// inputs.ts     the inputs expanded into files and read with their upload names (held, shared or on demand), and
//               the vendor attribute types that vendor API assemblies among them and the references declare
// rounds.ts     parse, then facts and verdicts in two rounds, for a pool or for inputs read on demand
// pool.ts       where the rounds' tasks run: a pool of worker threads, or the calling thread
// worker.ts     one task of a round (the module that worker threads load from dist/)
// heap.ts       V8's heap held small for a process that checks a large set and exits (the command line)
//
// A consumer calls runPipeline with what it reads (the options, or files with no settings) and what it wants
// (check results or audit records); its `prepare` says, once the inputs are read, what the rounds run with (the
// licenses fetched online, the ledger's jobs, the signature record).
import type { CheckInput } from '../../rules/types.js';
import { readFiles, type FileSource, type PreparedCheck, type ReadChoice, type ReadFiles } from './inputs.js';
import type { Product, Products, RoundOptions } from './rounds.js';
import { prepareSettings, type CheckOptions, type PreparedSettings } from './settings.js';

export { DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_READ_AT_ONCE_BYTES, prepareSettings, type CheckOptions, type PreparedSettings } from './settings.js';
export { inputReading, readCheckInputs, readFiles, withDeclaredVendorAttributes, type FileSource, type InputReading, type PreparedCheck, type ReadChoice, type ReadFiles } from './inputs.js';
export type { Product, Products, RoundOptions } from './rounds.js';
export { keepHeapSmall } from '../../runtime/heap.js';
export { checkThreads, CHECK_POOL_THRESHOLD, type PoolOptions } from '../pool-thresholds.js';

export interface PipelineConsumer<P extends Product, R extends ReadFiles> {
  readonly produce: P;
  /**
   * `bounded` (the default: check, audit): inputs in shared memory for worker threads, or read on demand when they
   * are larger together than `readAtOnceBytes`. `held`: into memory, checked in the calling thread (sign and pack
   * upload or archive the bytes they checked).
   */
  readonly reading?: 'bounded' | 'held';
  /** Called once the inputs are read, before any is parsed. */
  readonly prepare: (read: R) => RoundOptions[P] | Promise<RoundOptions[P]>;
}

/** What was read, and what the rounds made of it. */
export interface PipelineRun<P extends Product, R extends ReadFiles> {
  readonly read: R;
  readonly result: Products[P];
}

/**
 * Runs the pipeline: reads the inputs (the options over signgate.config.json, or `files` with no settings), asks
 * the consumer what the rounds run with, and produces check results or audit records: in the calling thread when
 * the inputs are held, in two rounds when they are read on demand, in worker threads when the pool runs. The result
 * is the same, byte for byte, whichever way it ran.
 * @throws UsageError for bad options; SignGateError SG_ERR_NO_INPUT / SG_ERR_IO_READ; what `prepare` throws
 */
export async function runPipeline<P extends Product>(source: { readonly options: CheckOptions }, consumer: PipelineConsumer<P, PreparedCheck>): Promise<PipelineRun<P, PreparedCheck>>;
export async function runPipeline<P extends Product>(source: { readonly files: FileSource }, consumer: PipelineConsumer<P, ReadFiles>): Promise<PipelineRun<P, ReadFiles>>;
export async function runPipeline<P extends Product>(source: { readonly options: CheckOptions } | { readonly files: FileSource }, consumer: PipelineConsumer<P, PreparedCheck> | PipelineConsumer<P, ReadFiles>): Promise<PipelineRun<P, ReadFiles>> {
  const bounded = consumer.reading !== 'held';
  const choice = { forPool: bounded, onDemand: bounded };
  const { files, prepared } = 'options' in source ? fromOptions(source.options) : { files: source.files, prepared: undefined };
  const read = await readFiles(files, choice, prepared);
  const { inputs = read.inputs, ...options } = (await (consumer.prepare as (read: ReadFiles) => RoundOptions[P] | Promise<RoundOptions[P]>)(read)) as RoundOptions[P] & { readonly inputs?: readonly CheckInput[] };
  const { runRounds } = await import('./rounds.js');
  // Held inputs are checked in the calling thread, whatever `threads` says.
  return { read, result: await runRounds(consumer.produce, inputs, options as RoundOptions[P], bounded ? read : { threads: 0, onDemand: false }) };
}

/**
 * Everything a check needs: prepareSettings, then the inputs read with their upload names (see readFiles), as
 * runPipeline reads them for check(), sign() and audit(); pack() checks what this returns. With `forPool`, when the check will run in worker
 * threads (see checkThreads), the files are read into shared memory; with `onDemand`, a large set is read on demand.
 * @throws UsageError SG_ERR_USAGE / SG_ERR_CONFIG / SG_ERR_NO_INPUT; SignGateError SG_ERR_IO_READ; KeyError
 */
export async function prepareCheck(options: CheckOptions, read: ReadChoice = {}): Promise<PreparedCheck> {
  const { files, prepared } = fromOptions(options);
  return readFiles(files, read, prepared);
}

/** The settings of the options (see prepareSettings), and the files they name to read. */
function fromOptions(options: CheckOptions): { readonly files: FileSource; readonly prepared: PreparedSettings } {
  const prepared = prepareSettings(options, true);
  return { files: { paths: prepared.paths, root: prepared.root, threads: options.threads, readAtOnceBytes: options.readAtOnceBytes }, prepared };
}
