// What the API's route plugins share: the stores and settings buildServer made, and how a route finds a job and
// links to it.
import type { FastifyRequest } from 'fastify';
import type { JobMemory } from '../../jobs/job-memory.js';
import type { JobStateStore } from '../../ports.js';
import type { JobRecord } from '../../domain/job.js';
import type { JobWorker } from '../../jobs/job-worker.js';
import type { ServerConfig } from '../../server-config.js';
import type { RecordLog } from '../../record/record-checkpoint.js';
import { HttpProblem } from '../../problem.js';

export interface RouteContext {
  /** The current configuration (re-read when its file changes). */
  readonly config: () => ServerConfig;
  readonly now: () => Date;
  /** `/<service-name>/v1.0`, the prefix the API's routes are registered under. */
  readonly apiPrefix: string;
  readonly store: JobStateStore;
  readonly worker: JobWorker;
  /** A job's files between its steps, on a node that signs. */
  readonly memory: JobMemory | undefined;
  /** The record as a Merkle log, on a node that serves the API. */
  readonly recordLog: RecordLog | undefined;
  /** A body that brings no byte for this long is answered 408. */
  readonly idleMs: number;
}

/**
 * The job of the request's `:id` in the caller's organization.
 * @throws HttpProblem 404 for an unknown job, and for another organization's (answered exactly alike)
 */
export async function jobOf(ctx: RouteContext, request: FastifyRequest<{ Params: { id: string } }>): Promise<JobRecord> {
  const record = await ctx.store.get(request.principal!.organization.id, request.params.id);
  // Another organization's job answers exactly like an unknown one.
  if (!record) throw new HttpProblem(404, 'Not Found', `There is no job ${request.params.id}.`);
  return record;
}

/** The links of a job's answer: its status, its download and its deletion, at the address the client used. */
export function linksOf(ctx: RouteContext, request: FastifyRequest, id: string) {
  const base = `${request.protocol}://${request.host}${ctx.apiPrefix}/assemblies/${id}`;
  return { status: `${base}/status`, download: base, delete: base };
}
