// A signature record larger than the heap it is read under: `serve record verify` (--file and --data-dir, with a
// checkpoint), `serve record export` and `audit --record` read about 64 MB under a heap of 50 or 100 MB a line at
// a time, computing the checkpoint's root from a stack of log2(n) subtree hashes on the way. Writing and reading
// that record several times is most of a minute of CPU: this file runs in the heavy leg (vitest.config.ts,
// `npm run test:heavy`); the hostile lines stay in npm test (test/record/record-bounds.test.ts), a record of 600 MB
// is test/record/record-large.test.ts.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { RECORD_FILE } from '../../src/server/backends/data-dir/record-file.js';
import { fixture } from '../helpers/fixtures.js';
import { checkpointOver, NO_CRASH, recordDataDir, recordKeyPair, recordRelease, runCliWithHeap, writeRecord } from '../helpers/record-files.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-record-over-heap-'));
const key = recordKeyPair();
const dataDirWith = (path: string, head: { seq: number; hash: string }): string => recordDataDir(dir, path, head, key.publicKey);
const audit = recordRelease(dir);
const addinSha256 = createHash('sha256').update(fixture('findings/passing/FindingAddin.dll')).digest('hex');

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
    const plant = new Map([
      [54_321, { signedSha256: addinSha256, file: 'FindingAddin.dll' }],
      [99_999, { signedSha256: addinSha256 }],
    ]);
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

  test("a rewritten entry before the checkpoint's size is found from the root computed on the way", async () => {
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
