// One task of the engine's two rounds, the same in the calling thread and in a worker thread: parse a run of files
// (the per-file half of the roles), or run the product's per-file step over a run of files whose roles the calling
// thread worked out. Everything that comes back is plain data; a SignGateError comes back as data too, and is thrown
// again on the calling thread as the class it was (answer, settleTask).
import type { ErrorCode } from '../core/error-codes.js';
import { FormatError, isSignGateError, KeyError, SignGateError, UsageError, type ErrorFault, type FormatErrorDetails } from '../core/errors.js';
import { fileFacts, fileParser, fromParsedData, parsedData, type ParsedFileData, type Placement } from '../rules/facts.js';
import type { CheckSettings, FileFacts } from '../rules/types.js';
import { inHand, isFileToRead, type EngineInput, type ReadBuffers } from './inputs.js';
import { perFileOf, type FileStep } from './product.js';

/** One file with what the calling thread knows of it. */
export interface PlacedFile {
  readonly input: EngineInput;
  readonly parsed: ParsedFileData;
  readonly placement: Placement;
}

/** A file for the per-file step, with the netmodules its File table lists (the rules read their bytes and attributes). */
export interface TaskItem extends PlacedFile {
  readonly netmodules: readonly PlacedFile[];
}

/** A task: parse a run of inputs, or run the product's per-file step (`product`: the module a worker thread loads). */
export type EngineTask =
  | { readonly kind: 'parse'; readonly settings: CheckSettings; readonly inputs: readonly EngineInput[] }
  | { readonly kind: 'file'; readonly settings: CheckSettings; readonly product: string; readonly options: unknown; readonly items: readonly TaskItem[] };

/** A SignGateError as plain data: its class and what that class carries (a hint, where a format broke, the file). */
export interface FailedAnswer {
  readonly code: string;
  readonly message: string;
  readonly kind?: 'format' | 'usage' | 'key';
  readonly fault: ErrorFault;
  readonly file?: string;
  readonly hint?: string;
  readonly format?: FormatErrorDetails;
}

/**
 * A task's answer. A SignGateError crosses as data: a structured clone keeps only an Error's name and message, and
 * the calling thread must report the error a single thread would (see settleTask): its class, code, message, a
 * UsageError's hint, a FormatError's structure and offsets, and whose fault it is.
 */
export type TaskAnswer<T> = { readonly done: T } | { readonly failed: FailedAnswer };

/** Runs `work`, turning a SignGateError into a `failed` answer (other errors are bugs and stay exceptions). */
export function answer<T>(work: () => T): TaskAnswer<T> {
  try {
    return { done: work() };
  } catch (error) {
    if (!isSignGateError(error)) throw error;
    const file = { fault: error.fault, ...(error.file === undefined ? {} : { file: error.file }) };
    if (error instanceof FormatError) {
      const { structure, fileOffset, needed, available } = error;
      const format = { structure, fileOffset, ...(needed === undefined ? {} : { needed }), ...(available === undefined ? {} : { available }) };
      return { failed: { code: error.code, message: error.message, kind: 'format', ...file, format } };
    }
    if (error instanceof UsageError)
      return { failed: { code: error.code, message: error.message, kind: 'usage', ...file, ...(error.hint === undefined ? {} : { hint: error.hint }) } };
    if (error instanceof KeyError) return { failed: { code: error.code, message: error.message, kind: 'key', ...file } };
    return { failed: { code: error.code, message: error.message, ...file } };
  }
}

/** The result of an answer, or the SignGateError it carries, thrown again as the class it was, with what it carried. */
export function settleTask<T>(a: TaskAnswer<T>): T {
  if (!('failed' in a)) return a.done;
  const { code, message, kind, fault, file, hint, format } = a.failed;
  const error =
    kind === 'format' && format
      ? new FormatError(code as ErrorCode, message, format)
      : kind === 'usage'
        ? new UsageError(message, hint, code as ErrorCode)
        : kind === 'key'
          ? new KeyError(code as ErrorCode, message, { fault })
          : new SignGateError(code as ErrorCode, message, { fault });
  if (file !== undefined) error.file = file;
  throw error;
}

/** What the parse round made of each held input, kept for the per-file round of the same thread (see inThisThread). */
export type ParsedHere = Map<EngineInput, ReturnType<ReturnType<typeof fileParser>>>;

/**
 * Facts of a placed file whose bytes are in hand: the metadata the parse round kept for it in this thread, else
 * parsed again, the same way, when a rule reads it.
 */
function factsInHand(file: PlacedFile, parse: ReturnType<typeof fileParser>, buffers: ReadBuffers | undefined, kept: ParsedHere | undefined): FileFacts {
  const input = inHand(file.input, buffers);
  const module = kept?.get(file.input)?.module;
  return fileFacts(input, fromParsedData(file.parsed), file.placement, module ?? (file.parsed.managed ? () => parse(input).module : undefined));
}

/**
 * One task in this thread. With `buffers`, files to read are read into them, one item at a time, and what the item
 * gave is checked to hold no view of them. With `kept`, the parse round keeps the metadata of held inputs there for
 * the per-file round (files to read keep nothing: their memory stays bounded).
 * @param step the product's per-file step (a `file` task only)
 */
export function runTask(
  task: EngineTask,
  step: FileStep<unknown, unknown> | undefined,
  buffers?: ReadBuffers,
  kept?: ParsedHere,
): ParsedFileData[] | unknown[] {
  const parse = fileParser(task.settings);
  // The per-file round parses again what the parse round judged (well-formed.ts): without the verdict a second time.
  const reparse = fileParser(task.settings, true);
  const released = <T>(result: T): T => (buffers ? buffers.release(result) : result);
  if (task.kind === 'parse') {
    return task.inputs.map((input) => {
      const result = parse(inHand(input, buffers));
      if (kept && !isFileToRead(input)) kept.set(input, result);
      return released(parsedData(result.parsed));
    });
  }
  return task.items.map((item) => {
    const facts = factsInHand(item, reparse, buffers, kept);
    const near = new Map<string, FileFacts>([
      [item.input.path, facts],
      ...item.netmodules.map((m): [string, FileFacts] => [m.input.path, factsInHand(m, reparse, buffers, kept)]),
    ]);
    return released(perFileOf(step!, facts, near, task.settings, task.options));
  });
}
