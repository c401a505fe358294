// A signing worker on a queue the nodes share (ports.ts, SharedJobQueue: PostgreSQL's): takes the oldest job no live
// worker holds, renews its lease while it signs, and writes every step through the lease. It wakes when the queue
// says a job was queued and also polls, which finds jobs whose worker died once their lease has run out.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { ServerConfig } from '../server-config.js';
import { JOB_RETRY_DELAYS_MS, KEY_RECHECK_MS } from './signing-worker.js';
import { finishUnsigned, processJob, reportJobProcessed, type JobObserver } from './process-job.js';
import { KeyWait, noteWaiting } from './key-wait.js';
import { isPkcs11Key, probePkcs11Key } from '../../strongname/pkcs11/signer.js';
import type { License } from '../server-config.js';
import type { FileSigner } from './sign-file.js';
import type { JobMemory } from './job-memory.js';
import type { JobWorker } from './job-worker.js';
import { LeaseLost, MAX_ATTEMPTS } from '../domain/lease.js';
import type { LeasedJob, SharedJobQueue } from '../ports.js';

export interface QueueWorkerOptions {
  /** How often to look for work when no notification came (also: how soon a dead worker's job is noticed after its lease). */
  readonly pollMs?: number;
  /** Signs the files of a job (a pool of threads, signing-pool.ts). Default: in this thread. */
  readonly signer?: FileSigner;
  /** Uploads this process received, kept in memory for their signing (JobMemory). */
  readonly memory?: JobMemory;
  /** Told of every job this worker finishes (the service's metrics). */
  readonly observer?: JobObserver;
}

export class QueueWorker implements JobWorker {
  /** This worker, as the owner of its leases. */
  readonly owner = `worker-${process.pid}-${randomUUID()}`;
  private stopped = false;
  private running: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private current: { organization: string; id: string; controller: AbortController; done: Promise<void> } | undefined;
  /**
   * The keys this worker found unusable (organization/optionId), with when it last tried them: it takes no job that
   * waits for one of them until a probe signs with it again (key-wait.ts).
   */
  private readonly unusable = new Map<string, { license: License; triedAt: number }>();

  constructor(
    private readonly store: SharedJobQueue,
    private readonly config: () => ServerConfig,
    private readonly log: FastifyBaseLogger,
    private readonly options: QueueWorkerOptions,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.store.listen(
      () => this.wake?.(),
      (message, when) =>
        this.log.warn({ err: { message } }, when === 'start' ? 'queue notifications unavailable; polling' : 'queue notifications lost; polling'),
    );
    this.running = this.loop();
  }

  enqueue(): void {
    this.wake?.();
  }

  async cancel(organization: string, id: string): Promise<void> {
    const current = this.current;
    if (current && current.organization === organization && current.id === id) {
      current.controller.abort();
      await current.done;
    }
  }

