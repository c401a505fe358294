// The signature record in PostgreSQL: a row per entry in signgate_signatures, and the chain's head (the last
// entry's sequence number and hash) in the one row of signgate_signature_head. An append locks the head's row
// (SELECT … FOR UPDATE) inside the transaction that finishes the job, so that concurrent workers on any number of
// nodes append one after the other: sequence numbers without gaps, every entry linked to the one before, and
// entries exist exactly when the job they belong to finished. The entries and their hashes are the same as in the
// data directory's record (record/signature-record.ts), so `serve record export` writes the same lines.
import type { Pool, PoolClient } from 'pg';
import {
  chainEvents,
  ChainChecker,
  EMPTY_HEAD,
  entryLine,
  type ChainHead,
  type RecordVerification,
  type SignatureEntry,
  type SignatureEvent,
} from '../../../record/signature-record.js';
import type { Hash } from '../../../record/merkle.js';
import type { RecordTreeHashes, SignatureRecordReader } from '../../ports.js';

interface SignatureRow {
  seq: string;
  time: string;
  organization: string;
  user_id: string;
  token_id: string | null;
  job: string;
  file_name: string;
  uploaded_sha256: string;
  signed_sha256: string;
  option_id: number;
  key_token: string;
  key_location: string;
  prev_hash: string;
  hash: string;
}

/** A row as the entry it holds (the sequence number as a number: bigint comes as text). */
function entryOf(row: SignatureRow): SignatureEntry {
  return {
    seq: Number(row.seq),
    time: row.time,
    organization: row.organization,
    user: row.user_id,
    tokenId: row.token_id,
    job: row.job,
    file: row.file_name,
    uploadedSha256: row.uploaded_sha256,
    signedSha256: row.signed_sha256,
    optionId: row.option_id,
    keyToken: row.key_token,
    keyLocation: row.key_location,
    prev: row.prev_hash,
    hash: row.hash,
  };
}

const COLUMNS =
  'seq, time, organization, user_id, token_id, job, file_name, uploaded_sha256, signed_sha256, option_id, key_token, key_location, prev_hash, hash';

/**
 * Appends entries for `events` inside the caller's transaction on `client`: locks the head's row until the
 * transaction ends, so appends of every node queue up there and each continues the chain the one before committed.
 */
export async function appendSignatures(client: PoolClient, events: readonly SignatureEvent[]): Promise<SignatureEntry[]> {
  if (events.length === 0) return [];
  const { rows } = await client.query<{ seq: string; hash: string }>('SELECT seq, hash FROM signgate_signature_head WHERE id = 1 FOR UPDATE');
  if (!rows[0]) throw new Error('the signature record has no head row (signgate_signature_head): the database was changed by hand');
  const entries = chainEvents({ seq: Number(rows[0].seq), hash: rows[0].hash }, events);
  const values: unknown[] = [];
  const tuples = entries.map((e, i) => {
    values.push(
      e.seq,
      e.time,
      e.organization,
      e.user,
      e.tokenId,
      e.job,
      e.file,
      e.uploadedSha256,
      e.signedSha256,
      e.optionId,
      e.keyToken,
      e.keyLocation,
      e.prev,
      e.hash,
    );
    return `(${Array.from({ length: 14 }, (_, j) => `$${i * 14 + j + 1}`).join(', ')})`;
  });
  await client.query(`INSERT INTO signgate_signatures (${COLUMNS}) VALUES ${tuples.join(', ')}`, values);
  const last = entries[entries.length - 1]!;
  await client.query('UPDATE signgate_signature_head SET seq = $1, hash = $2 WHERE id = 1', [last.seq, last.hash]);
  return entries;
}

/** Rows read at once while verifying or exporting. */
const BATCH = 2000;

/** The record of a PostgreSQL deployment, read by `serve record verify` and `serve record export`. */
export class PgSignatureRecord implements SignatureRecordReader {
  constructor(
    private readonly pool: Pool,
    /** The database without its password. */
    readonly where: string,
  ) {}

  async head(): Promise<ChainHead> {
    const { rows } = await this.pool.query<{ seq: string; hash: string }>('SELECT seq, hash FROM signgate_signature_head WHERE id = 1');
    if (!rows[0]) throw new Error(`the signature record in ${this.where} has no head row (signgate_signature_head)`);
    return { seq: Number(rows[0].seq), hash: rows[0].hash };
  }

