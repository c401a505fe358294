// The PostgreSQL schema, as numbered migrations kept in the repository. Every node runs the ones its database
// lacks when it starts, under an advisory lock so that nodes starting together apply each exactly once.
// Never edit a released migration: add the next number.
import type { Pool } from 'pg';
import { UsageError } from '../../../core/errors.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /**
   * The oldest schema version whose nodes may still run on a database with this migration (side by side during a
   * rolling upgrade, or after a rollback): a migration that only adds what older nodes ignore keeps the previous
   * migration's; one that changes what they read sets its own version. Recorded in signgate_migrations.oldest_reader.
   */
  readonly oldestReader: number;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    oldestReader: 1,
    name: 'jobs, organizations, tokens',
    sql: `
      -- One row per organization that ever uploaded: locked while a job slot is reserved, so that the job
      -- limit holds exactly across processes.
      CREATE TABLE signgate_organizations (
        id text PRIMARY KEY
      );
      -- A job from the moment its upload starts. uploading: not visible, its lease kept alive by the API node
      -- receiving it (expired: swept with its files); queued -> processing (leased by a worker, heartbeat) ->
      -- finished. files holds each file's name, size, SHA-256, state and messages.
      CREATE TABLE signgate_jobs (
        organization text NOT NULL REFERENCES signgate_organizations (id),
        id uuid NOT NULL,
        state text NOT NULL CHECK (state IN ('uploading', 'queued', 'processing', 'finished')),
        created_at timestamptz NOT NULL DEFAULT now(),
        comment text,
        files jsonb NOT NULL DEFAULT '[]',
        result_file text,
        lease_owner text,
        lease_until timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        PRIMARY KEY (organization, id)
      );
      CREATE INDEX signgate_jobs_list ON signgate_jobs (organization, created_at, id) WHERE state <> 'uploading';
      CREATE INDEX signgate_jobs_queue ON signgate_jobs (created_at) WHERE state IN ('queued', 'processing');
      CREATE INDEX signgate_jobs_uploads ON signgate_jobs (lease_until) WHERE state = 'uploading';
      -- Personal access tokens, by the SHA-256 of the token: the token itself is never stored.
      CREATE TABLE signgate_tokens (
        hash text PRIMARY KEY,
        organization text NOT NULL,
        user_id text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE INDEX signgate_tokens_user ON signgate_tokens (organization, user_id);
    `,
  },
  {
    version: 2,
    oldestReader: 2,
    name: 'file count beside the files, for lists',
    // GET /assemblies reads it instead of opening every job's files document (9,999 jobs: 250 ms -> see bench).
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN file_count integer NOT NULL DEFAULT 0;
      UPDATE signgate_jobs SET file_count = jsonb_array_length(files);
    `,
  },
  {
    version: 3,
    oldestReader: 3,
    name: 'the Idempotency-Key of an upload',
    // A client that lost the answer to its upload sends it again with the same key and gets the same job.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN idempotency_key text;
      CREATE INDEX signgate_jobs_idempotency ON signgate_jobs (organization, idempotency_key) WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 4,
    oldestReader: 4,
    name: 'the signature record; who uploaded a job, and the keys it was accepted with',
    // An entry per file signed and returned, chained by hash (pg-record.ts); the head's one row is what appends lock.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN submitted_by jsonb, ADD COLUMN accepted_keys jsonb;
      CREATE TABLE signgate_signatures (
        seq bigint PRIMARY KEY,
        time text NOT NULL,
        organization text NOT NULL,
        user_id text NOT NULL,
        token_id text,
        job text NOT NULL,
        file_name text NOT NULL,
        uploaded_sha256 text NOT NULL,
        signed_sha256 text NOT NULL,
        option_id integer NOT NULL,
        key_token text NOT NULL,
        key_location text NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL
      );
      CREATE INDEX signgate_signatures_signed ON signgate_signatures (signed_sha256);
      CREATE TABLE signgate_signature_head (
        id integer PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        hash text NOT NULL
      );
      INSERT INTO signgate_signature_head (id, seq, hash) VALUES (1, 0, '${'0'.repeat(64)}');
    `,
  },
  {
    version: 5,
    oldestReader: 4,
    name: "the deployment's record key",
    // The public half of the key every node signs checkpoints with, recorded by the first node (pg-record-key.ts).
    sql: `
      CREATE TABLE signgate_record_key (
        id integer PRIMARY KEY CHECK (id = 1),
        public_key text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        recorded_by text NOT NULL
      );
    `,
  },
  {
    version: 6,
    oldestReader: 4,
    name: 'a job that waits for its signing key',
    // Since when, and for which options (organization/optionId): key-wait.ts; jobs/queue-worker.ts leaves such a
    // job to workers that can use the key.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN key_wait_since timestamptz, ADD COLUMN key_wait_options jsonb;
    `,
  },
  {
    version: 7,
    oldestReader: 4,
    name: 'when a job finished, for retention',
    // Set by the database as a job turns finished, whichever release's node finished it (side by side too); jobs
    // finished before it count from created_at. The index serves the retention's sweep of every organization.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN finished_at timestamptz;
      CREATE FUNCTION signgate_job_finished_at() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.state = 'finished' AND OLD.state IS DISTINCT FROM 'finished' THEN NEW.finished_at := now(); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER signgate_job_finished_at BEFORE UPDATE OF state ON signgate_jobs
        FOR EACH ROW EXECUTE FUNCTION signgate_job_finished_at();
      CREATE INDEX signgate_jobs_finished ON signgate_jobs ((coalesce(finished_at, created_at))) WHERE state = 'finished';
    `,
  },
  {
    version: 8,
    oldestReader: 4,
    name: "the record's tree and its entries by job",
    // Added only: older nodes neither read nor write them (and keep the record in memory as before).
    sql: `
      -- The stored hashes of the signature record's Merkle tree, in Go tlog's order: derived from the entries and
      -- written by the nodes that read them, so that checkpoints and proofs read O(log n) of them.
      CREATE TABLE signgate_record_tree (
        idx bigint PRIMARY KEY,
        hash bytea NOT NULL CHECK (length(hash) = 32)
      );
      CREATE INDEX signgate_signatures_job ON signgate_signatures (job);
    `,
  },
];

