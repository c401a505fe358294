// The PostgreSQL schema, as numbered migrations kept in the repository. Every node runs the ones its database
// lacks when it starts, under an advisory lock so that nodes starting together apply each exactly once.
// Never edit a released migration: add the next number.
import type { Pool } from 'pg';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
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
    name: 'file count beside the files, for lists',
    // GET /assemblies reads it instead of opening every job's files document (9,999 jobs: 250 ms -> see bench).
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN file_count integer NOT NULL DEFAULT 0;
      UPDATE signgate_jobs SET file_count = jsonb_array_length(files);
    `,
  },
  {
    version: 3,
    name: 'the Idempotency-Key of an upload',
    // A client that lost the answer to its upload sends it again with the same key and gets the same job.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN idempotency_key text;
      CREATE INDEX signgate_jobs_idempotency ON signgate_jobs (organization, idempotency_key) WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 4,
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
    name: 'a job that waits for its signing key',
    // Since when, and for which options (organization/optionId): key-wait.ts; jobs/pg-queue-worker.ts leaves such a
    // job to workers that can use the key.
    sql: `
      ALTER TABLE signgate_jobs ADD COLUMN key_wait_since timestamptz, ADD COLUMN key_wait_options jsonb;
    `,
  },
];

/** An arbitrary constant: the advisory lock every node takes while it migrates. */
const MIGRATION_LOCK = 0x5167_6174;

/** Applies the migrations the database lacks; resolves to the versions applied now. */
export async function migrate(pool: Pool): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS signgate_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM signgate_migrations')).rows.map((r) => r.version));
    const applied: number[] = [];
    for (const m of MIGRATIONS) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO signgate_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      applied.push(m.version);
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
