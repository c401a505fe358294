// `signgate/server`: the reference signing service as a library (`import { buildServer } from 'signgate/server'`).
// Kept apart from the main entry so that importing the library never loads fastify. Its configuration, its stores
// (data directory or PostgreSQL, S3) and tokens, and its signature record with the record's key and checkpoints
// (the record's format, and reading a record public key, are `signgate/record`'s).
// How a process runs it (signing worker threads, heap pacing) is `signgate serve`'s, not this API's:
// buildServer({ signingWorkers }) chooses the threads.
export { buildServer, type BuildServerOptions, type Principal, type ServerTimeouts } from './server/http/app.js';
export {
  parseServerConfig,
  watchServerConfigFile,
  USER_ROLE,
  DEFAULT_SERVICE_NAME,
  type ServerConfig,
  type ServerConfigFile,
  type Organization,
  type License,
  type OptionKey,
} from './server/server-config.js';
export { TokenStore } from './server/backends/data-dir/token-file.js';
export { type TokenKeeper } from './server/ports.js';
export { type StoredToken, type CreatedToken, type RevokeSelector } from './server/domain/tokens.js';
export { parseRateLimit } from './server/identity/rate-limit.js';
export { DEFAULT_RATE_LIMITS, type RateLimit, type RateLimitSettings } from './server/server-config.js';
export { type JobStateStore, type SignatureRecordReader } from './server/ports.js';
export { type JobWorker, type NodeRole, NODE_ROLES } from './server/jobs/job-worker.js';
export { keysForJob, type JobKeys } from './server/jobs/key-rotation.js';
export { openSignatureRecord } from './server/backends/index.js';
export { openDatabase } from './server/backends/postgres/database.js';
export { openStores, type StoreOptions, type Stores } from './server/http/node-stores.js';
export { FileSignatureRecord, RECORD_FILE, RECORD_HEAD_FILE } from './server/backends/data-dir/record-file.js';
export { PgSignatureRecord } from './server/backends/postgres/pg-record.js';
export { loadRecordKey, RECORD_KEY_FILE, RECORD_PUBLIC_KEY_FILE, type RecordKey } from './server/record-key.js';
export { verifiedLeaves, recordCheckpoint, checkpointProblem } from './server/record/record-checkpoint.js';
export { PgJobStore } from './server/backends/postgres/pg-store.js';
export { PgTokenStore } from './server/backends/postgres/pg-tokens.js';
export { MIGRATIONS, migrate, type Migration } from './server/backends/postgres/migrations.js';
// S3Blobs itself is imported from its module by the nodes that use it: the AWS SDK is large.
export type { S3Blobs, S3BlobOptions } from './server/backends/s3/s3-blobs.js';
