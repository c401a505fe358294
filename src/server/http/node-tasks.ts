// What a node runs beside its requests, each started and stopped in one place: the signature record's log (its
// stored tree read on from the start), retention's sweeps, and the log of what this thread does with a PKCS#11
// token. Each adds its own onClose hook; fastify runs them in the reverse order they were added, so these stop
// before the stores they use close (openStoresFor adds its hook first).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { onPkcs11Event } from '../../strongname/pkcs11/session.js';
import type { JobMemory } from '../jobs/job-memory.js';
import type { NodeRole } from '../jobs/job-worker.js';
import { startRetention } from '../jobs/retention.js';
import { logPkcs11Event } from '../jobs/token-readiness.js';
import type { JobStateStore } from '../ports.js';
import { RecordLog } from '../record/record-checkpoint.js';
import type { RecordKey } from '../record-key.js';
import type { ServerConfig } from '../server-config.js';

/**
 * The record as a Merkle log, its checkpoints signed with the deployment's record key; undefined without a key (a
 * worker node serves no API and signs no checkpoint). Its stored tree is read on from the start, not at the first
 * request: at the first start of a release on a record without one, it is built (minutes for millions of entries)
 * while the node serves; checkpoints wait.
 */
export function keepRecordLog(app: FastifyInstance, store: JobStateStore, recordKey: RecordKey | undefined): RecordLog | undefined {
  if (!recordKey) return undefined;
  const recordLog = new RecordLog(store.signatures, recordKey);
  app.addHook('onReady', async () => void readRecordTree(recordLog, app.log));
  app.addHook('onClose', async () => await recordLog.stop());
  return recordLog;
}

/** Finished jobs past limits.jobRetention go, swept by the nodes that serve the API (retention.ts). */
export function keepRetention(app: FastifyInstance, role: NodeRole, store: JobStateStore, config: () => ServerConfig, memory: JobMemory | undefined): void {
  if (role === 'worker') return;
  const stop = startRetention(store, config, app.log, memory);
  app.addHook('onClose', async () => await stop());
}

/** This thread owns the PKCS#11 modules (pool threads sign through it): what it does with a token is logged. */
export function logPkcs11Events(app: FastifyInstance): void {
  const stop = onPkcs11Event((event) => logPkcs11Event(app.log, event));
  app.addHook('onClose', async () => stop());
}

/** Reads the record's tree on in the background; logs how long when it took more than a second, and a failure (a request retries it). */
function readRecordTree(recordLog: RecordLog, log: FastifyBaseLogger): void {
  const since = Date.now();
  recordLog.refresh().then(
    () => {
      if (Date.now() - since > 1000) log.info({ entries: recordLog.size, ms: Date.now() - since }, "the signature record's stored tree is read");
    },
    (error: Error) =>
      log.error({ err: { message: error.message } }, "the signature record's stored tree could not be read; a request for a checkpoint tries again"),
  );
}
