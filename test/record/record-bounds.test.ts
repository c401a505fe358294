// Hostile and large signature records: `serve record verify` (--file and --data-dir), `serve record export` and
// `audit --record` read a record a line at a time, refuse a line longer than 64 KiB, or nested deeper than an entry
// can be, before parsing it, and handle a record much larger than their heap (the root of a checkpoint's first
// entries from a stack of log2(n) subtree hashes), naming the file and the line, never with a stack.
// test/record/record-large.test.ts does the same with a record of 600 MB (the heavy leg).
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { RECORD_FILE, RECORD_HEAD_FILE } from '../../src/server/storage/record-file.js';
import { RECORD_PUBLIC_KEY_FILE } from '../../src/server/storage/record-key.js';
import { fixture, fixturePath } from '../helpers/fixtures.js';
import { checkpointOver, NO_CRASH, recordKeyPair, runCliWithHeap, writeRecord } from '../helpers/record-files.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-record-bounds-'));
const key = recordKeyPair();
/** A record of three entries, then `line` with its newline, then two more lines (never reached). */
function hostile(name: string, line: string): string {
  const path = join(dir, name);
  writeRecord(path, 3);
  writeFileSync(path, `${readFileSync(path, 'utf8')}${line}\n{"seq":4}\n{"seq":5}\n`);
  return path;
}
/** A data directory holding `path` as its record, with the head of `written` and the record public key. */
function dataDirWith(path: string, head: { seq: number; hash: string }): string {
  const dataDir = mkdtempSync(join(dir, 'data-'));
  copyFileSync(path, join(dataDir, RECORD_FILE));
  writeFileSync(join(dataDir, RECORD_HEAD_FILE), `${JSON.stringify(head)}\n`);
  writeFileSync(join(dataDir, RECORD_PUBLIC_KEY_FILE), `${key.publicKey}\n`);
  return dataDir;
}

const release = join(dir, 'release');
const addin = fixture('findings/passing/FindingAddin.dll');
const addinSha256 = createHash('sha256').update(addin).digest('hex');
const audit = (heapMb: number, record: string, ...more: string[]) => {
  const args = ['audit', release, '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '--no-timestamp', '--format', 'json'];
  return runCliWithHeap(heapMb, [...args, '--record', record, ...more], { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') });
};

beforeAll(() => {
  mkdirSync(release);
  writeFileSync(join(release, 'FindingAddin.dll'), addin);
});

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

describe('a record larger than the heap verifies, line by line', () => {
  // About 64 MB: several times the 100 MB heap's room once parsed whole (a string, its lines, an entry object each).
  const COUNT = 110_000;
  const CHECKPOINT = 70_001;
  let path: string;
  let written: ReturnType<typeof writeRecord>;
  let checkpoint: string;
  beforeAll(() => {
    path = join(dir, 'large.jsonl');
    // The release's file was signed twice: the audit names the earlier entry.
    const plant = new Map([[54_321, { signedSha256: addinSha256, file: 'FindingAddin.dll' }], [99_999, { signedSha256: addinSha256 }]]);
    written = writeRecord(path, COUNT, { keepLeaves: CHECKPOINT, plant });
    expect(statSync(path).size).toBeGreaterThan(60e6);
    checkpoint = join(dir, 'large.checkpoint');
    writeFileSync(checkpoint, checkpointOver(written.leaves, key.privateKey));
  });

  test('verify --file and --data-dir with --checkpoint under a 100 MB heap: intact, and continues the checkpoint', async () => {
    const file = await runCliWithHeap(100, ['serve', 'record', 'verify', '--file', path, '--checkpoint', checkpoint, '--public-key', key.publicKey]);
    expect(file.code, file.err).toBe(0);
    expect(file.out).toContain(`${COUNT} entries, chain intact, last entry ${COUNT} (hash ${written.head.hash}), continues the checkpoint ${checkpoint}`);
    const dataDir = dataDirWith(path, written.head);
    const data = await runCliWithHeap(100, ['serve', 'record', 'verify', '--data-dir', dataDir, '--checkpoint', checkpoint]);
    expect(data.code, data.err).toBe(0);
    expect(data.out).toContain(`${COUNT} entries, chain intact, last entry ${COUNT} (hash ${written.head.hash}), continues the checkpoint ${checkpoint}`);
    expect(file.out + file.err + data.out + data.err).not.toMatch(NO_CRASH);
  });

  test('export -o under a 50 MB heap: written as it is read, a batch at a time, and put in place whole', async () => {
    const dataDir = dataDirWith(path, written.head);
    const out = join(dataDir, 'export.jsonl');
    const exported = await runCliWithHeap(50, ['serve', 'record', 'export', '--data-dir', dataDir, '-o', out]);
    expect(exported.code, exported.err).toBe(0);
    expect(exported.err).toContain(`${COUNT} entries of the signature record ${join(dataDir, RECORD_FILE)} written to`);
    expect(readFileSync(out).equals(readFileSync(path))).toBe(true);
    expect(exported.err).not.toMatch(NO_CRASH);
  });

  test('a rewritten entry before the checkpoint\'s size is found from the root computed on the way', async () => {
    const forged = join(dir, 'large-forged.jsonl');
    const again = writeRecord(forged, COUNT, { plant: new Map([[12_345, { user: 'someone-else' }]]) });
    expect(again.head.hash).not.toBe(written.head.hash);
    const r = await runCliWithHeap(100, ['serve', 'record', 'verify', '--file', forged, '--checkpoint', checkpoint, '--public-key', key.publicKey]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(new RegExp(`NOT A CONTINUATION of the checkpoint .*: the first ${CHECKPOINT} entries of .*large-forged\\.jsonl hash to .*, not to`));
  });

  test('audit --record with --checkpoint under a 100 MB heap: the release file gets its earliest entry', async () => {
    const r = await audit(100, path, '--checkpoint', checkpoint, '--record-key', key.publicKey);
    // Exit 1: the fixture is delay-signed (SG701), which the record does not change.
    expect(r.code, r.err).toBe(1);
    const report = JSON.parse(r.out) as {
      signatureRecord: { entries: number; lastSeq: number };
      files: { name: string; signature: { seq: number; file: string } | null }[];
      findings: { ruleId: string }[];
    };
    expect(report.findings.map((f) => f.ruleId)).toEqual(['SG701']);
    expect(report.signatureRecord).toMatchObject({ entries: COUNT, lastSeq: COUNT });
    expect(report.files.map((f) => [f.name, f.signature?.seq, f.signature?.file])).toEqual([['FindingAddin.dll', 54_321, 'FindingAddin.dll']]);
    expect(r.err).not.toMatch(NO_CRASH);
  });
});
