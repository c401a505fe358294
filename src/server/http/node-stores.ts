// What a node is made of: its backend (backends/index.ts chooses it: the data directory, or PostgreSQL when a
// database is given) and the signing worker that goes with it: the node's own (jobs/signing-worker.ts) where the
// backend has no shared queue, a worker on the shared queue (jobs/queue-worker.ts) where it has one, none on an API
// node. Here, above jobs/ and backends/, because it puts them together.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { openNodeBackend } from '../backends/index.js';
import { NO_WORKER, type JobWorker, type NodeRole } from '../jobs/job-worker.js';
import { QueueWorker } from '../jobs/queue-worker.js';
import { SigningWorker, type SigningWorkerOptions } from '../jobs/signing-worker.js';
import type { RecordKey } from '../record-key.js';
import type { JobStateStore, TokenKeeper } from '../ports.js';
import type { ServerConfig } from '../server-config.js';

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
  const node = await openNodeBackend({ ...options, role });
  let worker: JobWorker;
  try {
    if (role === 'api') worker = NO_WORKER;
    else if (!node.queue) worker = new SigningWorker(node.jobs, options.config, options.log, options.signing);
    else {
      const { signer, memory, observer } = options.signing ?? {};
      const signing = { ...(signer ? { signer } : {}), ...(memory ? { memory } : {}), ...(observer ? { observer } : {}) };
      const queue = new QueueWorker(node.queue, options.config, options.log, signing);
      await queue.start();
      worker = queue;
    }
  } catch (error) {
    await node.close().catch(() => {});
    throw error;
  }
  return { jobs: node.jobs, tokens: node.tokens, worker, recordKey: node.recordKey, close: () => node.close() };
}

/**
 * openStores for `app`, which then owns what it opened: when the app closes (after the hooks added later, which may
 * still use them), the worker stops, then the stores close.
 */
export async function openStoresFor(app: FastifyInstance, options: StoreOptions): Promise<Stores> {
  const stores = await openStores(options);
  app.addHook('onClose', async () => {
    await stores.worker.stop();
    await stores.close();
  });
  return stores;
}
