// The organization's jobs on the service: download one into a folder, and choose which to prune.
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { isFailedState, isPendingState } from '../core/file-states.js';
import type { JobSummary, ServiceClient } from '../service-client/client.js';
import { extractPackage, SERVICE_LOG_NAME, type ExtractResult } from './extract.js';
import { downloadTo } from './files.js';
import { cacheDir, downloadName, Ledger, makeCacheDir, sweepStaleDownloads } from './ledger.js';
import type { ProgressReporter } from './sign-job.js';

/** "7d", "12h", "30m" or "45s" in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*([dhms])$/i.exec(text.trim());
  if (!m) throw new UsageError(`--older-than ${JSON.stringify(text)} is not a duration`, 'Write a number and a unit: 7d, 12h, 30m or 45s.');
  return Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[m[2]!.toLowerCase() as 'd' | 'h' | 'm' | 's'];
}

export interface PrunePlan {
  /** The jobs to delete. */
  readonly doomed: JobSummary[];
  /** Jobs the service gave no readable date for: never pruned by age. */
  readonly undated: JobSummary[];
}

const dateOf = (j: JobSummary) => (j.createdAt ? Date.parse(j.createdAt) : NaN);

/** The jobs `prune` deletes: older than a duration, or all but the newest `keep` (undated jobs count as newest). */
export function planPrune(jobs: readonly JobSummary[], options: { olderThanMs?: number; keep?: number }, now = Date.now()): PrunePlan {
  const undated = jobs.filter((j) => Number.isNaN(dateOf(j)));
  const dated = jobs.filter((j) => !Number.isNaN(dateOf(j))).sort((a, b) => dateOf(b) - dateOf(a));
  if (options.keep !== undefined) return { doomed: [...undated, ...dated].slice(options.keep), undated };
  return { doomed: dated.filter((j) => now - dateOf(j) > options.olderThanMs!), undated };
}

/**
 * Downloads a job's result package and extracts it safely into `destination`. Files the ledger does not
 * record for the job are overwritten only with `force`.
 */
export async function downloadJob(
  client: ServiceClient,
  jobId: string,
  destination: string,
  options: { force?: boolean; progress?: ProgressReporter; ledger?: Ledger } = {},
): Promise<ExtractResult> {
  makeCacheDir();
  sweepStaleDownloads();
  const known = (options.ledger ?? new Ledger()).find(jobId);
  const zipPath = join(cacheDir(), downloadName());
  try {
    await client.download(
      known?.links ? { id: jobId, links: known.links } : jobId,
      downloadTo(zipPath),
      options.progress ? { onProgress: (d, t) => options.progress!.update(d, t) } : {},
    );
    options.progress?.stop();
    return await extractPackage(zipPath, resolve(destination), {
      ...(known ? { expected: new Set(known.files.map((f) => f.name)) } : {}),
      force: options.force ?? false,
      logName: SERVICE_LOG_NAME,
    });
  } finally {
    options.progress?.stop();
    rmSync(zipPath, { force: true });
  }
}

/** How the files of one job ended, from its status. */
export interface JobTally {
  readonly files: number;
  readonly signed: number;
  readonly failed: number;
  readonly pending: number;
}

/** The most finished jobs `tallyJobs` asks the status of (one request each). */
export const MAX_TALLIED_JOBS = 100;

/**
 * For the newest `max` finished jobs of `jobs`: how many of each job's files were signed and how many failed, from
 * its status (the list gives only a count of files); at most `concurrency` requests at once. A job whose status
 * cannot be read now (deleted meanwhile) is left out.
 */
export async function tallyJobs(
  client: ServiceClient,
  jobs: readonly JobSummary[],
  options: { max?: number; concurrency?: number } = {},
): Promise<Map<string, JobTally>> {
  const finished = jobs
    .filter((j) => j.processingFinished === true)
    .sort((a, b) => (dateOf(b) || 0) - (dateOf(a) || 0))
    .slice(0, options.max ?? MAX_TALLIED_JOBS);
  const tallies = new Map<string, JobTally>();
  let next = 0;
  const worker = async () => {
    while (next < finished.length) {
      const job = finished[next++]!;
      try {
        const states = (await client.status(job.id)).assemblies.map((a) => a.fileProcessingState);
        const failed = states.filter(isFailedState).length;
        const pending = states.filter(isPendingState).length;
        tallies.set(job.id, { files: states.length, signed: states.length - failed - pending, failed, pending });
      } catch {
        // gone meanwhile, or the service refuses: the list still shows the job
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 4, finished.length) }, worker));
  return tallies;
}
