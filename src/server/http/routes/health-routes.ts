// Health and readiness for a load balancer and an operator, outside the API prefix:
//   GET /healthz     200 while the process runs (liveness);
//   GET /readyz      200 when the node can serve: its stores answer, its data folder has room for a job and, on a node
//                    that signs, every key in a PKCS#11 token signs a probe digest that verifies with its option's
//                    public key (at most 5 s each); 503 otherwise. Without a token it says ready or not and why in
//                    general terms; the operator (a personal access token of a user with the role Operator, or the
//                    metrics listener) also gets each token key's state (`tokenKeys`: option, PIN counters, ready),
//                    the jobs that wait for a key (`waitingForKeys`) and the failure's own words;
//   GET /readyz/api  the balancer's check: 200 only on a node that serves the API (role api or all) and can take an
//                    upload now (its stores answer, its data folder has room); 503 on a signing worker.
// Once the node shuts down it stops listening (a new probe is refused) and answers 503 on connections still open.
// All three are left out of the OpenAPI document: they are for operators and balancers, not API clients.
import { statfs } from 'node:fs/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { probeTokenKeys } from '../../jobs/token-readiness.js';
import type { JobStateStore } from '../../ports.js';
import type { ServerConfig } from '../../server-config.js';
import { problem } from '../../problem.js';

/** What is wrong, in terms that name no organization, option, token or job: for a caller who is not the operator. */
export type NotReadyReason = 'store' | 'disk' | 'keys';

const GENERAL: Record<NotReadyReason, string> = {
  store: 'a store of this node does not answer',
  disk: 'the data folder of this node has too little free space for a job',
  keys: 'a signing key of this node cannot sign',
};

/** A readiness failure: its reason in general terms, and (for the operator) its details. */
export class NotReady extends Error {
  constructor(
    message: string,
    readonly reason: NotReadyReason,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface Readiness {
  /** Throws NotReady (or any error, taken as a store's) when the node cannot serve; returns the operator's details. */
  readonly ready: () => Promise<Record<string, unknown> | void>;
  /** Throws NotReady when the node cannot take an upload now (its stores, its data folder's room). */
  readonly takesUploads: () => Promise<void>;
}

export interface HealthOptions extends Readiness {
  /** What this node is (api, worker, all), shown in the answers. */
  readonly role: string;
  /** Whether the caller is the service's operator (authenticate.ts operatorCheck). */
  readonly isOperator: (request: FastifyRequest) => Promise<boolean>;
}

/** An answer of /readyz: its status and its JSON body (problem+json when 503). */
export interface ReadyAnswer {
  readonly status: 200 | 503;
  readonly body: Record<string, unknown>;
}

/** How a failure reads: NotReady as it is; anything else is a store that does not answer. */
function notReady(error: unknown): NotReady {
  return error instanceof NotReady ? error : new NotReady((error as Error).message, 'store', (error as { details?: Record<string, unknown> }).details);
}

/**
 * /readyz's answer, decided once for every listener that serves it: the service's port (the operator with a token)
 * and the metrics listener (always the operator's).
 */
export async function readyAnswer(
  options: Readiness & { readonly role: string },
  operator: boolean,
  instance: string,
  log?: FastifyRequest['log'],
): Promise<ReadyAnswer> {
  let details: Record<string, unknown> | void;
  try {
    details = await options.ready();
  } catch (error) {
    const failed = notReady(error);
    log?.warn({ err: { message: failed.message, code: (error as { code?: string }).code }, reason: failed.reason }, `not ready: ${failed.message}`);
    const general = `This node is not ready: ${GENERAL[failed.reason]}.`;
    const body = operator
      ? { ...problem(503, 'Not ready', `${general} ${failed.message}`, instance), reason: failed.reason, ...failed.details }
      : { ...problem(503, 'Not ready', `${general} The operator sees the details in its log or with an operator's token.`, instance), reason: failed.reason };
    return { status: 503, body };
  }
  if (operator) return { status: 200, body: { status: 'ready', role: options.role, ...details } };
  const waiting = (details?.waitingForKeys as readonly { jobs: number }[] | undefined)?.reduce((n, w) => n + w.jobs, 0);
  return { status: 200, body: { status: 'ready', role: options.role, ...(waiting ? { jobsWaitingForKeys: waiting } : {}) } };
}

export function registerHealth(app: FastifyInstance, options: HealthOptions): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok', role: options.role }));
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const answer = await readyAnswer(options, await options.isOperator(request), request.url, request.log);
    return reply
      .status(answer.status)
      .type(answer.status === 200 ? 'application/json; charset=utf-8' : 'application/problem+json')
      .send(answer.body);
  });
  app.get('/readyz/api', { schema: { hide: true } }, async (request, reply) => {
    const refuse = (detail: string, reason: string) =>
      reply
        .status(503)
        .type('application/problem+json')
        .send({ ...problem(503, 'Not ready', detail, request.url), reason });
    if (options.role === 'worker')
      return refuse('This node is a signing worker (--role worker): it serves no API. Send API requests to nodes of role api or all.', 'role');
    try {
      await options.takesUploads();
    } catch (error) {
      const failed = notReady(error);
      request.log.warn({ err: { message: failed.message }, reason: failed.reason }, `not ready for uploads: ${failed.message}`);
      return refuse(`This node cannot take uploads now: ${GENERAL[failed.reason]}.`, failed.reason);
    }
    return { status: 'ready', role: options.role };
  });
}

/**
 * Whether this node can serve (GET /readyz) and take uploads (GET /readyz/api): its store answers, its data folder
 * has room for a job, and, on a node that signs, each key in a PKCS#11 token signs a probe; the operator's answer
 * names the jobs that wait for a key.
 */
export function readiness(node: {
  readonly store: JobStateStore;
  readonly dataDir: string;
  readonly config: () => ServerConfig;
  readonly signs: boolean;
}): Readiness {
  const { store, config } = node;
  const takesUploads = async () => {
    await store.ping().catch((error: unknown) => {
      throw new NotReady((error as Error).message, 'store');
    });
    // A node that takes uploads or signs needs room for them: an upload and its result package.
    await assertRoom(node.dataDir, 2 * config().maxUploadBytes);
  };
  const ready = async () => {
    await takesUploads();
    // A node that signs needs its keys in PKCS#11 tokens: each signs a probe digest that must verify with the
    // option's public key (in this thread, the modules' owner), with a timeout.
    // Jobs that wait for a key no worker could use (key-wait.ts): named, so that an API node's probe says that no
    // worker can sign an option, while it still takes uploads (they wait too).
    const waits = await store.keyWaits?.();
    const waitingForKeys = waits?.length ? { waitingForKeys: waits } : {};
    if (node.signs) {
      const tokenKeys = await probeTokenKeys(config()).catch((error: unknown) => {
        throw new NotReady((error as Error).message, 'keys', (error as { details?: Record<string, unknown> }).details);
      });
      if (tokenKeys.length) return { tokenKeys, ...waitingForKeys };
    }
    return waitingForKeys;
  };
  return { ready, takesUploads };
}

/**
 * Throws when the data folder has less than `bytes` free (readiness: a node that cannot store a job is not ready).
 * @throws NotReady naming the free and the needed space
 */
async function assertRoom(dataDir: string, bytes: number): Promise<void> {
  const fs = await statfs(dataDir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < bytes)
    throw new NotReady(
      `the data folder has ${(free / 1e6).toFixed(1)} MB free; a job may need ${(bytes / 1e6).toFixed(1)} MB (an upload and its result package)`,
      'disk',
    );
}
