// The pipeline's rounds: parse, then facts and verdicts. For many files the per-file work runs in a pool of worker
// threads (piscina, one per idle core; see pool.ts) from CHECK_POOL_THRESHOLD files on, the set rules and the
// report on the calling thread. Two rounds: the threads parse every file (references, vendor types, File table), the
// calling thread works out the roles (use of the vendor API is transitive, companions serve other files), then the
// threads run the file rules (and read the audit's evidence) of the files whose metadata the rules read. Same result, byte for byte, as runCheck and
// buildAudit in the calling thread.
// The same two rounds run in the calling thread for inputs read on demand (runCheckInRounds, buildAuditInRounds):
// a file is read when it is parsed and again when it is checked, and only plain data is kept between, so memory
// does not grow with the set.
import type { SeveritySetting } from '../../core/diagnostic.js';
import { taskRunSize } from '../../core/worker-module.js';
import { assembleAudit, buildAudit } from '../../audit/build.js';
import type { AuditEvidence } from '../../audit/evidence.js';
import type { AuditOptions, AuditReport } from '../../audit/model.js';
import { fileParser, fromParsedData, placeFiles, type ParsedFileData } from '../../rules/facts.js';
import { assembleCheck, checkFile, resolveSeverities, ruleNeighbourhood, runCheck, type CheckOptions, type CheckResult, type FileOutcome } from '../../rules/runner.js';
import type { CheckInput, CheckSettings, FileFacts } from '../../rules/types.js';
import { checkThreads, type PoolOptions } from '../pool-thresholds.js';
import { inThisThread, openPool, type Runner } from './pool.js';
import { placedFacts, settleTask, type CheckAnswer, type CheckedFile, type CheckItem, type PlacedFile } from './worker.js';

/** What the pipeline produces for its consumer: check results (check, sign) or audit records (audit). */
export interface Products {
  readonly 'check-results': CheckResult;
  readonly 'audit-records': AuditReport;
}
export type Product = keyof Products;

/** What the rounds run with, as the consumer says once the inputs are read. */
export interface RoundOptions {
  /** The settings and rule severities; `inputs` (default: all that were read) when the consumer leaves some out. */
  readonly 'check-results': CheckOptions & { readonly inputs?: readonly CheckInput[] };
  /** The settings, jobs, record, manifest and previous report of the audit. */
  readonly 'audit-records': AuditOptions;
}

/**
 * The pipeline's parse, facts and verdicts for `inputs`: in the calling thread in one pass when they are held and
 * no thread runs (see checkThreads), in two rounds in the calling thread when they are read on demand, else in two
 * rounds in a pool of worker threads. The result is the same, byte for byte.
 */
export async function runRounds<P extends Product>(product: P, inputs: readonly CheckInput[], options: RoundOptions[P], place: { readonly threads?: number | undefined; readonly onDemand: boolean }): Promise<Products[P]> {
  const audit = product === 'audit-records';
  const threads = place.onDemand ? 0 : checkThreads(inputs.length, place.threads);
  if (!place.onDemand && threads === 0) return (audit ? buildAudit(inputs, options as AuditOptions) : runCheck(inputs, options)) as Products[P];
  const runner = place.onDemand ? inThisThread() : await openPool(threads);
  try {
    return (await (audit ? auditRounds(inputs, options as AuditOptions, runner) : checkRounds(inputs, options, runner))) as Products[P];
  } finally {
    await runner.close();
  }
}

/** runCheck, with the per-file work in worker threads when there are enough files (see checkThreads). */
export function runCheckPooled(inputs: readonly CheckInput[], options: CheckOptions & PoolOptions): Promise<CheckResult> {
  return runRounds('check-results', inputs, options, { threads: options.threads, onDemand: false });
}

/** buildAudit, with the per-file work (hashes, signatures, rules) in worker threads when there are enough files. */
export function buildAuditPooled(inputs: readonly CheckInput[], options: AuditOptions & PoolOptions): Promise<AuditReport> {
  return runRounds('audit-records', inputs, options, { threads: options.threads, onDemand: false });
}

