// The lines of a record file as its readers see them, a chunk at a time: the same lines whatever the chunks, a line
// longer than MAX_RECORD_LINE_BYTES counted but not kept, a last line without its newline torn, and JSON nested
// deeper than MAX_RECORD_LINE_DEPTH refused before JSON.parse (brackets inside strings do not count).
import { describe, expect, test } from 'vitest';
import { MAX_RECORD_LINE_BYTES, MAX_RECORD_LINE_DEPTH, parseRecordLine, RecordLineSplitter, type RecordFileLine } from '../../src/record/signature-record.js';

/** The lines of `bytes` given to a splitter in chunks of `size` bytes, each copied out before the next chunk. */
function split(bytes: Buffer, size: number): { line: number; text: string | undefined; length: number; torn: boolean }[] {
  const splitter = new RecordLineSplitter();
  const out: ReturnType<typeof split> = [];
  const take = (l: RecordFileLine) => out.push({ line: l.line, text: l.bytes?.toString('utf8'), length: l.length, torn: l.torn });
  for (let at = 0; at < bytes.length; at += size) {
    // The reader's buffer is filled again after each chunk: a line kept across chunks must be a copy.
    const chunk = Buffer.from(bytes.subarray(at, at + size));
    for (const l of splitter.push(chunk)) take(l);
    chunk.fill(0x58);
  }
  for (const l of splitter.end()) take(l);
  return out;
}

describe('a record file split into lines, a chunk at a time', () => {
  test('the lines of text.split, whatever the chunks: empty lines, CR LF, multi-byte characters, a torn last line', () => {
    const text = '{"a":1}\n\n{"file":"Zürich/日本.dll"}\r\n{"b":2}\n{"torn":';
    const expected = text.split('\n').map((t, i, all) => ({ line: i + 1, text: t, length: Buffer.byteLength(t), torn: i === all.length - 1 }));
    for (const size of [1, 2, 3, 7, 64, 4096]) expect(split(Buffer.from(text), size), `chunks of ${size}`).toEqual(expected);
    // Ending in its newline: no torn line, no empty line after it.
    expect(split(Buffer.from('{"a":1}\n'), 3)).toEqual([{ line: 1, text: '{"a":1}', length: 7, torn: false }]);
    expect(split(Buffer.alloc(0), 3)).toEqual([]);
  });

  test(`a line longer than ${MAX_RECORD_LINE_BYTES} bytes is counted, not kept; one of exactly that length is kept; the lines after it are whole`, () => {
    const exact = 'x'.repeat(MAX_RECORD_LINE_BYTES);
    const long = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const bytes = Buffer.from(`${exact}\n${long}\n{"after":1}\n${long}`);
    for (const size of [1000, 65_536, 1 << 20]) {
      expect(split(bytes, size), `chunks of ${size}`).toEqual([
        { line: 1, text: exact, length: MAX_RECORD_LINE_BYTES, torn: false },
        { line: 2, text: undefined, length: 200_000, torn: false },
        { line: 3, text: '{"after":1}', length: 11, torn: false },
        { line: 4, text: undefined, length: 200_000, torn: true },
      ]);
    }
    const unread = `it is longer than ${MAX_RECORD_LINE_BYTES} bytes, the most a line of a record may take (an entry takes a few hundred)`;
    expect(parseRecordLine({ line: 2, bytes: undefined, length: 200_000, torn: false })).toEqual({ value: undefined, unread });
  });

  test(`JSON nested deeper than ${MAX_RECORD_LINE_DEPTH} levels is refused before it is parsed; brackets in strings do not count`, () => {
    const parse = (text: string) => parseRecordLine({ line: 1, bytes: Buffer.from(text), length: text.length, torn: false });
    const deep = { value: undefined, unread: `its JSON nests deeper than ${MAX_RECORD_LINE_DEPTH} levels (an entry is one flat object)` };
    expect(parse('[[[[1]]]]')).toEqual({ value: [[[[1]]]] });
    expect(parse('[[[[[1]]]]]')).toEqual(deep);
    expect(parse('{"a":{"b":[{"c":{}}]}}')).toEqual(deep);
    expect(parse('{"file":"[[[[[{{{{{.dll","x":"\\"[[[[[["}')).toEqual({ value: { file: '[[[[[{{{{{.dll', x: '"[[[[[[' } });
    expect(parse('{"a":1')).toEqual({ value: undefined });
  });
});
