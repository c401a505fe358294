// Jobs on disk under <data-dir>/jobs/<organization>/<job-id>/. A job is written into <data-dir>/tmp/ and
// renamed into place only when complete, so a crash never leaves a half job visible. Deleting renames the
// job out of sight first, then removes every byte.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { access, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { mkdirPrivate, mkdirPrivateSync, moveToTrash, PRIVATE_FILE, readIfPresent, writeFileAtomic } from '../../fs-atomic.js';
import type { JobFiles, JobStateStore, PendingJob } from '../../ports.js';
import { IDEMPOTENCY_WINDOW_MS, type JobOverview, type JobRecord, type JobSummary } from '../../domain/job.js';
import { DEFAULT_RESULT_FILE, UPLOADS_FOLDER } from '../../domain/job-folder.js';
import type { SignatureEvent } from '../../../record/signature-record.js';
import { FileSignatureRecord } from './record-file.js';
import { createReadStream } from 'node:fs';

const JOB_FILE = 'job.json';

/** Job files kept in memory as text (most recently used), so that a status call reads no file. */
const CACHED_RECORDS = 4096;

const summaryOf = (r: JobRecord): JobSummary => ({
  id: r.id,
  comment: r.comment,
  createdAt: r.createdAt,
  processingFinished: r.processingFinished,
  fileCount: r.assemblies.length,
});
/** Whether a job finished before `before` (finishedAt; createdAt for a job finished by an older version). */
export const finishedBy = (r: JobRecord, before: Date): boolean => r.processingFinished && Date.parse(r.finishedAt ?? r.createdAt) < before.getTime();
export const overviewOf = (r: JobRecord): JobOverview => ({
  organization: r.organization,
  id: r.id,
  createdAt: r.createdAt,
  finishedAt: r.processingFinished ? (r.finishedAt ?? r.createdAt) : null,
  fileCount: r.assemblies.length,
  comment: r.comment,
});
const byCreation = (a: JobSummary, b: JobSummary) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1);

export class JobStore implements JobStateStore {
  readonly kind = 'data-dir';
  readonly jobsDir: string;
  readonly tmpDir: string;
  /** Jobs kept plus uploads in flight, per organization: the job limit is checked against this, exactly. */
  private readonly slots = new Map<string, number>();
  /** Jobs whose delete is under way (organization/id). */
  private readonly deleting = new Set<string>();
  /** Per organization, the summaries of its kept jobs in creation order; built from disk on first list. */
  private readonly index = new Map<string, Map<string, JobSummary>>();
  /** Per organization, the Idempotency-Keys of its kept jobs (read from the job files once, then kept up to date). */
  private readonly keys = new Map<string, Map<string, string>>();
  /**
   * The files with entries in the record, per job (organization/id) whose job file does not say finished yet: filled
   * by an append and by the start's look at the record, emptied once the job file says finished.
   */
  private readonly recorded = new Map<string, Set<string>>();
  /** <data-dir>/signature-record.jsonl: appended to when a job that signed files finishes. */
  readonly signatures: FileSignatureRecord;
  /**
   * Job files as text by organization/id, least recently used first: what is on disk (`durable`), or the progress of
   * a job being processed, which only status calls see (the data directory belongs to this process alone).
   */
  private readonly records = new Map<string, { text: string; durable: boolean }>();
  /** Organizations whose jobs folder exists. */
  private readonly orgDirs = new Set<string>();

  constructor(readonly dataDir: string) {
    this.jobsDir = join(dataDir, 'jobs');
    this.tmpDir = join(dataDir, 'tmp');
    this.signatures = new FileSignatureRecord(dataDir);
    mkdirPrivateSync(this.jobsDir);
    // Whatever is in tmp/ was never acknowledged (or was being deleted): it goes.
    if (existsSync(this.tmpDir)) for (const entry of readdirSync(this.tmpDir)) void rm(join(this.tmpDir, entry), { recursive: true, force: true });
    mkdirPrivateSync(this.tmpDir);
    for (const org of readdirSync(this.jobsDir)) {
      this.removeLeftovers(org);
      this.slots.set(org, this.jobIds(org).length);
    }
  }

