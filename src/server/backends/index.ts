// The one place a backend is chosen. Each backend is a folder of backends/ that exports one Backend (ports.ts):
// the data directory (the default: one process) and PostgreSQL (any number of nodes on one database; job files in
// the shared data directory or in S3, backends/s3). A new backend is one folder and one line in BACKENDS.
import { narrowDirSync } from '../fs-atomic.js';
import type { Backend, BackendChoice, NodeBackend, NodeBackendOptions } from '../ports.js';
import { dataDirBackend } from './data-dir/index.js';
import { postgresBackend } from './postgres/index.js';
import { checkBlobStore } from './s3/index.js';

/** The backends, asked in this order: the first that accepts the choice is used. */
const BACKENDS: readonly Backend[] = [postgresBackend, dataDirBackend];

/** The backend these options name. */
export function backendFor(choice: BackendChoice): Backend {
  const backend = BACKENDS.find((b) => b.accepts(choice));
  if (!backend) throw new Error('internal error: no backend accepts the choice (the data directory takes every choice without a database)');
  return backend;
}

/** A service node's backend; the data directory is made (0700) or narrowed to the service's user first. */
export async function openNodeBackend(options: NodeBackendOptions): Promise<NodeBackend> {
  // Uploads, signed files and job records (and, without a database, token hashes): the service's alone.
  narrowDirSync(options.dataDir);
  if (options.blobStore) await checkBlobStore(options.blobStore);
  return backendFor(options).openNode(options);
}

/** The jobs of a deployment, for an operator's command (`serve jobs list|prune`): nothing is started. */
export function openJobStore(choice: BackendChoice): ReturnType<Backend['openJobStore']> {
  return backendFor(choice).openJobStore(choice);
}

/** The signature record of a deployment, for `serve record verify` and `serve record export`. */
export function openSignatureRecord(choice: BackendChoice): ReturnType<Backend['openSignatureRecord']> {
  return backendFor(choice).openSignatureRecord(choice);
}

/** The token hashes of a deployment, for `serve token create|revoke`. */
export function openTokens(choice: BackendChoice): ReturnType<Backend['openTokens']> {
  return backendFor(choice).openTokens(choice);
}
