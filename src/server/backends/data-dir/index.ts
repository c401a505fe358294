// The data directory as a backend (the default: one process): jobs and their files in <data-dir>/jobs, the
// signature record in signature-record.jsonl (its tree beside it), token hashes in tokens.json, the record key in
// record-key.pem unless one is configured. Its one process keeps the queue itself (jobs/signing-worker.ts).
import { UsageError } from '../../../core/errors.js';
import { loadRecordKey, readRecordKeyFile } from '../../record-key.js';
import type { Backend } from '../../ports.js';
import { JobStore } from './job-store.js';
import { FileSignatureRecord } from './record-file.js';
import { TokenStore } from './token-file.js';

/** What to do when the configured record key file is missing. */
const MISSING_KEY_HINT = 'Make it once with `signgate serve record key create --out FILE` and give every node of the deployment the same file.';

export const dataDirBackend: Backend = {
  name: 'data-dir',
  accepts: (options) => !options.database,
  async openNode(options) {
    const role = options.role ?? 'all';
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
    const recordKey = options.recordKeyFile ? readRecordKeyFile(options.recordKeyFile, MISSING_KEY_HINT) : loadRecordKey(options.dataDir, true);
    const jobs = new JobStore(options.dataDir);
    // A record that does not end where its head says refuses the start; a torn last line is moved aside.
    const torn = jobs.signatures.openForAppend();
    if (torn) options.log.warn(torn);
    return { jobs, tokens: new TokenStore(options.dataDir), queue: undefined, recordKey, close: async () => {} };
  },
  async openJobStore(options) {
    if (options.blobStore !== undefined)
      throw new UsageError('--blob-store needs --database', 'Job files are in object storage only on a PostgreSQL deployment: pass --database too.');
    return { store: new JobStore(options.dataDir), where: options.dataDir, close: async () => {} };
  },
  async openTokens(choice) {
    return { keeper: new TokenStore(choice.dataDir), close: async () => {} };
  },
  async openSignatureRecord(options) {
    return { record: new FileSignatureRecord(options.dataDir), close: async () => {} };
  },
};
