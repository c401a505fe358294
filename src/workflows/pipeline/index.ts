// The pipeline that `check`, `audit` (and `audit --verify-report`) and the pre-flight of `sign` stand on, and its one
// entry point for the other workflows:
//
//   inputs → read (held, shared with worker threads, or on demand) → parse → facts → verdicts
//
// settings.ts   the options over signgate.config.json, the keys, the vendor attribute types of the references
// inputs.ts     the inputs expanded into files and read with their upload names (held, shared or on demand)
// rounds.ts     parse, then facts and verdicts in two rounds, for a pool or for inputs read on demand
// pool.ts       where the rounds' tasks run: a pool of worker threads, or the calling thread
// worker.ts     one task of a round (the module that worker threads load from dist/)
//
// A consumer calls runPipeline with what it reads (the options, or files with no settings) and what it wants
// (check results or audit records); its `prepare` says, once the inputs are read, what the rounds run with (the
// licenses fetched online, the ledger's jobs, the signature record).
import type { AuditOptions, AuditReport } from '../../audit/model.js';
import { runCheck, type CheckOptions as RunOptions, type CheckResult } from '../../rules/runner.js';
import type { CheckInput } from '../../rules/types.js';
import { prepareCheck, readFiles, type FileSource, type PreparedCheck, type ReadFiles } from './inputs.js';
import type { CheckOptions } from './settings.js';

export { DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_READ_AT_ONCE_BYTES, prepareSettings, readDeclaredVendorAttributes, type CheckOptions, type PreparedSettings } from './settings.js';
export { inputReading, prepareCheck, readCheckInputs, readFiles, type FileSource, type InputReading, type PreparedCheck, type ReadChoice, type ReadFiles } from './inputs.js';
export { checkThreads, CHECK_POOL_THRESHOLD, type PoolOptions } from '../pool-thresholds.js';

/** What the pipeline produces for its consumer: check results (check, sign) or audit records (audit). */
export interface Products {
  readonly 'check-results': CheckResult;
  readonly 'audit-records': AuditReport;
}
export type Product = keyof Products;

/** What the rounds run with, as the consumer's `prepare` says once the inputs are read. */
export interface RoundOptions {
  /** The settings and rule severities; `inputs` (default: all that were read) when the consumer leaves some out. */
  readonly 'check-results': RunOptions & { readonly inputs?: readonly CheckInput[] };
  /** The settings, jobs, record, manifest and previous report of the audit. */
  readonly 'audit-records': AuditOptions;
}

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
  const read = 'options' in source ? await prepareCheck(source.options, choice) : await readFiles(source.files, choice);
  const options = await (consumer.prepare as (read: ReadFiles) => RoundOptions[P] | Promise<RoundOptions[P]>)(read);
  // Held inputs are checked in the calling thread, whatever `threads` says.
  const where = bounded ? read : { ...read, threads: 0 };
  const result = consumer.produce === 'check-results' ? await checkResults(where, options as RoundOptions['check-results']) : await auditRecords(where, options as RoundOptions['audit-records']);
  return { read, result: result as Products[P] };
}

// The rounds' modules (and the audit's) load only when they run: a check of a few files starts faster without them.

async function checkResults(read: ReadFiles, { inputs = read.inputs, ...options }: RoundOptions['check-results']): Promise<CheckResult> {
  if (read.threads === 0 && !read.onDemand) return runCheck(inputs, options);
  const rounds = await import('./rounds.js');
  return read.onDemand ? rounds.runCheckInRounds(inputs, options) : rounds.runCheckPooled(inputs, { ...options, threads: read.threads });
}

async function auditRecords(read: ReadFiles, options: AuditOptions): Promise<AuditReport> {
  const rounds = await import('./rounds.js');
  return read.onDemand ? rounds.buildAuditInRounds(read.inputs, options) : rounds.buildAuditPooled(read.inputs, { ...options, threads: read.threads });
}
