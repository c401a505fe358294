// Hostile and large signature records: `serve record verify` (--file and --data-dir), `serve record export` and
// `audit --record` read a record a line at a time, refuse a line longer than 64 KiB, or nested deeper than an entry
// can be, before parsing it, and handle a record much larger than their heap (the root of a checkpoint's first
// entries from a stack of log2(n) subtree hashes), naming the file and the line, never with a stack.
// A record larger than the heap (64 MB under 50-100 MB), test/record/record-over-heap.test.ts, and one of 600 MB,
// test/record/record-large.test.ts, are verified in the heavy leg.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { RECORD_FILE } from '../../src/server/backends/data-dir/record-file.js';
import { NO_CRASH, recordDataDir, recordKeyPair, recordRelease, runCliWithHeap, writeRecord } from '../helpers/record-files.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-record-bounds-'));
const key = recordKeyPair();
/** A record of three entries, then `line` with its newline, then two more lines (never reached). */
function hostile(name: string, line: string): string {
  const path = join(dir, name);
  writeRecord(path, 3);
  writeFileSync(path, `${readFileSync(path, 'utf8')}${line}\n{"seq":4}\n{"seq":5}\n`);
  return path;
}
const dataDirWith = (path: string, head: { seq: number; hash: string }): string => recordDataDir(dir, path, head, key.publicKey);
const audit = recordRelease(dir);

describe('a hostile line is refused before it is parsed, naming the file and the line', () => {
  test('16 MiB of nested brackets on one line: verify --file, verify --data-dir and audit --record stop at its first 64 KiB (300 MB heap)', async () => {
    const path = hostile('brackets.jsonl', `${'['.repeat(8 << 20)}${']'.repeat(8 << 20)}`);
    const expected = 'line 4 is not an entry of a signature record: it is longer than 65536 bytes';
    const file = await runCliWithHeap(300, ['serve', 'record', 'verify', '--file', path]);
    expect(file.code, file.err).toBe(1);
    expect(file.out).toContain(`signature record ${path}: BROKEN after 3 verified entries: ${expected}`);
    expect(file.out + file.err).not.toMatch(NO_CRASH);
    const dataDir = dataDirWith(path, { seq: 5, hash: '0'.repeat(64) });
    const data = await runCliWithHeap(300, ['serve', 'record', 'verify', '--data-dir', dataDir]);
    expect(data.code, data.err).toBe(1);
    expect(data.out).toContain(`signature record ${join(dataDir, RECORD_FILE)}: BROKEN after 3 verified entries: ${expected}`);
    expect(data.out + data.err).not.toMatch(NO_CRASH);
    const audited = await audit(300, path);
    expect(audited.code, audited.err).toBe(2);
    expect(audited.err).toContain(`brackets.jsonl is not a signature record that verifies: ${expected}`);
    expect(audited.out + audited.err).not.toMatch(NO_CRASH);
  });

  test('a short line nested deeper than an entry can be (40 KB of brackets, or objects in a field) is refused without JSON.parse', async () => {
    const brackets = hostile('nested.jsonl', `${'['.repeat(20_000)}${']'.repeat(20_000)}`);
    const r = await runCliWithHeap(300, ['serve', 'record', 'verify', '--file', brackets]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain('line 4 is not an entry of a signature record: its JSON nests deeper than 4 levels (an entry is one flat object)');
    const inField = hostile('in-field.jsonl', '{"seq":4,"file":{"a":{"b":{"c":{"d":"e"}}}}}');
    const a = await audit(300, inField);
    expect(a.code, a.err).toBe(2);
    expect(a.err).toContain('in-field.jsonl is not a signature record that verifies: line 4 is not an entry of a signature record: its JSON nests deeper');
    expect(r.out + r.err + a.out + a.err).not.toMatch(NO_CRASH);
  });

  test('a torn last line longer than the bound is still a torn append (truncated), not a long line', async () => {
    const path = join(dir, 'torn-long.jsonl');
    writeRecord(path, 3);
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"seq":4,"file":"${'x'.repeat(100_000)}`);
    const r = await runCliWithHeap(300, ['serve', 'record', 'verify', '--file', path]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain(`${path} is truncated: line 4, after entry 3, is incomplete`);
  });
});
