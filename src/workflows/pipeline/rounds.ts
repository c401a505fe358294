// The pipeline's rounds: parse, then facts and verdicts, then the product (check results or audit records) made of
// them on the calling thread. Held inputs with no thread are checked in one pass. For many files the per-file work runs in a pool of worker
// threads (piscina, one per idle core; see pool.ts) from CHECK_POOL_THRESHOLD files on, the set rules and the
// report on the calling thread. Two rounds: the threads parse every file (references, vendor types, File table), the
// calling thread works out the roles (use of the vendor API is transitive, companions serve other files), then the
// threads run the file rules (and read the audit's evidence) of the files whose metadata the rules read. Same result, byte for byte, as runCheck and
// buildAudit in the calling thread.
// The same two rounds run in the calling thread for inputs read on demand (runCheckInRounds, buildAuditInRounds):
// a file is read when it is parsed and again when it is checked, and only plain data is kept between, so memory
// does not grow with the set.
import type { SeveritySetting } from '../../core/diagnostic.js';
import { taskRunSize } from '../../runtime/worker-module.js';
import { assembleAudit } from '../../audit/build.js';
import { auditEvidence } from '../../audit/evidence.js';
import type { AuditOptions, AuditReport } from '../../audit/model.js';
import { collectFacts, fileParser, fromParsedData, placeFiles, type ParsedFileData } from '../../rules/facts.js';
import { assembleCheck, checkFile, resolveSeverities, ruleNeighbourhood, type CheckOptions, type CheckResult, type FileOutcome } from '../../rules/runner.js';
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

/** How the rounds serve one product: what each file's check reads, and the result made of them all. */
interface Work<T> {
  readonly settings: CheckSettings;
  readonly severities?: Readonly<Record<string, SeveritySetting>> | undefined;
  /** Each file's audit evidence is read with its file rules. */
  readonly evidence: boolean;
  /** The result, on the calling thread, from the facts of every file and what its check gave. */
  readonly assemble: (facts: ReadonlyMap<string, FileFacts>, checked: ReadonlyMap<string, CheckedFile>) => T;
}

const products: { readonly [P in Product]: (inputs: readonly CheckInput[], options: RoundOptions[P]) => Work<Products[P]> } = {
  'check-results': (_inputs, options) => ({ settings: options.settings, severities: options.severities, evidence: false, assemble: (facts, checked) => assembleCheck(facts, outcomesOf(checked), options) }),
  'audit-records': (inputs, options) => ({
    settings: options.settings,
    evidence: true,
    assemble: (facts, checked) => assembleAudit(inputs, facts, assembleCheck(facts, outcomesOf(checked), { settings: options.settings }), new Map([...checked].map(([path, c]) => [path, c.evidence!])), options),
  }),
};

/**
 * The pipeline's parse, facts and verdicts for `inputs`, and the product made of them: in two rounds in the calling
 * thread when the inputs are read on demand, else in two rounds in a pool of `threads` worker threads (decided for
 * these inputs: see checkThreads), else, with no thread, in one pass in the calling thread. The result is the same,
 * byte for byte.
 */
export async function runRounds<P extends Product>(product: P, inputs: readonly CheckInput[], options: RoundOptions[P], place: { readonly threads: number; readonly onDemand: boolean }): Promise<Products[P]> {
  const work = products[product](inputs, options);
  const runner = place.onDemand ? inThisThread() : place.threads > 0 ? await openPool(place.threads) : undefined;
  const { facts, checked } = runner ? await inRounds(inputs, work, runner) : inOnePass(inputs, work);
  return work.assemble(facts, checked);
}

/** runCheck, with the per-file work in worker threads when there are enough files (see checkThreads). */
export function runCheckPooled(inputs: readonly CheckInput[], options: CheckOptions & PoolOptions): Promise<CheckResult> {
  return runRounds('check-results', inputs, options, { threads: checkThreads(inputs.length, options.threads), onDemand: false });
}

/** buildAudit, with the per-file work (hashes, signatures, rules) in worker threads when there are enough files. */
export function buildAuditPooled(inputs: readonly CheckInput[], options: AuditOptions & PoolOptions): Promise<AuditReport> {
  return runRounds('audit-records', inputs, options, { threads: checkThreads(inputs.length, options.threads), onDemand: false });
}

/**
 * runCheck in the calling thread for inputs read on demand (see readCheckInputs): the two rounds of the pool, one
 * file at a time, so that no file is held longer than its parse or its check. The result is runCheck's.
 */
export function runCheckInRounds(inputs: readonly CheckInput[], options: CheckOptions): Promise<CheckResult> {
  return runRounds('check-results', inputs, options, { threads: 0, onDemand: true });
}

/** buildAudit in the calling thread for inputs read on demand, as runCheckInRounds. The report is buildAudit's. */
export function buildAuditInRounds(inputs: readonly CheckInput[], options: AuditOptions): Promise<AuditReport> {
  return runRounds('audit-records', inputs, options, { threads: 0, onDemand: true });
}

/** Held inputs in the calling thread: the facts of the whole set, then each file's rules (and evidence), as runCheck and buildAudit. */
function inOnePass(inputs: readonly CheckInput[], { settings, severities, evidence }: Work<unknown>) {
  const facts = collectFacts(inputs, settings);
  const resolved = resolveSeverities(severities);
  const outcomes = [...facts.values()].map((f): [string, FileOutcome] => [f.input.path, checkFile(f, ruleNeighbourhood(f, facts), settings, resolved)]);
  // The evidence after every check, as buildAudit reads it.
  const checked = new Map<string, CheckedFile>(outcomes.map(([path, outcome]) => [path, evidence ? { outcome, evidence: auditEvidence(facts.get(path)!, settings) } : { outcome }]));
  return { facts, checked };
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
async function inRounds(inputs: readonly CheckInput[], { settings, severities, evidence }: Work<unknown>, runner: Runner) {
  try {
    const { threads } = runner;
    const parsed = (await settled(runsOf(inputs, threads).map((run) => runner.run<ParsedFileData[]>({ kind: 'parse', settings, inputs: run })))).flat();
    const placements = placeFiles(inputs, parsed.map(fromParsedData), settings);
    const placed = new Map<string, PlacedFile>(inputs.map((input, i) => [input.path, { input, parsed: parsed[i]!, placement: placements[i]! }]));
    const parse = fileParser(settings);
    const facts = new Map<string, FileFacts>([...placed].map(([path, p]) => [path, placedFacts(p, parse)]));
    // Every managed file: SG802 reads the strong name of the files that are not uploaded too.
    const inPool = (f: PlacedFile) => runner.everyFile || evidence || f.parsed.managed;
    const items: CheckItem[] = [...placed.values()].filter(inPool).map((p) => ({ ...p, netmodules: p.placement.netmodules.flatMap((l) => (l.path === undefined ? [] : [placed.get(l.path)!])) }));
    const results = await settled(runsOf(items, threads).map((run) => runner.run<CheckedFile[]>({ kind: 'check', settings, ...(severities ? { severities } : {}), audit: evidence, items: run })));
    const checked = new Map<string, CheckedFile>(results.flat().map((c, i) => [items[i]!.input.path, c]));
    const resolved = resolveSeverities(severities);
    for (const f of facts.values()) if (!checked.has(f.input.path)) checked.set(f.input.path, { outcome: checkFile(f, ruleNeighbourhood(f, facts), settings, resolved) });
    return { facts, checked };
  } finally {
    await runner.close();
  }
}
