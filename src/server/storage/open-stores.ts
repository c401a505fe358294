// Opens the stores a node uses: the data directory (default), or PostgreSQL when a database is given.
import type { FastifyBaseLogger } from 'fastify';
import pg from 'pg';
import { UsageError } from '../../core/errors.js';
import { narrowDirSync } from './fs-atomic.js';
import { JobStore } from '../jobs/job-store.js';
import { migrate } from './postgres/migrations.js';
import { PgJobStore } from './postgres/pg-store.js';
import { PgTokenStore } from './postgres/pg-tokens.js';
import { PgQueueWorker } from './postgres/queue-worker.js';
import type { ServerConfig } from '../server-config.js';
import { SigningWorker, type SigningWorkerOptions } from '../jobs/signing-worker.js';
import type { S3Blobs } from './s3-blobs.js';
import { NO_WORKER, type JobStateStore, type JobWorker, type NodeRole, type SignatureRecordReader } from '../jobs/store.js';
import { FileSignatureRecord } from './record-file.js';
import { dataDirRecordKeyPath, loadRecordKey, readRecordKeyFile, type RecordKey } from './record-key.js';
import { agreeOnRecordKey } from './postgres/pg-record-key.js';
import { PgSignatureRecord } from './postgres/pg-record.js';
import { TokenStore, type TokenKeeper } from '../identity/token-store.js';

/** How long a lease lasts without a heartbeat, by default: a dead worker's job is taken over after this. */
export const DEFAULT_LEASE_MS = 30_000;

export interface StoreOptions {
  readonly dataDir: string;
  readonly database?: string | undefined;
  /** s3://bucket/prefix?endpoint=…: job files in object storage (with a database only). */
  readonly blobStore?: string | undefined;
  readonly role?: NodeRole;
  readonly leaseMs?: number | undefined;
  readonly config: () => ServerConfig;
  readonly log: FastifyBaseLogger;
  /** How jobs are signed (signing-pool.ts): the signer and how many jobs at once. Default: in this thread, one. */
  readonly signing?: SigningWorkerOptions | undefined;
  /**
   * The record key file the configuration or the command line names (absolute); without it, the data directory's
   * record-key.pem, made at the first start.
   */
  readonly recordKeyFile?: string | undefined;
}

export interface Stores {
  readonly jobs: JobStateStore;
  readonly tokens: TokenKeeper;
  readonly worker: JobWorker;
  /**
   * The key this node signs the record's checkpoints with: the deployment's (one per database or data directory).
   * Undefined on a worker node, which serves no API and signs no checkpoint.
   */
  readonly recordKey: RecordKey | undefined;
  close(): Promise<void>;
}

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

/** A pool on the database with the schema migrated; a clear error when it cannot be reached. */
export async function openDatabase(database: string): Promise<pg.Pool> {
  if (!/^postgres(ql)?:\/\//.test(database)) throw new UsageError(`--database ${describeDatabase(database)} is not a PostgreSQL connection string`, 'Pass postgres://user:password@host:5432/database.');
  const pool = new pg.Pool({ connectionString: database, max: 10 });
  pool.on('error', () => {}); // an idle client's lost connection: the next query opens another
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end().catch(() => {});
    throw new UsageError(`cannot use the database ${describeDatabase(database)}: ${(error as Error).message}`, 'Check --database (or SIGNGATE_DATABASE_URL): the server must run and the role must be allowed to create tables.', 'SG_ERR_CONFIG');
  }
  return pool;
}

export async function openStores(options: StoreOptions): Promise<Stores> {
  const role = options.role ?? 'all';
  // Uploads, signed files and job records (and, without a database, token hashes): the service's alone.
  narrowDirSync(options.dataDir);
  const keyHint = 'Make it once with `signgate serve record key create --out FILE` and give every node of the deployment the same file.';
  // The AWS SDK is loaded only by nodes that use object storage.
  let blobs: S3Blobs | undefined;
  if (options.blobStore) {
    const s3 = await import('./s3-blobs.js');
    blobs = new s3.S3Blobs(s3.parseBlobStoreUrl(options.blobStore));
  }
  if (!options.database) {
    if (role !== 'all') throw new UsageError(`--role ${role} needs --database`, 'Separate API and worker nodes share their jobs through PostgreSQL: pass --database postgres://…, or run --role all.');
    if (options.blobStore) throw new UsageError('--blob-store needs --database', 'Object storage is for several nodes, which share their jobs through PostgreSQL: pass --database postgres://… as well.');
    // The key that signs the record's checkpoints: the one configured, else the data directory's, made at the first start.
    const recordKey = options.recordKeyFile ? readRecordKeyFile(options.recordKeyFile, keyHint) : loadRecordKey(options.dataDir, true);
    const jobs = new JobStore(options.dataDir);
    // A record that does not end where its head says refuses the start; a torn last line is moved aside.
    const torn = jobs.signatures.openForAppend();
    if (torn) options.log.warn(torn);
    return { jobs, tokens: new TokenStore(options.dataDir), worker: new SigningWorker(jobs, options.config, options.log, options.signing), recordKey, close: async () => {} };
  }
  const pool = await openDatabase(options.database);
  let recordKey: RecordKey | undefined;
  try {
    if (role !== 'worker') recordKey = await agreeOnRecordKey(pool, options.recordKeyFile ?? dataDirRecordKeyPath(options.dataDir), !options.recordKeyFile, describeDatabase(options.database));
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const jobs = new PgJobStore(pool, { dataDir: options.dataDir, leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS, log: options.log, blobs, where: describeDatabase(options.database) });
  jobs.start(role !== 'worker');
  let worker: JobWorker = NO_WORKER;
  if (role !== 'api') {
    const { signer, memory, observer } = options.signing ?? {};
    const signing = { ...(signer ? { signer } : {}), ...(memory ? { memory } : {}), ...(observer ? { observer } : {}) };
    const queue = new PgQueueWorker(jobs, options.config, options.log, { database: options.database, ...signing });
    await queue.start();
    worker = queue;
  }
  return { jobs, tokens: new PgTokenStore(pool), worker, recordKey, close: () => jobs.close() };
}

/**
 * The signature record of a deployment, for `serve record verify` and `serve record export`: in the database when
 * one is given, else in the data directory. `close` ends the database connection.
 */
export async function openSignatureRecord(options: { readonly dataDir: string; readonly database?: string | undefined }): Promise<{ record: SignatureRecordReader; close: () => Promise<void> }> {
  if (!options.database) return { record: new FileSignatureRecord(options.dataDir), close: async () => {} };
  const pool = await openDatabase(options.database);
  return { record: new PgSignatureRecord(pool, describeDatabase(options.database)), close: () => pool.end() };
}
