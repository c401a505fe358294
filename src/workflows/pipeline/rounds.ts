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
import { inThisThread, withPool, type Runner } from './pool.js';
import { placedFacts, settleTask, type CheckAnswer, type CheckedFile, type CheckItem, type PlacedFile } from './worker.js';

/** runCheck, with the per-file work in worker threads when there are enough files (see checkThreads). */
export async function runCheckPooled(inputs: readonly CheckInput[], options: CheckOptions & PoolOptions): Promise<CheckResult> {
  const threads = checkThreads(inputs.length, options.threads);
  if (threads === 0) return runCheck(inputs, options);
  return withPool(threads, (pool) => checkRounds(inputs, options, pool));
}

/** buildAudit, with the per-file work (hashes, signatures, rules) in worker threads when there are enough files. */
export async function buildAuditPooled(inputs: readonly CheckInput[], options: AuditOptions & PoolOptions): Promise<AuditReport> {
  const threads = checkThreads(inputs.length, options.threads);
  if (threads === 0) return buildAudit(inputs, options);
  return withPool(threads, (pool) => auditRounds(inputs, options, pool));
}

/**
 * runCheck in the calling thread for inputs read on demand (see readCheckInputs): the two rounds of the pool, one
 * file at a time, so that no file is held longer than its parse or its check. The result is runCheck's.
 */
export function runCheckInRounds(inputs: readonly CheckInput[], options: CheckOptions): Promise<CheckResult> {
  return checkRounds(inputs, options, inThisThread());
}

/** buildAudit in the calling thread for inputs read on demand, as runCheckInRounds. The report is buildAudit's. */
export function buildAuditInRounds(inputs: readonly CheckInput[], options: AuditOptions): Promise<AuditReport> {
  return auditRounds(inputs, options, inThisThread());
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
