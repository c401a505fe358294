// Output of long scans in chunks: `inspect --json` over thousands of files prints one record per file, and one
// write (and one Buffer) per record cost more than the text itself. Lines are gathered up to CHUNK_CHARS, or for
// at most MAX_DELAY_MS (a slow scan still shows its progress), and written together; what is printed is the same
// text, in the same order.
import type { Io } from './output.js';

/** Characters gathered before a write. */
export const CHUNK_CHARS = 1 << 16;

/** Longest time a line waits for the rest of its chunk. */
export const MAX_DELAY_MS = 200;

/** An Io whose `out` lines are written in chunks; `flush` writes the rest (and `err` flushes first). */
export interface BufferedIo extends Io {
  flush(): void;
}

/** Wraps `io` so that its `out` lines are written in chunks of about CHUNK_CHARS characters. */
export function bufferedIo(io: Io): BufferedIo {
  let pending = '';
  // Started by the first line of a chunk: the chunk goes out after MAX_DELAY_MS even if no other line comes.
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending) io.out(pending);
    pending = '';
  };
  return {
    color: io.color,
    // Io.out ends every text with one newline unless it has one: the same here, so the chunk always ends in one.
    out: (text) => {
      if (!pending) timer = setTimeout(flush, MAX_DELAY_MS).unref();
      pending += text.endsWith('\n') ? text : `${text}\n`;
      if (pending.length >= CHUNK_CHARS) flush();
    },
    err: (text) => {
      flush();
      io.err(text);
    },
    flush,
  };
}

/** Runs `body` with a buffered Io and writes what is left when it ends, also when it throws. */
export async function withBufferedOutput<T>(io: Io, body: (io: Io) => Promise<T>): Promise<T> {
  const buffered = bufferedIo(io);
  try {
    return await body(buffered);
  } finally {
    buffered.flush();
  }
}
