// The service's signature record served from its stored tree (RecordLog over RecordTreeHashes): the same
// checkpoints and proofs as the whole tree in memory, the tree taken up again after a restart, a tree file that a
// crash cut off or that does not match the record built again, and a job's entry that the record's tree does not
// hold refused. On the data directory (signature-record.tree) and on PostgreSQL (signgate_record_tree).
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, test, vi } from 'vitest';
import { entryLeaf, parseCheckpoint, recordPrivateKey, verifierOf } from '../../../src/record/checkpoint.js';
import { consistencyProof, inclusionProof, rootHash } from '../../../src/record/merkle.js';
import { chainEvents, EMPTY_HEAD, type SignatureEvent } from '../../../src/record/signature-record.js';
import { storedHashCount } from '../../../src/record/stored-tree.js';
import { migrate } from '../../../src/server/backends/postgres/migrations.js';
import { appendSignatures, PgSignatureRecord } from '../../../src/server/backends/postgres/pg-record.js';
import { RecordLog } from '../../../src/server/record/record-checkpoint.js';
import { FileSignatureRecord, RECORD_FILE } from '../../../src/server/backends/data-dir/record-file.js';
import type { RecordKey } from '../../../src/server/record-key.js';
import { RECORD_TREE_FILE } from '../../../src/server/backends/data-dir/record-tree-file.js';
import type { RecordTreeHashes, SignatureRecordReader } from '../../../src/server/ports.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';

const privateKey = recordPrivateKey(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
const key: RecordKey = { privateKey, verifier: verifierOf(privateKey), path: 'test key' };
const sha = (n: number) => createHash('sha256').update(String(n)).digest('hex');
/** Event n belongs to job-floor(n/3): three files a job. */
const event = (n: number): SignatureEvent => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  organization: 'sandbox',
  user: 'ci',
  tokenId: null,
  job: `job-${Math.floor(n / 3)}`,
  file: `Addins/F${n}.dll`,
  uploadedSha256: sha(n),
  signedSha256: sha(n + 1),
  optionId: 12345,
  keyToken: '0123456789abcdef',
  keyLocation: 'keys/12345.snk',
});
const events = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => event(from + i + 1));
const LEAVES = chainEvents(EMPTY_HEAD, events(0, 300)).map(entryLeaf);
const b64 = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('base64'));

/** What a log serves for `size` entries must be what the whole tree in memory gives. */
async function expectServes(log: RecordLog, size: number): Promise<void> {
  await log.refresh();
  expect(log.size).toBe(size);
  expect(parseCheckpoint(await log.checkpoint(), key.verifier, 'the log').root.equals(rootHash(LEAVES, 0, size))).toBe(true);
  for (const from of [1, 2, 7, size - 1]) expect(await log.consistency(from, size)).toEqual(b64(consistencyProof(LEAVES, from, size)));
  const job = await log.jobProof(`job-${Math.floor(size / 3) - 1}`);
  for (const e of job!.entries) expect(e.inclusionProof).toEqual(b64(inclusionProof(LEAVES, e.leafIndex, size)));
}