  /** Every entry in sequence order, a batch at a time. */
  entries(): AsyncGenerator<SignatureEntry> {
    return this.entriesAfter(0);
  }

  /** The entries after the first `count` (sequence numbers from count + 1), a batch at a time. */
  async *entriesAfter(count: number): AsyncGenerator<SignatureEntry> {
    let after = count;
    for (;;) {
      const { rows } = await this.pool.query<SignatureRow>(`SELECT ${COLUMNS} FROM signgate_signatures WHERE seq > $1 ORDER BY seq LIMIT ${BATCH}`, [after]);
      for (const row of rows) yield entryOf(row);
      if (rows.length < BATCH) return;
      after = Number(rows[rows.length - 1]!.seq);
    }
  }

  /** The job's entries, by the index on their job (the sequence numbers the job may hold are not needed). */
  async *entriesOfJob(job: string): AsyncGenerator<SignatureEntry> {
    const { rows } = await this.pool.query<SignatureRow>(`SELECT ${COLUMNS} FROM signgate_signatures WHERE job = $1 ORDER BY seq`, [job]);
    for (const row of rows) yield entryOf(row);
  }

  /** The stored hashes of the record's tree, in signgate_record_tree (shared by every node). */
  tree(): RecordTreeHashes {
    return new PgRecordTree(this.pool, this.where);
  }

  async verify(): Promise<RecordVerification> {
    // The head first: entries committed after it was read are accepted when they link.
    const checker = new ChainChecker(`the signature record in ${this.where}`);
    const { rows } = await this.pool.query<{ seq: string; hash: string }>('SELECT seq, hash FROM signgate_signature_head WHERE id = 1');
    if (!rows[0])
      return {
        entries: 0,
        head: EMPTY_HEAD,
        break: {
          line: null,
          seq: null,
          kind: 'head',
          message: `the signature record in ${this.where} has no head row (signgate_signature_head): the end of the record cannot be checked`,
        },
      };
    checker.expectHead({ seq: Number(rows[0].seq), hash: rows[0].hash });
    for await (const entry of this.entries()) if (checker.add(entry, null)) break;
    return checker.finish();
  }

  async exportTo(write: (lines: string) => void | Promise<void>): Promise<number> {
    let count = 0;
    let chunk = '';
    for await (const entry of this.entries()) {
      chunk += entryLine(entry);
      if (++count % BATCH === 0) {
        await write(chunk);
        chunk = '';
      }
    }
    if (chunk) await write(chunk);
    return count;
  }
}

/** Hashes written in one statement. */
const TREE_BATCH = 5000;

/**
 * The stored hashes of the record's tree in PostgreSQL: a row per hash (idx, hash). Every node that reads the
 * record writes the hashes of the entries it reads, the same bytes whichever node computes them: a hash another
 * node stored first is kept (ON CONFLICT DO NOTHING), and each write is one statement per batch, so the rows are
 * those from 0 to a count without gaps.
 */
export class PgRecordTree implements RecordTreeHashes {
  constructor(
    private readonly pool: Pool,
    private readonly where: string,
  ) {}

  async count(): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>('SELECT coalesce(max(idx) + 1, 0) AS n FROM signgate_record_tree');
    return Number(rows[0]!.n);
  }

  async read(indexes: readonly number[]): Promise<Hash[]> {
    if (indexes.length === 0) return [];
    const { rows } = await this.pool.query<{ idx: string; hash: Buffer }>('SELECT idx, hash FROM signgate_record_tree WHERE idx = ANY($1::bigint[])', [
      indexes,
    ]);
    const byIndex = new Map(rows.map((r) => [Number(r.idx), r.hash]));
    return indexes.map((i) => {
      const hash = byIndex.get(i);
      if (!hash) throw new Error(`hash ${i} of the record's tree is not stored in ${this.where} (signgate_record_tree)`);
      return hash;
    });
  }

  async write(at: number, hashes: readonly Hash[]): Promise<void> {
    for (let from = 0; from < hashes.length; from += TREE_BATCH) {
      const batch = hashes.slice(from, from + TREE_BATCH);
      await this.pool.query('INSERT INTO signgate_record_tree (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[]) ON CONFLICT (idx) DO NOTHING', [
        batch.map((_, i) => at + from + i),
        batch,
      ]);
    }
  }

  async reset(): Promise<void> {
    await this.pool.query('DELETE FROM signgate_record_tree');
  }
}
