// A signature record of 600 MB (a million entries of 600 bytes), larger than the string V8 can make and twice the
// heap it is given: `serve record verify --file --checkpoint` and `audit --record --checkpoint` read it a line at a
// time under `node --max-old-space-size=300` and verify it, the root of the checkpoint's first entries computed on
// the way, with a peak resident memory far below the record's size; a record cut back below the checkpoint is
// refused naming what was found. The heavy leg runs it (writing the record takes most of its time);
// test/record/record-over-heap.test.ts does the same with 64 MB under 50-100 MB heaps (the heavy leg too).
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixture, fixturePath } from '../helpers/fixtures.js';
import { checkpointOver, NO_CRASH, recordKeyPair, runCliWithHeap, writeRecord, type WrittenRecord } from '../helpers/record-files.js';

const COUNT = 1_000_000;
/** Not a power of two: the root of the checkpoint merges several perfect subtrees. */
const CHECKPOINT = 654_321;
const HEAP_MB = 300;
/** The peak resident memory allowed: the heap's ceiling and Node's own, far below the record's 600 MB. */
const PEAK_RSS_KB = 450 * 1024;

describe('a signature record of 600 MB under a heap of 300 MB', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-record-large-'));
  const key = recordKeyPair();
  const path = join(dir, 'record.jsonl');
  const checkpoint = join(dir, 'saved.checkpoint');
  const release = join(dir, 'release');
  const addin = fixture('findings/passing/FindingAddin.dll');
  let written: WrittenRecord;

  beforeAll(() => {
    mkdirSync(release);
    writeFileSync(join(release, 'FindingAddin.dll'), addin);
    const plant = new Map([[876_543, { signedSha256: createHash('sha256').update(addin).digest('hex'), file: 'FindingAddin.dll' }]]);
    written = writeRecord(path, COUNT, { keepLeaves: CHECKPOINT, plant, endsOf: new Set([500_000]) });
    expect(statSync(path).size).toBeGreaterThan(600e6);
    writeFileSync(checkpoint, checkpointOver(written.leaves, key.privateKey));
    written.leaves.length = 0;
  });

  test('serve record verify --file --checkpoint: intact and a continuation, in bounded memory', async () => {
    const rss = join(dir, 'verify.rss');
    const r = await runCliWithHeap(HEAP_MB, ['serve', 'record', 'verify', '--file', path, '--checkpoint', checkpoint, '--public-key', key.publicKey], {}, rss);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`${COUNT} entries, chain intact, last entry ${COUNT} (hash ${written.head.hash}), continues the checkpoint ${checkpoint}`);
    expect(r.out + r.err).not.toMatch(NO_CRASH);
    expect(Number(readFileSync(rss, 'utf8'))).toBeLessThan(PEAK_RSS_KB);
  });

  test('audit --record --checkpoint: the release file gets its entry, in bounded memory', async () => {
    const rss = join(dir, 'audit.rss');
    const args = ['audit', release, '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '--no-timestamp', '--format', 'json'];
    const r = await runCliWithHeap(
      HEAP_MB,
      [...args, '--record', path, '--checkpoint', checkpoint, '--record-key', key.publicKey],
      { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') },
      rss,
    );
    // Exit 1: the fixture is delay-signed (SG701).
    expect(r.code, r.err).toBe(1);
    const report = JSON.parse(r.out) as { signatureRecord: { entries: number }; files: { signature: { seq: number } | null }[] };
    expect(report.signatureRecord.entries).toBe(COUNT);
    expect(report.files.map((f) => f.signature?.seq)).toEqual([876_543]);
    expect(r.err).not.toMatch(NO_CRASH);
    expect(Number(readFileSync(rss, 'utf8'))).toBeLessThan(PEAK_RSS_KB);
  });

  test('cut back below the checkpoint (and torn): refused, naming what was found', async () => {
    // Cut in the middle of entry 500,001: 500,000 whole entries and a torn line.
    const whole = written.ends.get(500_000)!;
    truncateSync(path, whole + 100);
    const r = await runCliWithHeap(HEAP_MB, ['serve', 'record', 'verify', '--file', path, '--checkpoint', checkpoint, '--public-key', key.publicKey]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain(`${path} is truncated: line 500001, after entry 500000, is incomplete`);
    // Cut at a line's end: the chain is whole, but shorter than the checkpoint.
    truncateSync(path, whole);
    const cut = await runCliWithHeap(HEAP_MB, ['serve', 'record', 'verify', '--file', path, '--checkpoint', checkpoint, '--public-key', key.publicKey]);
    expect(cut.code, cut.err).toBe(1);
    expect(cut.out).toContain(
      `NOT A CONTINUATION of the checkpoint ${checkpoint}: ${path} holds 500000 entries, fewer than the ${CHECKPOINT} of the checkpoint`,
    );
    expect(r.out + r.err + cut.out + cut.err).not.toMatch(NO_CRASH);
  });
});
