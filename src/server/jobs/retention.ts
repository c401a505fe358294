// Retention: finished jobs older than limits.jobRetention are deleted with their files (the data directory's folder,
// the bucket's objects) by every node that serves the API, and by `signgate serve jobs prune` for an operator. A
// job's age counts from when it finished; a job that waits or is being signed is never touched: the store decides
// that in the delete itself (JobStateStore.delete with finishedBefore), so a job that a worker takes meanwhile stays.
import type { FastifyBaseLogger } from 'fastify';
import { durationText, type ServerConfig } from '../server-config.js';
import type { JobMemory } from './job-memory.js';
import type { JobStateStore } from '../ports.js';
import type { JobOverview } from '../domain/job.js';

/** The longest a node waits between two sweeps; a short retention is swept four times in its own span. */
const MAX_SWEEP_MS = 10 * 60_000;
/** How often a node without a retention looks whether one was switched on (a reload). */
const IDLE_LOOK_MS = 2000;

/** How often a node sweeps for a retention: a quarter of it, from 1 s to 10 min. */
export function sweepEveryMs(retentionMs: number): number {
  return Math.min(MAX_SWEEP_MS, Math.max(1000, Math.floor(retentionMs / 4)));
}

/** The finished jobs older than `olderThanMs` at `now` (all organizations, or one), oldest first. */
export async function expiredJobs(store: JobStateStore, olderThanMs: number, options: { now?: Date; organization?: string } = {}): Promise<JobOverview[]> {
  const before = (options.now ?? new Date()).getTime() - olderThanMs;
  return (await store.overview(options.organization)).filter((j) => j.finishedAt !== null && Date.parse(j.finishedAt) < before);
}

/**
 * Deletes the finished jobs older than `olderThanMs`, each only if it is still finished and that old when it is
 * deleted (the store checks): those deleted. A job another node deleted meanwhile is not among them.
 */
export async function pruneJobs(
  store: JobStateStore,
  olderThanMs: number,
  options: { now?: Date; organization?: string; memory?: JobMemory | undefined } = {},
): Promise<JobOverview[]> {
  const now = options.now ?? new Date();
  const before = new Date(now.getTime() - olderThanMs);
  const deleted: JobOverview[] = [];
  for (const job of await expiredJobs(store, olderThanMs, { now, ...(options.organization ? { organization: options.organization } : {}) })) {
    options.memory?.forget(job.organization, job.id);
    if (await store.delete(job.organization, job.id, before)) deleted.push(job);
  }
  return deleted;
}

/**
 * The sweep of a node that serves the API: soon after the start, then every sweepEveryMs; limits.jobRetention is
 * read at every turn, so a reload switches it on, off or changes it. Each turn that deletes something says so in one
 * info line; a store that fails is a warning, and the next turn tries again. Returns the function that stops it.
 */
export function startRetention(store: JobStateStore, config: () => ServerConfig, log: FastifyBaseLogger, memory?: JobMemory): () => Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const turn = async () => {
    const retention = config().jobRetentionMs;
    if (retention !== undefined) {
      try {
        const deleted = await pruneJobs(store, retention, { memory });
        if (deleted.length)
          log.info(
            { jobs: deleted.length, retention: durationText(retention) },
            `job retention: deleted ${deleted.length} finished job${deleted.length === 1 ? '' : 's'} older than ${durationText(retention)} (limits.jobRetention)`,
          );
      } catch (error) {
        log.warn({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, 'job retention: the sweep failed; it is tried again');
      }
    }
    if (!stopped) timer = setTimeout(() => (running = turn()), retention === undefined ? IDLE_LOOK_MS : sweepEveryMs(retention)).unref();
  };
  timer = setTimeout(() => (running = turn()), 1000).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
