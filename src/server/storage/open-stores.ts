// Opening what is stored: the PostgreSQL database (migrated), and the signature record of the data directory or
// the database. The stores, tokens and worker of a whole node are opened above, in http/node-stores.ts.
import pg from 'pg';
import { UsageError } from '../../core/errors.js';
import { migrate, SchemaTooNew } from './postgres/migrations.js';
import type { FastifyBaseLogger } from 'fastify';
import type { JobStateStore, SignatureRecordReader } from './store.js';
import { JobStore } from './job-store.js';
import { PgJobStore } from './postgres/pg-store.js';
import { FileSignatureRecord } from './record-file.js';
import { PgSignatureRecord } from './postgres/pg-record.js';

/** How long a lease lasts without a heartbeat, by default: a dead worker's job is taken over after this. */
export const DEFAULT_LEASE_MS = 30_000;

/** A connection string for messages: never its password. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    // `postgres:user:PW@host/db` (no //) parses with no host and the password in its path: show the scheme only.
    if (!u.host) return `${u.protocol} (rest not shown)`;
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return '(an unreadable connection string)';
  }
}

/**
 * A pool on the database with the schema migrated; a clear error when it cannot be reached. `newerSchema` hears of a
 * database on a newer schema that this release may still run on (side by side); one it may not run on is refused.
 * @throws SchemaTooNew (SG_ERR_SCHEMA_NEWER) for a newer schema that does not let this release run on it
 */
export async function openDatabase(database: string, newerSchema: (version: number) => void = () => {}): Promise<pg.Pool> {
  if (!/^postgres(ql)?:\/\//.test(database))
    throw new UsageError(`--database ${describeDatabase(database)} is not a PostgreSQL connection string`, 'Pass postgres://user:password@host:5432/database.');
  const pool = new pg.Pool({ connectionString: database, max: 10 });
  pool.on('error', () => {}); // an idle client's lost connection: the next query opens another
  try {
    const outcome = await migrate(pool);
    if (outcome.newerSchema !== undefined) newerSchema(outcome.newerSchema);
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof SchemaTooNew) throw error;
    throw new UsageError(
      `cannot use the database ${describeDatabase(database)}: ${(error as Error).message}`,
      'Check --database (or SIGNGATE_DATABASE_URL): the server must run and the role must be allowed to create tables.',
      'SG_ERR_CONFIG',
    );
  }
  return pool;
}

/**
 * The signature record of a deployment, for `serve record verify` and `serve record export`: in the database when
 * one is given, else in the data directory. `close` ends the database connection.
 */
export async function openSignatureRecord(options: {
  readonly dataDir: string;
  readonly database?: string | undefined;
}): Promise<{ record: SignatureRecordReader; close: () => Promise<void> }> {
  if (!options.database) return { record: new FileSignatureRecord(options.dataDir), close: async () => {} };
  const pool = await openDatabase(options.database);
  return { record: new PgSignatureRecord(pool, describeDatabase(options.database)), close: () => pool.end() };
}

/** A logger that writes nothing: a store opened by an operator's command keeps the service's lines to the service. */
const QUIET = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => QUIET, level: 'silent' } as unknown as FastifyBaseLogger;

/**
 * The jobs of a deployment, for an operator's command (`serve jobs list|prune`): the data directory's, or the
 * database's with its bucket (`blobStore`). Nothing is started (no sweeps, no queue); `close` ends the connection.
 * @throws UsageError for --blob-store without --database
 */
export async function openJobStore(options: {
  readonly dataDir: string;
  readonly database?: string | undefined;
  readonly blobStore?: string | undefined;
}): Promise<{ store: JobStateStore; where: string; close: () => Promise<void> }> {
  if (!options.database) {
    if (options.blobStore !== undefined)
      throw new UsageError('--blob-store needs --database', 'Job files are in object storage only on a PostgreSQL deployment: pass --database too.');
    return { store: new JobStore(options.dataDir), where: options.dataDir, close: async () => {} };
  }
  const pool = await openDatabase(options.database);
  let blobs;
  if (options.blobStore !== undefined) {
    const s3 = await import('./s3-blobs.js');
    blobs = new s3.S3Blobs(s3.parseBlobStoreUrl(options.blobStore));
  }
  const where = describeDatabase(options.database);
  const store = new PgJobStore(pool, { dataDir: options.dataDir, leaseMs: DEFAULT_LEASE_MS, log: QUIET, blobs, where });
  return { store, where, close: () => store.close() };
}
