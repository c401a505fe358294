// Chunked output prints exactly what line-by-line output prints, in the same order, stdout before a later stderr line.
import { Chalk } from 'chalk';
import { describe, expect, test, vi } from 'vitest';
import { bufferedIo, CHUNK_CHARS, MAX_DELAY_MS, withBufferedOutput } from '../../src/cli/buffered-io.js';
import type { Io } from '../../src/cli/output.js';

/** An Io that records the text as a terminal would show it (out and err interleaved) and how many writes it got. */
function recordingIo() {
  const shown: string[] = [];
  let writes = 0;
  const io: Io = {
    out: (t) => void (writes++, shown.push(t.endsWith('\n') ? t : `${t}\n`)),
    err: (t) => void shown.push(`ERR ${t.endsWith('\n') ? t : `${t}\n`}`),
    color: new Chalk({ level: 0 }),
  };
  return { io, text: () => shown.join(''), writes: () => writes };
}

describe('bufferedIo', () => {
  const lines = Array.from({ length: 3000 }, (_, i) => (i % 7 === 0 ? `line ${i} ${'x'.repeat(i % 300)}\n` : `line ${i} ${'y'.repeat(i % 50)}`));

  test('the same text as one write per line, in far fewer writes', () => {
    const direct = recordingIo();
    for (const l of lines) direct.io.out(l);
    const chunked = recordingIo();
    const io = bufferedIo(chunked.io);
    for (const l of lines) io.out(l);
    io.flush();
    expect(chunked.text()).toBe(direct.text());
    expect(direct.writes()).toBe(lines.length);
    expect(chunked.writes()).toBeLessThanOrEqual(Math.ceil(direct.text().length / CHUNK_CHARS) + 1);
    expect(chunked.writes()).toBeGreaterThan(1);
  });

  test('an error line comes after the lines printed before it', async () => {
    const direct = recordingIo();
    direct.io.out('a');
    direct.io.err('boom');
    direct.io.out('b');
    const chunked = recordingIo();
    await expect(
      withBufferedOutput(chunked.io, async (io) => {
        io.out('a');
        io.err('boom');
        io.out('b');
        throw new Error('stops');
      }),
    ).rejects.toThrow('stops');
    expect(chunked.text()).toBe(direct.text()); // what was printed before the throw is written, not lost
  });

  test('a slow scan still shows its lines: a chunk goes out MAX_DELAY_MS after its first line, with no other line coming', () => {
    vi.useFakeTimers();
    try {
      const chunked = recordingIo();
      const io = bufferedIo(chunked.io);
      io.out('first');
      vi.advanceTimersByTime(MAX_DELAY_MS - 1);
      io.out('second');
      expect(chunked.writes()).toBe(0); // young lines wait for their chunk
      vi.advanceTimersByTime(1);
      expect(chunked.writes()).toBe(1); // no further line was needed
      expect(chunked.text()).toBe('first\nsecond\n');
      io.out('third');
      io.flush();
      vi.advanceTimersByTime(MAX_DELAY_MS);
      expect(chunked.writes()).toBe(2); // a flushed chunk's timer is gone: nothing is written twice
      expect(chunked.text()).toBe('first\nsecond\nthird\n');
    } finally {
      vi.useRealTimers();
    }
  });
});
