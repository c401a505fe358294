// Opens the stores a node uses: the data directory (default), or PostgreSQL when a database is given; and with them
// the token store (identity/) and the signing worker (jobs/) that go with each. Here, above identity/, jobs/ and
// storage/, because it puts the three together.
import type { FastifyBaseLogger } from 'fastify';
import { UsageError } from '../../core/errors.js';
import { PgTokenStore } from '../identity/pg-tokens.js';
import { TokenStore, type TokenKeeper } from '../identity/token-store.js';
import { NO_WORKER, type JobWorker, type NodeRole } from '../jobs/job-worker.js';
import { PgQueueWorker } from '../jobs/pg-queue-worker.js';
import { SigningWorker, type SigningWorkerOptions } from '../jobs/signing-worker.js';
import type { ServerConfig } from '../server-config.js';
import { narrowDirSync } from '../storage/fs-atomic.js';
import { JobStore } from '../storage/job-store.js';
import { DEFAULT_LEASE_MS, describeDatabase, openDatabase } from '../storage/open-stores.js';
import { SCHEMA_VERSION } from '../storage/postgres/migrations.js';
import { agreeOnRecordKey } from '../storage/postgres/pg-record-key.js';
import { PgJobStore } from '../storage/postgres/pg-store.js';
import { dataDirRecordKeyPath, loadRecordKey, readRecordKeyFile, type RecordKey } from '../storage/record-key.js';
import type { S3Blobs } from '../storage/s3-blobs.js';
import type { JobStateStore } from '../storage/store.js';

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

export async function openStores(options: StoreOptions): Promise<Stores> {
  const role = options.role ?? 'all';
  // Uploads, signed files and job records (and, without a database, token hashes): the service's alone.
  narrowDirSync(options.dataDir);
  const keyHint = 'Make it once with `signgate serve record key create --out FILE` and give every node of the deployment the same file.';
  // The AWS SDK is loaded only by nodes that use object storage.
  let blobs: S3Blobs | undefined;
  if (options.blobStore) {
    const s3 = await import('../storage/s3-blobs.js');
    blobs = new s3.S3Blobs(s3.parseBlobStoreUrl(options.blobStore));
  }
  if (!options.database) {
    if (role !== 'all')
      throw new UsageError(
        `--role ${role} needs --database`,
        'Separate API and worker nodes share their jobs through PostgreSQL: pass --database postgres://…, or run --role all.',
      );
    if (options.blobStore)
      throw new UsageError(
        '--blob-store needs --database',
        'Object storage is for several nodes, which share their jobs through PostgreSQL: pass --database postgres://… as well.',
      );
    // The key that signs the record's checkpoints: the one configured, else the data directory's, made at the first start.
    const recordKey = options.recordKeyFile ? readRecordKeyFile(options.recordKeyFile, keyHint) : loadRecordKey(options.dataDir, true);
    const jobs = new JobStore(options.dataDir);
    // A record that does not end where its head says refuses the start; a torn last line is moved aside.
    const torn = jobs.signatures.openForAppend();
    if (torn) options.log.warn(torn);
    return {
      jobs,
      tokens: new TokenStore(options.dataDir),
      worker: new SigningWorker(jobs, options.config, options.log, options.signing),
      recordKey,
      close: async () => {},
    };
  }
  const pool = await openDatabase(options.database, (version) =>
    options.log.warn(
      { schema: version, known: SCHEMA_VERSION },
      `the database is on schema ${version}, newer than this release's ${SCHEMA_VERSION}; its newer migrations let this release run on it (side by side, docs/deploy.md#side-by-side-and-rolling-back): upgrade this node soon`,
    ),
  );
  let recordKey: RecordKey | undefined;
  try {
    if (role !== 'worker')
      recordKey = await agreeOnRecordKey(
        pool,
        options.recordKeyFile ?? dataDirRecordKeyPath(options.dataDir),
        !options.recordKeyFile,
        describeDatabase(options.database),
      );
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  const jobs = new PgJobStore(pool, {
    dataDir: options.dataDir,
    leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
    log: options.log,
    blobs,
    where: describeDatabase(options.database),
  });
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
