// Health and readiness for a load balancer, outside the API prefix and without a token:
//   GET /healthz  200 while the process runs (liveness);
//   GET /readyz   200 when the node can serve: its stores answer and, on a node that signs, every key in a PKCS#11
//                 token signs a probe digest that verifies with its option's public key (at most 5 s each); 503
//                 otherwise. The answer holds each such key's state (`tokenKeys`: option, PIN counters, ready). Once
//                 the node shuts down it stops listening (a new probe is refused) and answers 503 on connections
//                 still open.
// Both are left out of the OpenAPI document: they are for operators, not API clients.
import { statfs } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { probeTokenKeys } from '../../jobs/signing-worker.js';
import type { JobStateStore } from '../../storage/store.js';
import type { ServerConfig } from '../../server-config.js';
import { problem } from '../../problem.js';

export interface HealthOptions {
  /** What this node is (api, worker, all), shown in the answers. */
  readonly role: string;
  /**
   * Throws when a store this node needs does not answer or a key cannot sign; may return details for the answer.
   * An error with `details` has them shown in the 503 answer too.
   */
  readonly ready: () => Promise<Record<string, unknown> | void>;
}

export function registerHealth(app: FastifyInstance, options: HealthOptions): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok', role: options.role }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    let details: Record<string, unknown> | void;
    try {
      details = await options.ready();
    } catch (error) {
      request.log.warn({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, `not ready: ${(error as Error).message}`);
      const more = (error as { details?: Record<string, unknown> }).details;
      return reply
        .status(503)
        .type('application/problem+json')
        .send({
          ...problem(
            503,
            'Not ready',
            'A store of this node does not answer, its data folder is full, or a signing key in a PKCS#11 token cannot sign or is not the key its option is configured with; see its log.',
            request.url,
          ),
          ...more,
        });
    }
    return { status: 'ready', role: options.role, ...details };
  });
}

/**
 * Whether this node can serve (GET /readyz): its store answers, its data folder has room for a job, and, on a node
 * that signs, each key in a PKCS#11 token signs a probe; the answer names the jobs that wait for a key.
 */
export function readiness(node: {
  readonly store: JobStateStore;
  readonly dataDir: string;
  readonly config: () => ServerConfig;
  readonly signs: boolean;
}): HealthOptions['ready'] {
  const { store, config } = node;
  return async () => {
    await store.ping();
    // A node that takes uploads or signs needs room for them: an upload and its result package.
    await assertRoom(node.dataDir, 2 * config().maxUploadBytes);
    // A node that signs needs its keys in PKCS#11 tokens: each signs a probe digest that must verify with the
    // option's public key (in this thread, the modules' owner), with a timeout.
    // Jobs that wait for a key no worker could use (key-wait.ts): named, so that an API node's probe says that no
    // worker can sign an option, while it still takes uploads (they wait too).
    const waits = await store.keyWaits?.();
    const waitingForKeys = waits?.length ? { waitingForKeys: waits } : {};
    if (node.signs) {
      const tokenKeys = await probeTokenKeys(config());
      if (tokenKeys.length) return { tokenKeys, ...waitingForKeys };
    }
    return waitingForKeys;
  };
}

/**
 * Throws when the data folder has less than `bytes` free (readiness: a node that cannot store a job is not ready).
 * @throws Error naming the free and the needed space
 */
async function assertRoom(dataDir: string, bytes: number): Promise<void> {
  const fs = await statfs(dataDir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < bytes)
    throw new Error(`the data folder has ${(free / 1e6).toFixed(1)} MB free; a job may need ${(bytes / 1e6).toFixed(1)} MB (an upload and its result package)`);
}
