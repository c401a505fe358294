// The in-process signing worker (the data directory's one process): runs queued jobs in the order they came, as many
// at once as the signer has threads (processJob, process-job.ts), and takes a failed job again after a growing wait.
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_RESULT_FILE } from '../domain/job-folder.js';
import type { JobRecord } from '../domain/job.js';
import type { JobStateStore } from '../ports.js';
import type { JobWorker } from './job-worker.js';
import type { ServerConfig } from '../server-config.js';
import { inProcessSigner, type FileSigner } from './sign-file.js';
import { KeyWait, noteWaiting } from './key-wait.js';
import type { JobMemory } from './job-memory.js';
import { finishUnsigned, processJob, reportJobProcessed, sinkOf, type JobObserver } from './process-job.js';

/** How the worker signs: the signer, and how many jobs it processes at once. */
export interface SigningWorkerOptions {
  /** Default: in the service's own thread. */
  readonly signer?: FileSigner;
  /** Jobs processed at once, started in the order they were queued. Default 1. */
  readonly concurrency?: number;
  /**
   * The waits before each new attempt at a job whose processing failed (a full disk, a read error); after the
   * last, the job is finished with an error on every file. Default 2, 10, 30, 60 and 120 s.
   */
  readonly retryDelaysMs?: readonly number[];
  /** Uploads and result packages kept in memory between the steps of a job (the upload route keeps them there). */
  readonly memory?: JobMemory;
  /** Told of every job this worker finishes (the service's metrics). */
  readonly observer?: JobObserver;
}

/** How soon a job that waits for its signing key is tried again (the PIN source is read again, the token looked for). */
export const KEY_RECHECK_MS = 2_000;

/** The default waits between attempts at a failed job: about four minutes in all. */
export const JOB_RETRY_DELAYS_MS: readonly number[] = [2_000, 10_000, 30_000, 60_000, 120_000];

/** What a client is told when the service gave up on a job: no paths or internals of the service. */
function failureText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'the service ran out of storage space';
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'the service could not write its files';
  return 'the service failed while processing the job';
}