/** An arbitrary constant: the advisory lock every node takes while it migrates. */
const MIGRATION_LOCK = 0x5167_6174;

/** The schema version this release knows: its last migration. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** A database on a schema this release cannot run on: newer migrations that do not let it read. */
export class SchemaTooNew extends UsageError {
  constructor(databaseVersion: number, blocking: readonly { version: number; name: string; oldestReader: number | null }[]) {
    const named = blocking.map(
      (m) =>
        `${m.version} ("${m.name}", ${m.oldestReader === null ? 'which does not say which releases may read it' : `readable from schema ${m.oldestReader} on`})`,
    );
    super(
      `the database is on schema ${databaseVersion}, newer than this release's ${SCHEMA_VERSION}, and migration${blocking.length > 1 ? 's' : ''} ${named.join(', ')} do${blocking.length > 1 ? '' : 'es'} not let a node of schema ${SCHEMA_VERSION} run on it`,
      `Start this node with the release the other nodes run, or a newer one; docs/deploy.md#side-by-side-and-rolling-back says which releases may share a database.`,
      'SG_ERR_SCHEMA_NEWER',
    );
  }
}

/** What a node starting on a database newer than it knows should say: nothing, or a warning line (it may run). */
export interface MigrationOutcome {
  /** The versions applied now. */
  readonly applied: number[];
  /** The database's schema, when newer than this release's (and readable by it): for a warning at start. */
  readonly newerSchema?: number;
}

/**
 * Applies the migrations the database lacks; refuses a database on a schema newer than this release's unless each
 * newer migration says nodes of this schema may still run on it (`oldest_reader`).
 * @throws SchemaTooNew naming both versions and the migrations that stand in the way
 */
export async function migrate(pool: Pool): Promise<MigrationOutcome> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS signgate_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    // Added by this release, for every later one: which schemas may still run on a database with each migration.
    // Rows written before it (or by a release that does not fill it in) leave it null, read as "not said": refused.
    await client.query('ALTER TABLE signgate_migrations ADD COLUMN IF NOT EXISTS oldest_reader integer');
    for (const m of MIGRATIONS)
      await client.query('UPDATE signgate_migrations SET oldest_reader = $2 WHERE version = $1 AND oldest_reader IS NULL', [m.version, m.oldestReader]);
    const rows = (
      await client.query<{ version: number; name: string; oldest_reader: number | null }>(
        'SELECT version, name, oldest_reader FROM signgate_migrations ORDER BY version',
      )
    ).rows;
    const newer = rows.filter((r) => r.version > SCHEMA_VERSION);
    const blocking = newer.filter((r) => r.oldest_reader === null || r.oldest_reader > SCHEMA_VERSION);
    if (blocking.length)
      throw new SchemaTooNew(
        newer[newer.length - 1]!.version,
        blocking.map((r) => ({ version: r.version, name: r.name, oldestReader: r.oldest_reader })),
      );
    const done = new Set(rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO signgate_migrations (version, name, oldest_reader) VALUES ($1, $2, $3)', [m.version, m.name, m.oldestReader]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      applied.push(m.version);
    }
    return { applied, ...(newer.length ? { newerSchema: newer[newer.length - 1]!.version } : {}) };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
