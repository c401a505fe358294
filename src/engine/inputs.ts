// The engine's inputs: files held in memory (a check input with its bytes), or files read when a task needs them,
// through a reader the caller gives (the engine touches no disk). A file to read is read by the engine at two
// visible places, its parse and its check, into buffers used again from file to file.
import type { CheckInput } from '../rules/types.js';

/** A file whose bytes are read each time the engine needs them, and never held between. */
export interface FileToRead {
  readonly path: string;
  readonly uploadName: string;
  readonly explicit: boolean;
  readonly size: number;
  /**
   * The file's bytes: a new buffer, or a view of `into` when that is large enough (the caller reuses it).
   * @throws SignGateError SG_ERR_IO_READ when the file can no longer be read, or changed since it was first seen
   */
  readonly read: (into?: Buffer) => Buffer;
}

/** An input of the engine: its bytes in hand, or a file to read. */
export type EngineInput = CheckInput | FileToRead;

/** Whether the input is read when needed (else its bytes are in hand). */
export function isFileToRead(input: EngineInput): input is FileToRead {
  return typeof (input as FileToRead).read === 'function';
}

/** The input's bytes: those in hand, or the file read now (into a buffer of `buffers` when given). */
export function readInput(input: EngineInput, buffers?: ReadBuffers): Uint8Array {
  if (!isFileToRead(input)) return input.bytes;
  return input.read(buffers?.take(input.size));
}

/** The input as a check input with its bytes in hand, for as long as one step needs them. */
export function inHand(input: EngineInput, buffers?: ReadBuffers): CheckInput {
  if (!isFileToRead(input)) return input;
  return { path: input.path, uploadName: input.uploadName, explicit: input.explicit, size: input.size, bytes: readInput(input, buffers) };
}

/**
 * A check input that names a file read when needed, without its bytes: what the facts on the calling thread hold
 * for it (the set rules and the result read its names and size, never its bytes; its bytes are read only
 * through readInput).
 */
export function named(input: EngineInput): CheckInput {
  if (!isFileToRead(input)) return input;
  return { path: input.path, uploadName: input.uploadName, explicit: input.explicit, size: input.size, bytes: NOT_HELD };
}

/** The bytes of an input that is not held: none. */
const NOT_HELD = new Uint8Array(0);

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
    // No buffer was handed out since the last release: the item read none, so nothing of it can be a view of one.
    if (this.used === 0) return result;
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
