// Jobs, their file states and messages, the per-organization job limit and the signing queue in PostgreSQL.
// The job limit is checked inside a transaction that locks the organization's row, so it is exact however many
// API processes upload at once. The queue is a job table read with FOR UPDATE SKIP LOCKED: a worker leases a
// job and renews the lease while it signs; a job whose lease ran out (its worker died) is taken by another
// worker. Every write of a worker is fenced by its lease, so a worker that lost its job can never make its
// result visible. Job files are in the data directory, which every node then shares, or in object storage
// (`blobs`): then a node's data directory holds only the uploads it receives and the jobs it signs, meanwhile.
import { randomUUID } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import pg, { type Pool, type PoolClient } from 'pg';
import { mkdirPrivate, mkdirPrivateSync, moveToTrash, readIfPresent } from '../../fs-atomic.js';
import type { JobFiles, JobProgressSink, JobStateStore, LeasedJob, PendingJob, SharedJobQueue } from '../../ports.js';
import { IDEMPOTENCY_WINDOW_MS, type JobFile, type JobOverview, type JobRecord, type JobSummary } from '../../domain/job.js';
import { DEFAULT_RESULT_FILE, UPLOADS_FOLDER } from '../../domain/job-folder.js';
import { LeaseLost } from '../../domain/lease.js';
import type { S3Blobs } from '../s3/s3-blobs.js';
import type { SignatureEvent } from '../../../record/signature-record.js';
import { appendSignatures, PgSignatureRecord } from './pg-record.js';

interface JobRow {
  organization: string;
  id: string;
  state: 'uploading' | 'queued' | 'processing' | 'finished';
  created_at: Date;
  comment: string | null;
  files: JobFile[];
  result_file: string | null;
  idempotency_key?: string | null;
  submitted_by?: JobRecord['submittedBy'] | null;
  accepted_keys?: JobRecord['acceptedKeys'] | null;
  key_wait_since?: Date | null;
  key_wait_options?: string[] | null;
  finished_at?: Date | null;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function recordOf(row: JobRow): JobRecord {
  return {
    id: row.id,
    organization: row.organization,
    comment: row.comment,
    createdAt: row.created_at.toISOString(),
    processingFinished: row.state === 'finished',
    assemblies: row.files,
    ...(row.result_file ? { resultFile: row.result_file } : {}),
    ...(row.idempotency_key ? { idempotencyKey: row.idempotency_key } : {}),
    ...(row.submitted_by ? { submittedBy: row.submitted_by } : {}),
    ...(row.accepted_keys ? { acceptedKeys: row.accepted_keys } : {}),
    ...(row.key_wait_since ? { keyWait: { since: row.key_wait_since.toISOString(), options: row.key_wait_options ?? [] } } : {}),
    ...(row.finished_at ? { finishedAt: row.finished_at.toISOString() } : {}),
  };
}

export interface PgJobStoreOptions {
  readonly dataDir: string;
  /** How long a lease (an upload in flight, a job being signed) lasts without being renewed. */
  readonly leaseMs: number;
  readonly log: FastifyBaseLogger;
  /** Job files in S3-compatible object storage instead of the shared data directory. */
  readonly blobs?: S3Blobs | undefined;
  /** The database for messages (without its password). */
  readonly where?: string;
  /** The connection string, for the queue's own connection that listens for new jobs (NOTIFY signgate_jobs). */
  readonly database?: string;
}

export class PgJobStore implements JobStateStore, SharedJobQueue {
  readonly kind = 'postgres';
  readonly jobsDir: string;
  private readonly tmpDir: string;
  /** This process, as the owner of its upload leases. */
  readonly node = `${process.pid}-${randomUUID()}`;
  /** Uploads this node is receiving (job ids): their leases are renewed; only these can be abandoned. */
  private readonly uploads = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** The signature record in the database; appended to by the transaction that finishes a job. */
  readonly signatures: PgSignatureRecord;