describe('the record served from its stored tree, in a data directory', () => {
  test('read on in parts and after a restart: the same checkpoints and proofs; the tree file holds the stored hashes only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-tree-'));
    const record = new FileSignatureRecord(dir);
    await record.append(events(0, 100));
    await expectServes(new RecordLog(record, key), 100);
    await record.append(events(100, 250));
    // A new process: it takes the tree up at its 100 entries (found by sequence number) and reads on from there.
    const restarted = new RecordLog(new FileSignatureRecord(dir), key);
    await expectServes(restarted, 250);
    expect(statSync(join(dir, RECORD_TREE_FILE)).size).toBe(32 * storedHashCount(250));
    await record.append(events(250, 300));
    await expectServes(restarted, 300);
  });

  test('a tree file cut off within a leaf is written on from the last whole leaf; one whose last leaf is not the record is built again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-tree-'));
    const record = new FileSignatureRecord(dir);
    await record.append(events(0, 256));
    await new RecordLog(record, key).refresh();
    const tree = join(dir, RECORD_TREE_FILE);
    const whole = readFileSync(tree);
    // Leaf 255 completes eight subtrees: cut within its hashes, the file holds 255 whole leaves.
    truncateSync(tree, whole.length - 3 * 32);
    await expectServes(new RecordLog(new FileSignatureRecord(dir), key), 256);
    expect(readFileSync(tree).equals(whole)).toBe(true);
    // A flipped byte in the last leaf's hash: not the record's entry, so the whole tree is made again.
    const flipped = Buffer.from(whole);
    flipped[32 * (storedHashCount(255) + 0)]! ^= 1;
    writeFileSync(tree, flipped);
    await expectServes(new RecordLog(new FileSignatureRecord(dir), key), 256);
    expect(readFileSync(tree).equals(whole)).toBe(true);
  });

  test('a write of the tree that fails (a full disk) fails the read; the next read takes the tree up again and serves the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-tree-'));
    const record = new FileSignatureRecord(dir);
    await record.append(events(0, 150));
    await new RecordLog(record, key).refresh();
    await record.append(events(150, 300));
    const tree = record.tree();
    let failures = 1;
    const failingOnce: RecordTreeHashes = {
      count: () => tree.count(),
      read: (indexes) => tree.read(indexes),
      reset: () => tree.reset(),
      write: (at, hashes) => (failures-- > 0 ? Promise.reject(new Error('ENOSPC: no space left on device')) : tree.write(at, hashes)),
    };
    const reader = Object.assign(Object.create(record) as FileSignatureRecord, { tree: () => failingOnce });
    const log = new RecordLog(reader, key);
    await expect(log.refresh()).rejects.toThrow(/ENOSPC/);
    expect(log.size).toBe(150);
    await expectServes(log, 300);
  });

  test('a job finished by an older release (no sequence numbers in its job file) is looked for in the whole record once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-tree-'));
    const record = new FileSignatureRecord(dir);
    await record.append(events(0, 60));
    const log = new RecordLog(record, key);
    const scans = vi.spyOn(record, 'entries');
    const first = await log.jobProof('job-7');
    expect(first?.entries.map((e) => e.entry.seq)).toEqual([21, 22, 23]);
    expect(await log.jobProof('job-7')).toEqual(first);
    expect(scans).toHaveBeenCalledTimes(1);
  });

  test("a job's entry changed in the record after its tree was stored: no proof is given for it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-record-tree-'));
    const record = new FileSignatureRecord(dir);
    const entries = await record.append(events(0, 30));
    const log = new RecordLog(record, key);
    await log.refresh();
    const path = join(dir, RECORD_FILE);
    // Entry 10 (job-3) names another file, with a hash that fits its content: only the stored leaf can tell.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"Addins/F10.dll"', '"Addins/X10.dll"'));
    await expect(log.jobProof('job-3', [9, 10, 11])).rejects.toThrow(/entry 10 of the signature record .* is not the entry the record's tree holds there/);
    expect((await log.jobProof('job-4', [12, 13, 14]))?.entries.map((e) => e.entry.file)).toEqual(entries.slice(11, 14).map((e) => e.file));
    // A job that names an entry the record does not hold.
    await expect(log.jobProof('job-4', [12, 99])).rejects.toThrow(/holds no entry 99, which job job-4 names/);
  });
});

describe.skipIf(!requireDatabase())('the record served from its stored tree, in PostgreSQL', () => {
  async function append(pool: pg.Pool, list: readonly SignatureEvent[]): Promise<void> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await appendSignatures(client, list);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }

  test('two nodes read on at once and write one tree; a restart takes it up; a changed row gets no proof', async () => {
    const pool = new pg.Pool({ connectionString: await freshDatabase(), max: 6 });
    try {
      await migrate(pool);
      const record: SignatureRecordReader = new PgSignatureRecord(pool, 'the test database');
      await append(pool, events(0, 200));
      const a = new RecordLog(record, key);
      const b = new RecordLog(new PgSignatureRecord(pool, 'the test database'), key);
      await Promise.all([a.refresh(), b.refresh()]);
      await expectServes(a, 200);
      await expectServes(b, 200);
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM signgate_record_tree');
      expect(Number(rows[0]!.n)).toBe(storedHashCount(200));
      await append(pool, events(200, 300));
      await expectServes(new RecordLog(new PgSignatureRecord(pool, 'the test database'), key), 300);
      await pool.query(`UPDATE signgate_signatures SET file_name = 'Forged.dll' WHERE seq = 10`);
      await expect(a.jobProof('job-3')).rejects.toThrow(/entry 10 of the signature record .* is not the entry the record's tree holds there/);
    } finally {
      await pool.end();
    }
  });
});
