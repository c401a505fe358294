// A check pool thread (run by piscina): parses a run of files (the per-file half of the roles), or runs the file
// rules (and for an audit, reads the evidence) of a run of files whose roles the calling thread worked out.
// Everything that comes back is plain data; the set rules and the report stay on the calling thread.
import type { SeveritySetting } from '../core/diagnostic.js';
import type { ErrorCode } from '../core/error-codes.js';
import { isSignGateError, SignGateError } from '../core/errors.js';
import { auditEvidence, type AuditEvidence } from '../audit/evidence.js';
import { fileFacts, fileParser, fromParsedData, parsedData, type ParsedFileData, type Placement } from '../rules/facts.js';
import { checkFile, resolveSeverities, type FileOutcome } from '../rules/runner.js';
import type { CheckInput, CheckSettings, FileFacts } from '../rules/types.js';

/** One file with what the calling thread knows of it. */
export interface PlacedFile {
  readonly input: CheckInput;
  readonly parsed: ParsedFileData;
  readonly placement: Placement;
}

/** A file to check, with the netmodules its File table lists (the rules read their bytes and attributes). */
export interface CheckItem extends PlacedFile {
  readonly netmodules: readonly PlacedFile[];
}

export type CheckTask =
  | { readonly kind: 'parse'; readonly settings: CheckSettings; readonly inputs: readonly CheckInput[] }
  | { readonly kind: 'check'; readonly settings: CheckSettings; readonly severities?: Readonly<Record<string, SeveritySetting>>; readonly audit: boolean; readonly items: readonly CheckItem[] };

export interface CheckedFile {
  readonly outcome: FileOutcome;
  /** For an audit. */
  readonly evidence?: AuditEvidence;
}

/** Facts of a file rebuilt from plain data: the metadata is parsed again, the same way, when a rule reads it. */
export function placedFacts(file: PlacedFile, parse: ReturnType<typeof fileParser>): FileFacts {
  return fileFacts(file.input, fromParsedData(file.parsed), file.placement, file.parsed.managed ? () => parse(file.input).module : undefined);
}

/**
 * A task's answer. A SignGateError crosses as data: a structured clone keeps only an Error's name and message, and
 * the calling thread must report the code the same error has in one thread (see settleTask).
 */
export type CheckAnswer<T> = { readonly done: T } | { readonly failed: { readonly code: string; readonly message: string } };

/** Runs `work`, turning a SignGateError into a `failed` answer (other errors are bugs and stay exceptions). */
export function answer<T>(work: () => T): CheckAnswer<T> {
  try {
    return { done: work() };
  } catch (error) {
    if (!isSignGateError(error)) throw error;
    return { failed: { code: error.code, message: error.message } };
  }
}

/** The result of an answer, or the SignGateError it carries, thrown again with its code and message. */
export function settleTask<T>(a: CheckAnswer<T>): T {
  if ('failed' in a) throw new SignGateError(a.failed.code as ErrorCode, a.failed.message);
  return a.done;
}

export default function checkTask(task: CheckTask): CheckAnswer<ParsedFileData[] | CheckedFile[]> {
  return answer(() => runTask(task));
}

/** One task in this thread (tests call it directly). */
export function runTask(task: CheckTask): ParsedFileData[] | CheckedFile[] {
  const parse = fileParser(task.settings);
  if (task.kind === 'parse') return task.inputs.map((input) => parsedData(parse(input).parsed));
  const severities = resolveSeverities(task.severities);
  return task.items.map((item) => {
    const facts = placedFacts(item, parse);
    const near = new Map<string, FileFacts>([[item.input.path, facts], ...item.netmodules.map((m): [string, FileFacts] => [m.input.path, placedFacts(m, parse)])]);
    const outcome = checkFile(facts, near, task.settings, severities);
    return task.audit ? { outcome, evidence: auditEvidence(facts, task.settings) } : { outcome };
  });
}