  constructor(
    readonly pool: Pool,
    private readonly options: PgJobStoreOptions,
  ) {
    this.signatures = new PgSignatureRecord(pool, options.where ?? 'the database');
    this.jobsDir = join(options.dataDir, 'jobs');
    this.tmpDir = join(options.dataDir, 'tmp');
    // With object storage the data directory is this node's own scratch space: what a crash left there goes.
    // Without it, other nodes share these folders and nothing is cleared here (sweep() removes dead uploads).
    if (options.blobs) for (const dir of [this.tmpDir, join(options.dataDir, 'work')]) rmSync(dir, { recursive: true, force: true });
    mkdirPrivateSync(this.jobsDir);
    mkdirPrivateSync(this.tmpDir);
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  /** Renews this node's upload leases while it receives uploads; with `sweep`, also removes uploads whose node died. */
  start(sweep: boolean): void {
    const every = Math.max(50, Math.floor(this.options.leaseMs / 3));
    const renew = setInterval(() => {
      if (this.uploads.size === 0) return;
      this.pool
        .query(`UPDATE signgate_jobs SET lease_until = now() + $2 * interval '1 millisecond' WHERE state = 'uploading' AND lease_owner = $1`, [
          this.node,
          this.options.leaseMs,
        ])
        .catch((error: Error) => this.options.log.warn({ err: { message: error.message } }, 'renewing upload leases failed'));
    }, every);
    this.timers.push(renew);
    if (sweep) {
      const sweeper = setInterval(() => {
        this.sweep().catch((error: Error) => this.options.log.warn({ err: { message: error.message } }, 'sweeping abandoned uploads failed'));
      }, this.options.leaseMs);
      this.timers.push(sweeper);
    }
    for (const t of this.timers) t.unref();
  }

  /** Removes uploads whose lease ran out (their API node died mid-upload): files first, then the row. */
  async sweep(): Promise<number> {
    const { rows } = await this.pool.query<{ organization: string; id: string }>(
      `SELECT organization, id FROM signgate_jobs WHERE state = 'uploading' AND lease_until < now() ORDER BY lease_until LIMIT 100`,
    );
    for (const r of rows) {
      await this.options.blobs?.removePrefix(this.options.blobs.key(r.organization, r.id));
      await rm(this.pendingDir(r.organization, r.id), { recursive: true, force: true });
      await rm(this.jobDir(r.organization, r.id), { recursive: true, force: true });
      await this.pool.query(`DELETE FROM signgate_jobs WHERE organization = $1 AND id = $2 AND state = 'uploading' AND lease_until < now()`, [
        r.organization,
        r.id,
      ]);
      this.options.log.info({ job: r.id, organization: r.organization }, 'abandoned upload removed');
    }
    return rows.length;
  }

  /**
   * Runs `work` on a connection of its own. `signal` ends a wait in it (a lock another session holds, a database
   * that does not answer): the statement in progress is cancelled (pg_cancel_backend, from another connection), and
   * the connection is closed rather than handed back, so that a late cancel reaches nobody else's statement.
   * Rejects with the signal's reason then.
   */
  private async onConnection<T>(work: (client: PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const client = await this.pool.connect();
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      const pid = (client as PoolClient & { processID?: number | null }).processID;
      if (pid) this.pool.query('SELECT pg_cancel_backend($1)', [pid]).catch(() => {});
    };
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      return await work(client);
    } catch (error) {
      throw signal?.aborted ? (signal.reason ?? error) : error;
    } finally {
      signal?.removeEventListener('abort', cancel);
      client.release(cancelled);
    }
  }

  /** Runs `work` in a transaction (rolled back when it throws); `signal` as for onConnection. */
  private transaction<T>(work: (client: PoolClient) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.onConnection(async (client) => {
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      }
    }, signal);
  }