/** Runs jobs in the order they were queued, `concurrency` at a time. */
export class SigningWorker implements JobWorker {
  private queue: { organization: string; id: string }[] = [];
  /** The lanes that take jobs from the queue; each ends when the queue is empty. */
  private readonly lanes = new Set<Promise<void>>();
  private stopped = false;
  /** The jobs being processed, with what stops each and what settles when it has stopped. */
  private readonly current = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly signer: FileSigner;
  private readonly concurrency: number;
  private readonly retryDelays: readonly number[];
  private readonly memory: JobMemory | undefined;
  private readonly observer: JobObserver | undefined;
  /** Failed attempts so far, per job, and the timers that queue a job again. */
  private readonly attempts = new Map<string, number>();
  private readonly retries = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly store: JobStateStore,
    private readonly config: () => ServerConfig,
    private readonly log: FastifyBaseLogger,
    options: SigningWorkerOptions = {},
  ) {
    this.signer = options.signer ?? inProcessSigner;
    this.concurrency = Math.max(1, options.concurrency ?? 1);
    this.retryDelays = options.retryDelaysMs ?? JOB_RETRY_DELAYS_MS;
    this.memory = options.memory;
    this.observer = options.observer;
  }

  /**
   * After a failed attempt: the job is queued again after the next wait, or, when the waits are used up, finished
   * with an error on every file that is not done. A job is never left unfinished with nobody working on it.
   */
  private async failed(organization: string, id: string, error: unknown): Promise<void> {
    const key = jobKey(organization, id);
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    const err = { message: (error as Error)?.message, code: (error as NodeJS.ErrnoException)?.code };
    const delay = this.retryDelays[attempt - 1];
    if (delay !== undefined) {
      this.attempts.set(key, attempt);
      this.log.warn({ job: id, organization, attempt, retryInMs: delay, err }, 'job processing failed; it is queued again');
      this.retries.set(
        key,
        setTimeout(() => {
          this.retries.delete(key);
          this.enqueue(organization, id);
        }, delay).unref(),
      );
      return;
    }
    this.log.error({ job: id, organization, attempts: attempt, err }, 'job processing failed for good; the job is finished with an error on every file');
    try {
      const record = await this.store.get(organization, id);
      if (!record) return;
      // The record holds the job's entries already: the signed package is what the job returns, not an error.
      if (await this.store.finishRecorded?.(record)) {
        this.attempts.delete(key);
        return;
      }
      await finishUnsigned(
        sinkOf(this.store, record),
        record,
        `${failureText(error)} (${attempt} attempts); nothing in this job was signed: upload the files again.`,
      );
      this.attempts.delete(key);
      this.observer?.jobFinished(record);
    } catch (again) {
      // Not even the error could be written (the disk is still full): try again after the longest wait.
      this.log.warn({ job: id, organization, err: { message: (again as Error).message } }, 'the failed job could not be finished; trying again later');
      this.retries.set(
        key,
        setTimeout(
          () => {
            this.retries.delete(key);
            void this.failed(organization, id, error);
          },
          this.retryDelays[this.retryDelays.length - 1] ?? 60_000,
        ).unref(),
      );
    }
  }

  /**
   * A job whose key cannot be used now: shown as waiting (why, and until when), saved, and queued again after
   * KEY_RECHECK_MS; not a failed attempt. The attempt itself tries the key again (a changed PIN, a token put back).
   */
  private async waitForKey(record: JobRecord, wait: KeyWait): Promise<void> {
    const key = jobKey(record.organization, record.id);
    noteWaiting(this.log, record, wait, this.config().keyWaitSeconds);
    try {
      await this.store.save(record);
    } catch (error) {
      this.log.warn({ job: record.id, err: { message: (error as Error).message } }, 'the waiting job could not be saved; it is queued again all the same');
    }
    this.retries.set(
      key,
      setTimeout(() => {
        this.retries.delete(key);
        this.enqueue(record.organization, record.id);
      }, KEY_RECHECK_MS).unref(),
    );
  }

  enqueue(organization: string, id: string): void {
    if (this.stopped) return;
    this.queue.push({ organization, id });
    if (this.lanes.size < this.concurrency) {
      const lane: Promise<void> = this.drain().finally(() => this.lanes.delete(lane));
      this.lanes.add(lane);
    }
  }

  /**
   * Takes the job out of the queue, or stops it when it is being processed and resolves once the worker
   * has let go of it (after the current file): the caller may then remove its folder safely.
   */
  async cancel(organization: string, id: string): Promise<void> {
    this.queue = this.queue.filter((q) => q.organization !== organization || q.id !== id);
    const key = jobKey(organization, id);
    clearTimeout(this.retries.get(key));
    this.retries.delete(key);
    this.attempts.delete(key);
    const current = this.current.get(jobKey(organization, id));
    if (current) {
      current.controller.abort();
      await current.done;
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length && !this.stopped) {
      const next = this.queue.shift()!;
      // Set before the first await, so that cancel() always sees the job it must wait for.
      const controller = new AbortController();
      let settle!: () => void;
      const done = new Promise<void>((resolve) => (settle = resolve));
      const key = jobKey(next.organization, next.id);
      this.current.set(key, { controller, done });
      let record: JobRecord | undefined;
      try {
        record = await this.store.get(next.organization, next.id);
        if (!record) continue; // deleted while queued
        const started = performance.now();
        await processJob(sinkOf(this.store, record), this.config(), record, controller.signal, DEFAULT_RESULT_FILE, this.signer, this.memory);
        if (controller.signal.aborted) this.log.info({ job: record.id, organization: record.organization }, 'job processing stopped');
        else {
          this.attempts.delete(key);
          reportJobProcessed(this.log, this.observer, record, started);
        }
      } catch (error) {
        if (controller.signal.aborted || this.stopped) continue;
        if (error instanceof KeyWait && record) await this.waitForKey(record, error);
        else await this.failed(next.organization, next.id, error);
      } finally {
        this.current.delete(key);
        settle();
      }
    }
  }

  processing(): number {
    return this.current.size;
  }

  waiting(): number {
    return this.queue.length + this.retries.size;
  }

  /** Resolves when the queue is empty. */
  async idle(): Promise<void> {
    while (this.lanes.size) await Promise.all(this.lanes);
  }

  /** Takes no new work; the job in progress stops after its current file and resumes after a restart. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue = [];
    // A job waiting for its next attempt is unfinished: the next start resumes it.
    for (const timer of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
    for (const job of this.current.values()) job.controller.abort();
    await this.idle();
  }
}

const jobKey = (organization: string, id: string) => `${organization}/${id}`;