/**
 * runCheck in the calling thread for inputs read on demand (see readCheckInputs): the two rounds of the pool, one
 * file at a time, so that no file is held longer than its parse or its check. The result is runCheck's.
 */
export function runCheckInRounds(inputs: readonly CheckInput[], options: CheckOptions): Promise<CheckResult> {
  return runRounds('check-results', inputs, options, { onDemand: true });
}

/** buildAudit in the calling thread for inputs read on demand, as runCheckInRounds. The report is buildAudit's. */
export function buildAuditInRounds(inputs: readonly CheckInput[], options: AuditOptions): Promise<AuditReport> {
  return runRounds('audit-records', inputs, options, { onDemand: true });
}

async function checkRounds(inputs: readonly CheckInput[], options: CheckOptions, runner: Runner): Promise<CheckResult> {
  const { facts, checked } = await checkInRounds(inputs, options.settings, options.severities, false, runner);
  return assembleCheck(facts, outcomesOf(checked), options);
}

async function auditRounds(inputs: readonly CheckInput[], options: AuditOptions, runner: Runner): Promise<AuditReport> {
  const { facts, checked } = await checkInRounds(inputs, options.settings, undefined, true, runner);
  const check = assembleCheck(facts, outcomesOf(checked), { settings: options.settings });
  return assembleAudit(inputs, facts, check, new Map([...checked].map(([path, c]) => [path, c.evidence as AuditEvidence])), options);
}

function outcomesOf(checked: ReadonlyMap<string, CheckedFile>): Map<string, FileOutcome> {
  return new Map([...checked].map(([path, c]) => [path, c.outcome]));
}

/** Like Promise.all, but waits for every task before it throws the first error: the pool is destroyed only when idle. */
async function settled<T>(tasks: readonly Promise<CheckAnswer<T>>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => settleTask((r as PromiseFulfilledResult<CheckAnswer<T>>).value));
}

/** Runs of consecutive items, one per pool task (see taskRunSize). */
function runsOf<T>(items: readonly T[], threads: number): T[][] {
  const size = taskRunSize(items.length, threads);
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += size) runs.push(items.slice(i, i + size));
  return runs;
}

/**
 * Parses in the runner's tasks, places on this thread, then checks in the tasks every file whose metadata the file
 * rules (or the audit) read: every managed file (SG802 reads the strong name of those not uploaded too), or every
 * file (runner.everyFile); the others (native, unreadable) are checked here, where their rules read only what the
 * parse returned.
 */
async function checkInRounds(inputs: readonly CheckInput[], settings: CheckSettings, severities: Readonly<Record<string, SeveritySetting>> | undefined, audit: boolean, runner: Runner) {
  const { threads } = runner;
  const parsed = (await settled(runsOf(inputs, threads).map((run) => runner.run<ParsedFileData[]>({ kind: 'parse', settings, inputs: run })))).flat();
  const placements = placeFiles(inputs, parsed.map(fromParsedData), settings);
  const placed = new Map<string, PlacedFile>(inputs.map((input, i) => [input.path, { input, parsed: parsed[i]!, placement: placements[i]! }]));
  const parse = fileParser(settings);
  const facts = new Map<string, FileFacts>([...placed].map(([path, p]) => [path, placedFacts(p, parse)]));
  // Every managed file: SG802 reads the strong name of the files that are not uploaded too.
  const inPool = (f: PlacedFile) => runner.everyFile || audit || f.parsed.managed;
  const items: CheckItem[] = [...placed.values()].filter(inPool).map((p) => ({ ...p, netmodules: p.placement.netmodules.flatMap((l) => (l.path === undefined ? [] : [placed.get(l.path)!])) }));
  const results = await settled(runsOf(items, threads).map((run) => runner.run<CheckedFile[]>({ kind: 'check', settings, ...(severities ? { severities } : {}), audit, items: run })));
  const checked = new Map<string, CheckedFile>(results.flat().map((c, i) => [items[i]!.input.path, c]));
  const resolved = resolveSeverities(severities);
  for (const f of facts.values()) if (!checked.has(f.input.path)) checked.set(f.input.path, { outcome: checkFile(f, ruleNeighbourhood(f, facts), settings, resolved) });
  return { facts, checked };
}