  /**
   * What a crash (kill -9) leaves in an organization's job folders: temporary files of an atomic write
   * (`job.json.tmp-*`, `.result.zip.tmp-*`), which are never read, and folders without a job.json, which
   * no job owns. Removed before the service answers its first request.
   */
  private removeLeftovers(organization: string): void {
    const orgDir = join(this.jobsDir, organization);
    for (const id of readdirSync(orgDir)) {
      const dir = join(orgDir, id);
      if (!statSync(dir).isDirectory()) continue;
      if (!existsSync(join(dir, JOB_FILE))) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      for (const entry of readdirSync(dir)) {
        if (/^(?:job\.json|\.result\.zip)\.tmp-/.test(entry)) rmSync(join(dir, entry), { force: true });
      }
    }
  }

  private jobIds(organization: string): string[] {
    const dir = join(this.jobsDir, organization);
    return existsSync(dir) ? readdirSync(dir).filter((id) => existsSync(join(dir, id, JOB_FILE))) : [];
  }

  /** Reserves a job slot; false when the organization already keeps `limit` jobs (counting uploads in flight). */
  reserveSlot(organization: string, limit: number): boolean {
    const used = this.slots.get(organization) ?? 0;
    if (used >= limit) return false;
    this.slots.set(organization, used + 1);
    return true;
  }

  releaseSlot(organization: string): void {
    this.slots.set(organization, Math.max(0, (this.slots.get(organization) ?? 1) - 1));
  }

  async reserve(organization: string, limit: number): Promise<PendingJob | undefined> {
    if (!this.reserveSlot(organization, limit)) return undefined;
    try {
      return await this.begin(organization);
    } catch (error) {
      this.releaseSlot(organization);
      throw error;
    }
  }

  async ping(): Promise<void> {
    await access(this.dataDir, constants.W_OK);
  }

  async close(): Promise<void> {}

  /** A temporary place for an upload that has a reserved slot. */
  async begin(organization: string): Promise<PendingJob> {
    const id = randomUUID();
    const dir = join(this.tmpDir, `${organization}--${id}`);
    const uploadsDir = join(dir, UPLOADS_FOLDER);
    await mkdirPrivate(uploadsDir);
    return { id, organization, dir, uploadsDir };
  }

  /** Throws away an upload that will not become a job and releases its slot. */
  async abandon(pending: PendingJob): Promise<void> {
    this.releaseSlot(pending.organization);
    await rm(pending.dir, { recursive: true, force: true });
  }

  /** Writes the job record and makes the job visible in one rename (the folder is out of sight until then). */
  async commit(pending: PendingJob, record: JobRecord): Promise<void> {
    const text = JSON.stringify(record, null, 2);
    await writeFile(join(pending.dir, JOB_FILE), text, { mode: PRIVATE_FILE, flag: 'wx' });
    if (!this.orgDirs.has(pending.organization)) {
      await mkdirPrivate(join(this.jobsDir, pending.organization));
      this.orgDirs.add(pending.organization);
    }
    await rename(pending.dir, this.jobDir(pending.organization, pending.id));
    this.remember(jobKey(pending.organization, pending.id), text, true);
    this.index.get(pending.organization)?.set(record.id, summaryOf(record));
    if (record.idempotencyKey) this.keys.get(pending.organization)?.set(record.idempotencyKey, record.id);
  }

  async findByIdempotencyKey(organization: string, key: string): Promise<JobRecord | undefined> {
    let keys = this.keys.get(organization);
    if (!keys) {
      const records = await Promise.all(this.jobIds(organization).map((id) => this.get(organization, id)));
      keys = this.keys.get(organization) ?? new Map(records.flatMap((r) => (r?.idempotencyKey ? [[r.idempotencyKey, r.id] as const] : [])));
      this.keys.set(organization, keys);
    }
    const id = keys.get(key);
    const record = id === undefined ? undefined : await this.get(organization, id);
    return record && Date.now() - Date.parse(record.createdAt) <= IDEMPOTENCY_WINDOW_MS ? record : undefined;
  }