  private async loop(): Promise<void> {
    const pollMs = this.options.pollMs ?? Math.min(1000, this.store.leaseMs / 2);
    while (!this.stopped) {
      await this.probeUnusableKeys();
      let record;
      try {
        record = await this.store.claim(this.owner, { unusable: [...this.unusable.keys()], keyWaitSeconds: this.config().keyWaitSeconds });
      } catch (error) {
        this.log.warn({ err: { message: (error as Error).message } }, 'taking a job from the queue failed');
      }
      if (!record) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
        continue;
      }
      await this.process(record);
    }
  }

  /** Tries each key found unusable again, at most every KEY_RECHECK_MS: a key that signs a probe is usable again. */
  private async probeUnusableKeys(): Promise<void> {
    for (const [name, entry] of this.unusable) {
      if (Date.now() - entry.triedAt < KEY_RECHECK_MS) continue;
      entry.triedAt = Date.now();
      if (!isPkcs11Key(entry.license.key)) {
        this.unusable.delete(name);
        continue;
      }
      try {
        await probePkcs11Key(entry.license.key.pkcs11, entry.license.key.publicKey);
        this.unusable.delete(name);
        this.log.info({ option: name, worker: this.owner }, 'the signing key can be used again: taking the jobs that wait for it');
      } catch (error) {
        this.log.debug({ option: name, code: (error as { code?: string }).code }, 'the signing key still cannot be used');
      }
    }
  }

  private async process(record: LeasedJob): Promise<void> {
    const controller = new AbortController();
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.current = { organization: record.organization, id: record.id, controller, done };
    const heartbeat = setInterval(
      () => {
        this.store.heartbeat(record.organization, record.id, this.owner).then(
          (held) => {
            if (!held) controller.abort();
          },
          (error: Error) => this.log.warn({ job: record.id, err: { message: error.message } }, 'lease renewal failed'),
        );
      },
      Math.max(50, Math.floor(this.store.leaseMs / 3)),
    );
    let sink: Awaited<ReturnType<SharedJobQueue['workOn']>> | undefined;
    // A file name of its own: two workers that both believed they held the job never write the same file.
    const resultFile = `result-${randomUUID()}.zip`;
    try {
      sink = await this.store.workOn(record, this.owner, controller.signal);
      if (record.attempts > MAX_ATTEMPTS) {
        // Its workers died or failed this often: finished with an error on every file, never left unfinished.
        await finishUnsigned(
          sink,
          record,
          `the service failed to process the job ${MAX_ATTEMPTS} times; nothing in this job was signed: upload the files again.`,
          resultFile,
        );
        this.log.error(
          { job: record.id, organization: record.organization, attempts: record.attempts - 1 },
          'job finished with an error on every file after its attempts ran out',
        );
        this.options.observer?.jobFinished(record);
        return;
      }
      const started = performance.now();
      await processJob(sink, this.config(), record, controller.signal, resultFile, this.options.signer, this.options.memory);
      if (controller.signal.aborted) this.log.info({ job: record.id, organization: record.organization }, 'job processing stopped');
      else reportJobProcessed(this.log, this.options.observer, record, started, { worker: this.owner });
    } catch (error) {
      if (error instanceof LeaseLost) this.log.info({ job: record.id, organization: record.organization }, 'job processing stopped: its lease is gone');
      else if (controller.signal.aborted) {
        // Stopped while it waited (the fetch of its files, say): no attempt of the job's failed. A stopping worker
        // gives it back at once, uncounted (stop: release); a lost lease leaves it to the worker that has it now.
        this.log.info({ job: record.id, organization: record.organization }, 'job processing stopped');
      } else if (error instanceof KeyWait) {
        // Back to the queue at once for a worker that can use the key; this one leaves it until its key works again.
        for (const k of error.keys) this.unusable.set(k.name, { license: k.license, triedAt: Date.now() });
        noteWaiting(this.log, record, error, this.config().keyWaitSeconds, { worker: this.owner });
        await this.store
          .waitForKey(record, this.owner)
          .catch((e: Error) =>
            this.log.warn({ job: record.id, err: { message: e.message } }, 'the waiting job could not be put back; its lease runs out instead'),
          );
      } else {
        // Taken again after a wait that grows with the attempts, not after the whole lease (a database that was
        // away for a second is back by then); the release itself is tried a few times.
        const delay = JOB_RETRY_DELAYS_MS[Math.min(record.attempts, JOB_RETRY_DELAYS_MS.length) - 1]!;
        this.log.warn(
          {
            job: record.id,
            organization: record.organization,
            attempt: record.attempts,
            retryInMs: delay,
            err: { message: (error as Error).message, code: (error as NodeJS.ErrnoException).code },
          },
          'job processing failed; it is queued again',
        );
        for (let i = 0; i < 3; i++) {
          try {
            await this.store.retryLater(record.organization, record.id, this.owner, delay);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
      }
    } finally {
      await sink?.done().catch(() => {});
      clearInterval(heartbeat);
      this.current = undefined;
      settle();
    }
  }

  processing(): number {
    return this.current ? 1 : 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.controller.abort();
    this.wake?.();
    await this.running;
    // What this worker held goes back to the queue at once rather than after its lease.
    await this.store.release(this.owner).catch(() => {});
    await this.unlisten?.();
  }
}
