// The reference signing service as a library: `import { buildServer } from 'signgate/server'`. Kept apart from
// the main entry so that importing the library never loads fastify.
export { buildServer, type BuildServerOptions, type Principal } from './server/http/app.js';
export { parseServerConfig, watchServerConfigFile, withoutPinAttributes, USER_ROLE, DEFAULT_SERVICE_NAME, type ServerConfig, type ServerConfigFile, type Organization, type License, type OptionKey } from './server/server-config.js';
export { TokenStore, hashToken, tokenIdOf, type StoredToken } from './server/identity/token-store.js';
export { SigningPool, defaultSigningWorkers, signingOptions } from './server/jobs/signing-pool.js';
export { paceGarbageCollectionForJobs, SERVICE_HEAP_GROWING_PERCENT } from './server/heap.js';
export { signAndVerify, signAndPack, inProcessSigner, type FileSigner, type SignedFile } from './server/jobs/sign-file.js';
export { parseRateLimit } from './server/identity/rate-limit.js';
export { DEFAULT_RATE_LIMITS, type RateLimit, type RateLimitSettings } from './server/server-config.js';
export { archiveZipLimits, archiveNameProblems, PER_FILE_LOGS, type ArchiveNameProblem } from './zip/archive-rules.js';
export { type JobStateStore } from './server/storage/store.js';
export { type JobWorker, type NodeRole, NODE_ROLES } from './server/jobs/job-worker.js';
export { type TokenKeeper, type CreatedToken, type RevokeSelector } from './server/identity/token-store.js';
export { openDatabase, openSignatureRecord, describeDatabase, DEFAULT_LEASE_MS } from './server/storage/open-stores.js';
export { openStores, type StoreOptions, type Stores } from './server/http/node-stores.js';
export { type SignatureRecordReader } from './server/storage/store.js';
export { FileSignatureRecord, RECORD_FILE, RECORD_HEAD_FILE } from './server/storage/record-file.js';
export { PgSignatureRecord, appendSignatures } from './server/storage/postgres/pg-record.js';
export { loadRecordKey, readRecordPublicKey, RECORD_KEY_FILE, RECORD_PUBLIC_KEY_FILE, type RecordKey } from './server/storage/record-key.js';
export { verifiedLeaves, recordCheckpoint, checkpointProblem } from './server/storage/record-checkpoint.js';
export { acceptance, acceptedKeysOf, keysForJob, type JobKeys } from './server/jobs/key-rotation.js';
export { PgJobStore, LeaseLost, MAX_ATTEMPTS } from './server/storage/postgres/pg-store.js';
export { PgTokenStore } from './server/identity/pg-tokens.js';
export { MIGRATIONS, migrate, type Migration } from './server/storage/postgres/migrations.js';
// S3Blobs itself is imported from its module by the nodes that use it: the AWS SDK is large.
export type { S3Blobs, S3BlobOptions } from './server/storage/s3-blobs.js';
