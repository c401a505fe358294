// PostgreSQL as a backend: any number of API and worker nodes on one database. Jobs, their states, the queue's
// leases, the signature record, its tree, token hashes and the record key's agreement are in the database; job files
// in the data directory the nodes share, or in S3-compatible object storage (backends/s3, --blob-store).
import type { FastifyBaseLogger } from 'fastify';
import { dataDirRecordKeyPath, type RecordKey } from '../../record-key.js';
import type { Backend } from '../../ports.js';
import { openBlobs } from '../s3/index.js';
import { DEFAULT_LEASE_MS, describeDatabase, openDatabase } from './database.js';
import { SCHEMA_VERSION } from './migrations.js';
import { agreeOnRecordKey } from './pg-record-key.js';
import { PgSignatureRecord } from './pg-record.js';
import { PgJobStore } from './pg-store.js';
import { PgTokenStore } from './pg-tokens.js';

/** A logger that writes nothing: a store opened by an operator's command keeps the service's lines to the service. */
const QUIET = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => QUIET, level: 'silent' } as unknown as FastifyBaseLogger;
export const postgresBackend: Backend = {
  name: 'postgres',
  accepts: (options) => !!options.database,
  async openNode(options) {
    const database = options.database!;
    const role = options.role ?? 'all';
    // An empty --blob-store on a node means none (as `serve` has always taken it).
    const blobs = await openBlobs(options.blobStore || undefined);
    const pool = await openDatabase(database, (version) =>
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
          describeDatabase(database),
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
      where: describeDatabase(database),
      database,
    });
    jobs.start(role !== 'worker');
    return { jobs, tokens: new PgTokenStore(pool), queue: jobs, recordKey, close: () => jobs.close() };
  },
  async openJobStore(options) {
    const database = options.database!;
    const blobs = await openBlobs(options.blobStore);
    const pool = await openDatabase(database);
    const where = describeDatabase(database);
    const store = new PgJobStore(pool, { dataDir: options.dataDir, leaseMs: DEFAULT_LEASE_MS, log: QUIET, blobs, where });
    return { store, where, close: () => store.close() };
  },
  async openTokens(choice) {
    const pool = await openDatabase(choice.database!);
    return { keeper: new PgTokenStore(pool), close: () => pool.end() };
  },
  async openSignatureRecord(options) {
    const database = options.database!;
    const pool = await openDatabase(database);
    return { record: new PgSignatureRecord(pool, describeDatabase(database)), close: () => pool.end() };
  },
};