  private jobDir(organization: string, id: string): string {
    return join(this.jobsDir, organization, id);
  }

  readonly files: JobFiles = {
    folder: (organization, id) => this.jobDir(organization, id),
    openResult: async (record) => createReadStream(join(this.jobDir(record.organization, record.id), record.resultFile ?? DEFAULT_RESULT_FILE)),
    read: (record, name) => readIfPresent(join(this.jobDir(record.organization, record.id), ...name.split('/'))),
  };

  /** The job of this organization, or undefined (also for another organization's job and malformed ids). */
  async get(organization: string, id: string): Promise<JobRecord | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    const key = jobKey(organization, id);
    const cached = this.records.get(key);
    if (cached) {
      this.records.delete(key); // most recently used: last
      this.records.set(key, cached);
      return JSON.parse(cached.text) as JobRecord;
    }
    let text: string;
    try {
      text = await readFile(join(this.jobDir(organization, id), JOB_FILE), 'utf8');
    } catch {
      return undefined;
    }
    let record: JobRecord;
    try {
      record = JSON.parse(text) as JobRecord;
    } catch {
      return undefined;
    }
    if (!this.deleting.has(key) && !this.records.has(key)) this.remember(key, text, true);
    return record;
  }

  /** Keeps a job file's text in memory; past CACHED_RECORDS the least recently used that is on disk goes. */
  private remember(key: string, text: string, durable: boolean): void {
    this.records.delete(key);
    this.records.set(key, { text, durable });
    if (this.records.size <= CACHED_RECORDS) return;
    for (const [k, r] of this.records) {
      if (!r.durable) continue; // progress of a job being processed: kept until the job is saved
      this.records.delete(k);
      if (this.records.size <= CACHED_RECORDS) return;
    }
  }

  /**
   * The worker's progress, for status calls only: a job being processed is processed again from its start after a
   * crash, so its job file is written when it starts to finish (save), not for each file. A job that is not in memory
   * (deleted meanwhile) is left alone.
   */
  async progress(record: JobRecord): Promise<void> {
    const key = jobKey(record.organization, record.id);
    if (this.records.has(key) && !this.deleting.has(key)) this.remember(key, JSON.stringify(record, null, 2), false);
  }

  /**
   * The job file; with `signatures`, appended to the record first (durably), so that a finished job has its entries.
   * The append is the moment the job is finished: once the record holds the job's entries, the job is never signed
   * again (finishRecorded) and an entry is never appended twice for one file of one job.
   */
  async save(record: JobRecord, signatures?: readonly SignatureEvent[]): Promise<void> {
    const key = jobKey(record.organization, record.id);
    if (record.processingFinished && !record.finishedAt) record.finishedAt = new Date().toISOString();
    if (signatures?.length) {
      const already = this.recorded.get(key);
      const fresh = already ? signatures.filter((s) => !already.has(s.file)) : signatures;
      if (fresh.length) record.recordSeqs = [...(record.recordSeqs ?? []), ...(await this.signatures.append(fresh)).map((e) => e.seq)];
      this.recorded.set(key, new Set([...(already ?? []), ...signatures.map((s) => s.file)]));
    }
    const text = JSON.stringify(record, null, 2);
    await writeFileAtomic(join(this.jobDir(record.organization, record.id), JOB_FILE), text);
    if (!this.deleting.has(key)) this.remember(key, text, true);
    if (record.processingFinished) this.recorded.delete(key);
    const jobs = this.index.get(record.organization);
    if (jobs?.has(record.id)) jobs.set(record.id, summaryOf(record));
  }

  /**
   * Finishes a job whose entries the record already holds but whose job file does not say finished (a kill, or a
   * full disk, between the record's append and the job file): the job file holds every file's final state and the
   * result package was written before the append, so the job is marked finished as it is: signing it again would
   * record its files twice, or (with a key that became unavailable) leave entries for bytes no client receives.
   * False when the record holds nothing of the job (or its package is gone): the job is processed as usual.
   */
  async finishRecorded(record: JobRecord): Promise<boolean> {
    if (record.processingFinished || !this.recorded.has(jobKey(record.organization, record.id))) return false;
    if (!existsSync(join(this.jobDir(record.organization, record.id), record.resultFile ?? DEFAULT_RESULT_FILE))) return false;
    record.processingFinished = true;
    await this.save(record);
    return true;
  }

  /**
   * The organization's kept jobs in creation order, from the in-memory index (job files are read once, on the
   * first list after a start); `offset` and `limit` page through them.
   */
  async list(organization: string, page: { offset?: number; limit?: number } = {}): Promise<JobSummary[]> {
    let jobs = this.index.get(organization);
    if (!jobs) {
      const records = await Promise.all(this.jobIds(organization).map((id) => this.get(organization, id)));
      const summaries = records
        .filter((r): r is JobRecord => r !== undefined)
        .map(summaryOf)
        .sort(byCreation);
      // Another list or a commit may have built it meanwhile: the first one wins, later changes go into it.
      jobs = this.index.get(organization) ?? new Map(summaries.map((j) => [j.id, j]));
      this.index.set(organization, jobs);
    }
    const all = [...jobs.values()];
    const offset = page.offset ?? 0;
    return all.slice(offset, page.limit === undefined ? undefined : offset + page.limit);
  }

  async overview(organization?: string): Promise<JobOverview[]> {
    const out: JobOverview[] = [];
    for (const org of organization === undefined ? readdirSync(this.jobsDir) : [organization]) {
      for (const id of this.jobIds(org)) {
        const r = await this.get(org, id);
        if (r) out.push(overviewOf(r));
      }
    }
    return out.sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /** Every job that had not finished processing (to resume after a restart). */
  async unfinished(): Promise<JobRecord[]> {
    const out: JobRecord[] = [];
    for (const org of readdirSync(this.jobsDir)) {
      for (const id of this.jobIds(org)) {
        const record = JSON.parse(readFileSync(join(this.jobDir(org, id), JOB_FILE), 'utf8')) as JobRecord;
        if (!record.processingFinished) out.push(record);
      }
    }
    // Those whose entries the record holds already are finished by finishRecorded instead of being signed again.
    const recorded = await this.signatures.filesOfJobs(new Set(out.map((r) => r.id)));
    for (const r of out) {
      const files = recorded.get(r.id);
      if (files) this.recorded.set(jobKey(r.organization, r.id), files);
    }
    return out.sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  }

  /**
   * Removes the job and every byte stored for it; false when there is no such job. Of concurrent deletes of
   * one job exactly one returns true: the others find it being deleted, or already renamed away.
   */
  async delete(organization: string, id: string, finishedBefore?: Date): Promise<boolean> {
    const key = `${organization}/${id}`;
    if (this.deleting.has(key)) return false;
    this.deleting.add(key);
    try {
      const record = await this.get(organization, id);
      if (!record) return false;
      if (finishedBefore && !finishedBy(record, finishedBefore)) return false;
      const trash = await moveToTrash(this.tmpDir, this.jobDir(organization, id), id);
      this.records.delete(key);
      if (!trash) return false;
      this.releaseSlot(organization);
      this.index.get(organization)?.delete(id);
      const keys = this.keys.get(organization);
      for (const [k, v] of keys ?? []) if (v === id) keys!.delete(k);
      await rm(trash, { recursive: true, force: true });
      return true;
    } finally {
      this.deleting.delete(key);
    }
  }
}

const jobKey = (organization: string, id: string) => `${organization}/${id}`;
