// A pipeline pool thread (run by piscina): parses a run of files (the per-file half of the roles), or runs the file
// rules (and for an audit, reads the evidence) of a run of files whose roles the calling thread worked out.
// Everything that comes back is plain data; the set rules and the report stay on the calling thread.
import type { SeveritySetting } from '../../core/diagnostic.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { FormatError, isSignGateError, KeyError, SignGateError, UsageError, type FormatErrorDetails } from '../../core/errors.js';
import { auditEvidence, type AuditEvidence } from '../../audit/evidence.js';
import { fileFacts, fileParser, fromParsedData, parsedData, type ParsedFileData, type Placement } from '../../rules/facts.js';
import { checkFile, resolveSeverities, type FileOutcome } from '../../rules/runner.js';
import type { CheckInput, CheckSettings, FileFacts } from '../../rules/types.js';
import { fileBehind } from '../files.js';

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

/** A SignGateError as plain data: its class and what that class carries (a hint, where a format broke, the file). */
export interface FailedAnswer {
  readonly code: string;
  readonly message: string;
  readonly kind?: 'format' | 'usage' | 'key';
  readonly file?: string;
  readonly hint?: string;
  readonly format?: FormatErrorDetails;
}

/**
 * A task's answer. A SignGateError crosses as data: a structured clone keeps only an Error's name and message, and
 * the calling thread must report the error a single thread would (see settleTask): its class, code, message, a
 * UsageError's hint and a FormatError's structure and offsets.
 */
export type CheckAnswer<T> = { readonly done: T } | { readonly failed: FailedAnswer };

/** Runs `work`, turning a SignGateError into a `failed` answer (other errors are bugs and stay exceptions). */
export function answer<T>(work: () => T): CheckAnswer<T> {
  try {
    return { done: work() };
  } catch (error) {
    if (!isSignGateError(error)) throw error;
    const file = error.file === undefined ? {} : { file: error.file };
    if (error instanceof FormatError) {
      const { structure, fileOffset, needed, available } = error;
      const format = { structure, fileOffset, ...(needed === undefined ? {} : { needed }), ...(available === undefined ? {} : { available }) };
      return { failed: { code: error.code, message: error.message, kind: 'format', ...file, format } };
    }
    if (error instanceof UsageError) return { failed: { code: error.code, message: error.message, kind: 'usage', ...file, ...(error.hint === undefined ? {} : { hint: error.hint }) } };
    if (error instanceof KeyError) return { failed: { code: error.code, message: error.message, kind: 'key', ...file } };
    return { failed: { code: error.code, message: error.message, ...file } };
  }
}

/** The result of an answer, or the SignGateError it carries, thrown again as the class it was, with what it carried. */
export function settleTask<T>(a: CheckAnswer<T>): T {
  if (!('failed' in a)) return a.done;
  const { code, message, kind, file, hint, format } = a.failed;
  const error =
    kind === 'format' && format
      ? new FormatError(code as ErrorCode, message, format)
      : kind === 'usage'
        ? new UsageError(message, hint, code as ErrorCode)
        : kind === 'key'
          ? new KeyError(code as ErrorCode, message)
          : new SignGateError(code as ErrorCode, message);
  if (file !== undefined) error.file = file;
  throw error;
}

export default function checkTask(task: CheckTask): CheckAnswer<ParsedFileData[] | CheckedFile[]> {
  return answer(() => runTask(task));
}

/**
 * Buffers that the files of one item (a file, or a manifest module and its netmodules) are read into, used again
 * for the next item: a check in rounds in the calling thread reads every file twice, and a new buffer per read
 * left hundreds of megabytes for the garbage collector (audit of the Mono corpus: 235 MB peak RSS, 155 MB with
 * these). Nothing made from an item may keep a view of them: `release` looks through what the item gave.
 */
export class ReadBuffers {
  private readonly buffers: Buffer[] = [];
  private used = 0;

  /** A buffer of at least `size` bytes, not handed out since the last release. */
  take(size: number): Buffer {
    let buffer = this.buffers[this.used];
    if (!buffer || buffer.length < size) {
      buffer = Buffer.allocUnsafeSlow(Math.max(size, 1 << 20));
      this.buffers[this.used] = buffer;
    }
    this.used++;
    return buffer;
  }

  /**
   * Makes the buffers free for the next item, after checking that `result` (plain data) holds no view of them.
   * @throws Error when it does: a bug, that would otherwise show as another file's bytes
   */
  release<T>(result: T): T {
    const owned = new Set<ArrayBufferLike>(this.buffers.map((b) => b.buffer));
    const seen = new Set<object>();
    const visit = (value: unknown): void => {
      if (typeof value !== 'object' || value === null || seen.has(value)) return;
      seen.add(value);
      if (ArrayBuffer.isView(value)) {
        if (owned.has(value.buffer)) throw new Error('internal error: a check result holds a view of a reused read buffer');
        return;
      }
      for (const v of Object.values(value)) visit(v);
    };
    try {
      visit(result);
    } finally {
      this.used = 0;
    }
    return result;
  }
}

/**
 * The input with its bytes in hand, for the length of one item. An input read on demand reads its file here, once
 * (into `buffers` when given), where a failed read is an error of the command (SG_ERR_IO_READ), not a file the
 * rules find unreadable.
 */
function inHand(input: CheckInput, buffers: ReadBuffers | undefined): CheckInput {
  const file = fileBehind(input);
  const bytes = file && buffers ? file.read(buffers.take(file.size)) : input.bytes;
  return { path: input.path, uploadName: input.uploadName, explicit: input.explicit, bytes, ...(input.size !== undefined ? { size: input.size } : {}) };
}

function placedInHand(file: PlacedFile, buffers: ReadBuffers | undefined): PlacedFile {
  return { ...file, input: inHand(file.input, buffers) };
}

/**
 * One task in this thread (tests call it directly). With `buffers`, files read on demand are read into them, one
 * item at a time.
 */
export function runTask(task: CheckTask, buffers?: ReadBuffers): ParsedFileData[] | CheckedFile[] {
  const parse = fileParser(task.settings);
  const released = <T>(result: T): T => (buffers ? buffers.release(result) : result);
  if (task.kind === 'parse') return task.inputs.map((input) => released(parsedData(parse(inHand(input, buffers)).parsed)));
  const severities = resolveSeverities(task.severities);
  return task.items.map((placed) => {
    const item = placedInHand(placed, buffers);
    const facts = placedFacts(item, parse);
    const near = new Map<string, FileFacts>([[item.input.path, facts], ...placed.netmodules.map((m): [string, FileFacts] => [m.input.path, placedFacts(placedInHand(m, buffers), parse)])]);
    const outcome = checkFile(facts, near, task.settings, severities);
    return released(task.audit ? { outcome, evidence: auditEvidence(facts, task.settings) } : { outcome });
  });
}