  async reserve(organization: string, limit: number): Promise<PendingJob | undefined> {
    const id = randomUUID();
    const reserved = await this.transaction(async (client) => {
      // The upsert locks the organization's row until the end of the transaction: reservations queue up here,
      // and each counts what the ones before it committed.
      await client.query('INSERT INTO signgate_organizations (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id', [organization]);
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM signgate_jobs WHERE organization = $1 AND NOT (state = 'uploading' AND lease_until < now())`,
        [organization],
      );
      if (Number(rows[0]!.n) >= limit) return false;
      await client.query(
        `INSERT INTO signgate_jobs (organization, id, state, lease_owner, lease_until) VALUES ($1, $2, 'uploading', $3, now() + $4 * interval '1 millisecond')`,
        [organization, id, this.node, this.options.leaseMs],
      );
      return true;
    });
    if (!reserved) return undefined;
    this.uploads.add(id);
    const dir = this.pendingDir(organization, id);
    const uploadsDir = join(dir, UPLOADS_FOLDER);
    try {
      await mkdirPrivate(uploadsDir);
    } catch (error) {
      await this.abandon({ id, organization, dir, uploadsDir });
      throw error;
    }
    return { id, organization, dir, uploadsDir };
  }

  async abandon(pending: PendingJob): Promise<void> {
    if (!this.uploads.delete(pending.id)) return; // committed: a job now, removed only by delete()
    await rm(pending.dir, { recursive: true, force: true });
    await rm(this.jobDir(pending.organization, pending.id), { recursive: true, force: true }); // renamed there by a commit that failed
    await this.options.blobs?.removePrefix(this.options.blobs.key(pending.organization, pending.id));
    await this.pool.query(`DELETE FROM signgate_jobs WHERE organization = $1 AND id = $2 AND state = 'uploading'`, [pending.organization, pending.id]);
  }

  /** Where an upload is written while it arrives: renamed to its job folder when complete. */
  private pendingDir(organization: string, id: string): string {
    return join(this.tmpDir, `${organization}--${id}`);
  }

  async commit(pending: PendingJob, record: JobRecord): Promise<void> {
    const target = this.jobDir(pending.organization, pending.id);
    await mkdirPrivate(join(this.jobsDir, pending.organization));
    await rename(pending.dir, target);
    // From here the job's files are in its folder: an upload whose lease ran out loses them there (sweep()).
    const blobs = this.options.blobs;
    // Every file of the upload goes to the bucket: the uploads the workers sign, and what an archive job keeps
    // beside them (its manifest and its other files), which any API node returns.
    if (blobs) await blobs.putFolder(target, blobs.key(pending.organization, pending.id));
    const { rowCount } = await this.pool.query(
      `UPDATE signgate_jobs SET state = 'queued', created_at = $3, comment = $4, files = $5, file_count = jsonb_array_length($5), lease_owner = NULL, lease_until = NULL, idempotency_key = $7,
         submitted_by = $8, accepted_keys = $9
       WHERE organization = $1 AND id = $2 AND state = 'uploading' AND lease_owner = $6`,
      [
        pending.organization,
        pending.id,
        record.createdAt,
        record.comment,
        JSON.stringify(record.assemblies),
        this.node,
        record.idempotencyKey ?? null,
        record.submittedBy ? JSON.stringify(record.submittedBy) : null,
        record.acceptedKeys ? JSON.stringify(record.acceptedKeys) : null,
      ],
    );
    if (rowCount !== 1) {
      await rm(target, { recursive: true, force: true });
      await blobs?.removePrefix(blobs.key(pending.organization, pending.id));
      throw new Error(`the upload of job ${pending.id} outlived its lease and was removed`);
    }
    this.uploads.delete(pending.id);
    if (blobs) await rm(target, { recursive: true, force: true }); // in the bucket now: the workers take it from there
    // Wakes the workers at once; without it they find the job at their next poll.
    await this.pool.query(`SELECT pg_notify('signgate_jobs', '')`).catch(() => {});
  }

  async findByIdempotencyKey(organization: string, key: string): Promise<JobRecord | undefined> {
    const { rows } = await this.pool.query<JobRow>(
      `SELECT * FROM signgate_jobs WHERE organization = $1 AND idempotency_key = $2 AND state <> 'uploading' AND created_at > now() - make_interval(secs => $3) ORDER BY created_at LIMIT 1`,
      [organization, key, IDEMPOTENCY_WINDOW_MS / 1000],
    );
    return rows[0] ? recordOf(rows[0]) : undefined;
  }

  async get(organization: string, id: string): Promise<JobRecord | undefined> {
    if (!JOB_ID.test(id)) return undefined;
    const { rows } = await this.pool.query<JobRow>(`SELECT * FROM signgate_jobs WHERE organization = $1 AND id = $2 AND state <> 'uploading'`, [
      organization,
      id,
    ]);
    return rows[0] ? recordOf(rows[0]) : undefined;
  }

  /** Unfenced progress (used by no worker of this store: theirs go through saveLeased); `signatures` in the same transaction. */
  async save(record: JobRecord, signatures?: readonly SignatureEvent[]): Promise<void> {
    const update = (client: Pool | PoolClient) =>
      client.query(
        `UPDATE signgate_jobs SET files = $3, result_file = $4, state = CASE WHEN $5 THEN 'finished' ELSE state END WHERE organization = $1 AND id = $2 AND state <> 'uploading'`,
        [record.organization, record.id, JSON.stringify(record.assemblies), record.resultFile ?? null, record.processingFinished],
      );
    if (!signatures?.length) {
      await update(this.pool);
      return;
    }
    await this.transaction(async (client) => {
      await update(client);
      await appendSignatures(client, signatures);
    });
  }

  /**
   * The worker's progress, written only while `owner` holds the job's lease; a finished job lets go of it. The
   * signatures of a finished job are appended to the record in the same transaction: a worker that lost its lease
   * appends nothing, and a job's entries exist exactly when it finished.
   */
  async saveLeased(record: JobRecord, owner: string, signatures?: readonly SignatureEvent[], signal?: AbortSignal): Promise<void> {
    const update = async (client: Pool | PoolClient) => {
      const { rowCount } = await client.query(
        `UPDATE signgate_jobs SET files = $3, result_file = $4,
           state = CASE WHEN $5 THEN 'finished' ELSE state END,
           lease_owner = CASE WHEN $5 THEN NULL ELSE lease_owner END,
           lease_until = CASE WHEN $5 THEN NULL ELSE lease_until END,
           key_wait_since = CASE WHEN $5 THEN NULL ELSE key_wait_since END,
           key_wait_options = CASE WHEN $5 THEN NULL ELSE key_wait_options END
         WHERE organization = $1 AND id = $2 AND state = 'processing' AND lease_owner = $6`,
        [record.organization, record.id, JSON.stringify(record.assemblies), record.resultFile ?? null, record.processingFinished, owner],
      );
      if (rowCount !== 1) throw new LeaseLost(record.organization, record.id);
    };
    // With a signal (a worker's job), the update alone can wait for a lock too: the signal cancels the wait.
    if (!signatures?.length) return signal ? this.onConnection(update, signal) : update(this.pool);
    await this.transaction(async (client) => {
      await update(client);
      if (signatures?.length) await appendSignatures(client, signatures);
    }, signal);
  }

  /**
   * Calls `wake` on every NOTIFY signgate_jobs (a job queued or given back by any node), on a connection of its own;
   * `lost` hears when notifications stop or cannot start (the worker then polls alone). Resolves to what stops it.
   */
  async listen(wake: () => void, lost: (message: string, when: 'start' | 'later') => void): Promise<() => Promise<void>> {
    if (!this.options.database) {
      lost('no connection string for notifications', 'start');
      return async () => {};
    }
    const listener = new pg.Client({ connectionString: this.options.database });
    listener.on('error', (error) => lost(error.message, 'later'));
    listener.on('notification', () => wake());
    try {
      await listener.connect();
      await listener.query('LISTEN signgate_jobs');
    } catch (error) {
      lost((error as Error).message, 'start');
      await listener.end().catch(() => {});
      return async () => {};
    }
    return () => listener.end().catch(() => {});
  }

  /**
   * Leases the oldest queued job, or one whose worker's lease ran out, to `owner`; undefined when there is none.
   * `attempts` counts this one: past MAX_ATTEMPTS the worker finishes the job instead of processing it.
   */
  async claim(
    owner: string,
    waitFor: { readonly unusable: readonly string[]; readonly keyWaitSeconds: number } = { unusable: [], keyWaitSeconds: 0 },
  ): Promise<LeasedJob | undefined> {
    // A job that waits for a key this worker found unusable is left to the others, until its wait is over (then any
    // worker takes it, to end its files with an error).
    const { rows } = await this.pool.query<JobRow & { attempts: number }>(
      `UPDATE signgate_jobs j SET state = 'processing', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond', attempts = j.attempts + 1
       FROM (SELECT organization, id FROM signgate_jobs
             WHERE (state = 'queued' OR (state = 'processing' AND lease_until < now()))
               AND (key_wait_options IS NULL OR NOT (key_wait_options ?| $3::text[]) OR key_wait_since < now() - $4 * interval '1 second')
             ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) next
       WHERE j.organization = next.organization AND j.id = next.id
       RETURNING j.*`,
      [owner, this.options.leaseMs, waitFor.unusable, waitFor.keyWaitSeconds],
    );
    return rows[0] ? { ...recordOf(rows[0]), attempts: rows[0].attempts } : undefined;
  }

  /**
   * Lets go of a job whose processing failed so that a worker takes it again after `delayMs` (not after the whole
   * lease); its attempt stays counted.
   */
  async retryLater(organization: string, id: string, owner: string, delayMs: number): Promise<void> {
    await this.pool.query(
      `UPDATE signgate_jobs SET lease_owner = NULL, lease_until = now() + $4 * interval '1 millisecond' WHERE organization = $1 AND id = $2 AND state = 'processing' AND lease_owner = $3`,
      [organization, id, owner, delayMs],
    );
  }

  /**
   * Puts a job that waits for a key back in the queue at once, for another worker (its files as markWaiting left
   * them, and since when it waits); the attempt is not counted.
   */
  async waitForKey(record: JobRecord, owner: string): Promise<void> {
    await this.pool.query(
      `UPDATE signgate_jobs SET files = $4, key_wait_since = coalesce(key_wait_since, $5::timestamptz), key_wait_options = $6, lease_owner = NULL, lease_until = NULL,
              state = 'queued', attempts = greatest(attempts - 1, 0)
       WHERE organization = $1 AND id = $2 AND state = 'processing' AND lease_owner = $3`,
      [record.organization, record.id, owner, JSON.stringify(record.assemblies), record.keyWait!.since, JSON.stringify(record.keyWait!.options)],
    );
    await this.pool.query(`SELECT pg_notify('signgate_jobs', '')`);
  }

  /** Renews `owner`'s lease on a job; false when it holds it no more. */
  async heartbeat(organization: string, id: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE signgate_jobs SET lease_until = now() + $4 * interval '1 millisecond' WHERE organization = $1 AND id = $2 AND state = 'processing' AND lease_owner = $3`,
      [organization, id, owner, this.options.leaseMs],
    );
    return rowCount === 1;
  }

  /** Gives the jobs `owner` holds back to the queue (a worker that stops), for the next worker to take at once. */
  async release(owner: string): Promise<void> {
    await this.pool.query(
      `UPDATE signgate_jobs SET state = 'queued', lease_owner = NULL, lease_until = NULL, attempts = attempts - 1 WHERE state = 'processing' AND lease_owner = $1`,
      [owner],
    );
    await this.pool.query(`SELECT pg_notify('signgate_jobs', '')`);
  }

  async list(organization: string, page: { offset?: number; limit?: number } = {}): Promise<JobSummary[]> {
    // The time as ISO text from the server (the same text toISOString() gives): no Date per row.
    const { rows } = await this.pool.query<JobSummary>(
      `SELECT id, comment, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
              state = 'finished' AS "processingFinished", file_count AS "fileCount"
       FROM signgate_jobs WHERE organization = $1 AND state <> 'uploading' ORDER BY created_at, id OFFSET $2 LIMIT $3`,
      [organization, page.offset ?? 0, page.limit ?? null],
    );
    return rows;
  }

  async delete(organization: string, id: string, finishedBefore?: Date): Promise<boolean> {
    if (!JOB_ID.test(id)) return false;
    // With finishedBefore (retention): only a finished job, decided in the same statement as the delete.
    const { rowCount } = finishedBefore
      ? await this.pool.query(
          `DELETE FROM signgate_jobs WHERE organization = $1 AND id = $2 AND state = 'finished' AND coalesce(finished_at, created_at) < $3`,
          [organization, id, finishedBefore],
        )
      : await this.pool.query(`DELETE FROM signgate_jobs WHERE organization = $1 AND id = $2 AND state <> 'uploading'`, [organization, id]);
    if (rowCount !== 1) return false;
    const trash = await moveToTrash(this.tmpDir, this.jobDir(organization, id), id);
    if (trash) await rm(trash, { recursive: true, force: true });
    await this.options.blobs?.removePrefix(this.options.blobs.key(organization, id));
    return true;
  }

  async unfinished(): Promise<JobRecord[]> {
    return []; // the queue: workers take them
  }

  async overview(organization?: string): Promise<JobOverview[]> {
    const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    const { rows } = await this.pool.query<JobOverview>(
      `SELECT organization, id, ${iso('created_at')} AS "createdAt",
              CASE WHEN state = 'finished' THEN ${iso('coalesce(finished_at, created_at)')} END AS "finishedAt",
              file_count AS "fileCount", comment
       FROM signgate_jobs WHERE state <> 'uploading' AND ($1::text IS NULL OR organization = $1) ORDER BY created_at, id`,
      [organization ?? null],
    );
    return rows;
  }

  private jobDir(organization: string, id: string): string {
    return join(this.jobsDir, organization, id);
  }

  readonly files: JobFiles = {
    folder: (organization, id) => this.jobDir(organization, id),
    read: async (record, name) => {
      const blobs = this.options.blobs;
      return blobs
        ? blobs.get(blobs.key(record.organization, record.id, name))
        : readIfPresent(join(this.jobDir(record.organization, record.id), ...name.split('/')));
    },
    openResult: async (record) => {
      const name = record.resultFile ?? DEFAULT_RESULT_FILE;
      const blobs = this.options.blobs;
      return blobs ? blobs.open(blobs.key(record.organization, record.id, name)) : createReadStream(join(this.jobDir(record.organization, record.id), name));
    },
  };

  /**
   * Where `owner` signs a job it leased, and how its progress is written: through the lease, and with object
   * storage in a scratch folder of its own that holds the uploads, whose result package goes into the bucket
   * before the job is marked finished. `done()` removes the scratch folder. `signal` stops the fetch of the uploads,
   * the upload of the result package and a wait of the database for a lock while progress is written (a stopping
   * worker gives the job back at once, uncounted).
   */
  async workOn(record: JobRecord, owner: string, signal?: AbortSignal): Promise<JobProgressSink & { done(): Promise<void> }> {
    const blobs = this.options.blobs;
    if (!blobs)
      return {
        folder: this.jobDir(record.organization, record.id),
        save: (r, signatures) => this.saveLeased(r, owner, signatures, signal),
        done: async () => {},
      };
    const scratch = join(this.options.dataDir, 'work', owner, record.organization, record.id);
    await rm(scratch, { recursive: true, force: true });
    await blobs.getFolder(blobs.key(record.organization, record.id, `${UPLOADS_FOLDER}/`), join(scratch, UPLOADS_FOLDER), signal);
    return {
      folder: scratch,
      save: async (r, signatures) => {
        const resultKey = r.processingFinished && r.resultFile ? blobs.key(r.organization, r.id, r.resultFile) : undefined;
        // A stopped or failed upload leaves no object of its own behind (an S3-compatible server may keep a part).
        if (resultKey)
          await blobs.putFile(join(scratch, r.resultFile!), resultKey, signal).catch(async (error: unknown) => {
            await blobs.remove(resultKey).catch(() => {});
            throw error;
          });
        try {
          await this.saveLeased(r, owner, signatures, signal);
        } catch (error) {
          if (resultKey) await blobs.remove(resultKey).catch(() => {}); // never visible: another worker holds the job, or it was deleted
          throw error;
        }
      },
      done: () => rm(join(this.options.dataDir, 'work', owner), { recursive: true, force: true }),
    };
  }

  async keyWaits(): Promise<readonly { readonly option: string; readonly jobs: number; readonly since: string }[]> {
    const { rows } = await this.pool.query<{ option: string; jobs: string; since: Date }>(
      `SELECT o.option, count(*) AS jobs, min(j.key_wait_since) AS since
       FROM signgate_jobs j, jsonb_array_elements_text(j.key_wait_options) AS o(option)
       WHERE j.state IN ('queued', 'processing') AND j.key_wait_since IS NOT NULL
       GROUP BY o.option ORDER BY o.option`,
    );
    return rows.map((r) => ({ option: r.option, jobs: Number(r.jobs), since: r.since.toISOString() }));
  }

  async waiting(): Promise<number> {
    // As claim() finds work: queued, given back for another attempt (no owner), or whose worker's lease ran out.
    const { rows } = await this.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM signgate_jobs
       WHERE state IN ('queued', 'processing') AND (state = 'queued' OR lease_owner IS NULL OR lease_until < now())`,
    );
    return Number(rows[0]!.n);
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
    await this.options.blobs?.ping();
  }

  async close(): Promise<void> {
    this.options.blobs?.close();
    for (const t of this.timers) clearInterval(t);
    await this.pool.end();
  }
}
