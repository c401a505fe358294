// The service's ports: what the routes, the signing worker and the signature record need from where jobs, job
// files, tokens and the record are kept, as interfaces. Each backend (backends/: the data directory, PostgreSQL with
// the data directory or S3 for job files) implements them; backends/index.ts is the one place a backend is chosen.
// The records themselves (a job, its files, their states) are domain/job.ts's.
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { RecordVerification, SignatureEntry, SignatureEvent } from '../record/signature-record.js';
import type { Hash } from '../record/merkle.js';
import type { JobOverview, JobRecord, JobSummary } from './domain/job.js';
import type { CreatedToken, RevokeSelector, StoredToken } from './domain/tokens.js';
import type { RecordKey } from './record-key.js';

/** Where an upload is written while it arrives. */
export interface PendingJob {
  readonly id: string;
  readonly organization: string;
  readonly dir: string;
  readonly uploadsDir: string;
}

export interface JobStateStore {
  /** 'data-dir' or 'postgres', for logs and readiness. */
  readonly kind: string;
  /**
   * Reserves one of the organization's `limit` job slots and gives the upload a place to be written; undefined
   * when the organization already keeps `limit` jobs (uploads in flight count). Exact under concurrency.
   */
  reserve(organization: string, limit: number): Promise<PendingJob | undefined>;
  /** Throws away an upload that will not become a job and frees its slot. */
  abandon(pending: PendingJob): Promise<void>;
  /** Makes the job visible and queued, in one step: a crash before it leaves no visible job. */
  commit(pending: PendingJob, record: JobRecord): Promise<void>;
  /**
   * The organization's job made by an upload with this Idempotency-Key within IDEMPOTENCY_WINDOW_MS, or undefined:
   * a client that lost the answer to its upload gets the same job again instead of a second one.
   */
  findByIdempotencyKey(organization: string, key: string): Promise<JobRecord | undefined>;
  /** The job of this organization, or undefined (also for another organization's job and malformed ids). */
  get(organization: string, id: string): Promise<JobRecord | undefined>;
  /**
   * Stores the worker's progress on a job. `signatures`, given with the finished job, are appended to the
   * signature record in the same step (PostgreSQL: the same transaction; the data directory: before the job
   * file, fsync'd).
   */
  save(record: JobRecord, signatures?: readonly SignatureEvent[]): Promise<void>;
  /**
   * Shows the worker's progress on a job (a file's state) to status calls without making it durable: after a crash
   * the job is processed again from its start anyway. Absent: progress is saved (save) like any other change.
   */
  progress?(record: JobRecord): Promise<void>;
  /**
   * Finishes, without signing it again, a job whose entries the signature record already holds though its state
   * does not say finished (a crash or a failed write between the two); true when it did. Absent where the entries
   * and the finished state are written in one transaction (PostgreSQL).
   */
  finishRecorded?(record: JobRecord): Promise<boolean>;
  /** The organization's kept jobs in creation order, paged. */
  list(organization: string, page?: { offset?: number; limit?: number }): Promise<JobSummary[]>;
  /**
   * Removes the job and its files; false when there is no such job. Of concurrent deletes exactly one is true.
   * With `finishedBefore` (retention), only a job that finished before then (finishedAt, else createdAt): never one
   * that waits or is being signed.
   */
  delete(organization: string, id: string, finishedBefore?: Date): Promise<boolean>;
  /** Every kept job (but uploads in flight), or one organization's, oldest first. */
  overview(organization?: string): Promise<JobOverview[]>;
  /** Jobs this process must resume itself after a start (the PostgreSQL queue resumes them on its own). */
  unfinished(): Promise<JobRecord[]>;
  /** The job's files (its uploads, its result package, its logs), wherever this store keeps them. */
  readonly files: JobFiles;
  /** The signature record: an entry for every file the service signed and returned. */
  readonly signatures: SignatureRecordReader;
  /**
   * Jobs of the whole deployment waiting for a worker (queued, or given back for another attempt), where the store
   * knows them (PostgreSQL); absent where the worker of this process holds the queue (JobWorker.waiting).
   */
  waiting?(): Promise<number>;
  /** Throws when the store does not answer (readiness). */
  ping(): Promise<void>;
  /**
   * The jobs that wait for a signing key no worker could use (key-wait.ts), by option: how many and since when.
   * For /readyz; a store that cannot tell leaves it out.
   */
  keyWaits?(): Promise<readonly { readonly option: string; readonly jobs: number; readonly since: string }[]>;
  close(): Promise<void>;
}

/**
 * A kept job's files, named as domain/job-folder.ts names them (`uploads/…`, the result package, `archive.json`, …):
 * in the data directory's job folder, or with object storage in the bucket.
 */
export interface JobFiles {
  /**
   * This node's folder for the job: where its upload is written and, on the data directory, where it is signed and
   * its result package kept; a node without a shared folder builds what it serves there (the archive route).
   */
  folder(organization: string, id: string): string;
  /** The result package of a finished job, as a stream. */
  openResult(record: JobRecord): Promise<Readable>;
  /** A file kept with the job, by its path in the job's folder; undefined when the job has no such file. */
  read(record: JobRecord, name: string): Promise<Buffer | undefined>;
}

/** The signature record as `serve record verify` and `serve record export` read it, wherever it is kept. */
export interface SignatureRecordReader {
  /** Where the record is, for messages (a path, or the database without its password). */
  readonly where: string;
  /** Checks the whole chain (and its head); the first break, if any. */
  verify(): Promise<RecordVerification>;
  /** Every entry in order, as kept (verify() first: these are not checked). */
  entries(): AsyncIterable<SignatureEntry>;
  /** The entries after the first `count`, in order, as kept. */
  entriesAfter(count: number): AsyncIterable<SignatureEntry>;
  /** Writes every entry, one JSON line each (the data directory's file format), in order; resolves to how many. */
  exportTo(write: (lines: string) => void | Promise<void>): Promise<number>;
  /**
   * The entries of job `job`, in order, as kept (not checked: the caller compares them with the record's tree);
   * `seqs`, when the job knows its entries' sequence numbers (JobRecord.recordSeqs), says where they are.
   */
  entriesOfJob(job: string, seqs?: readonly number[]): AsyncIterable<SignatureEntry>;
  /** The stored hashes of the record's Merkle tree, kept beside the entries (RecordTreeHashes). */
  tree(): RecordTreeHashes;
}

/**
 * The stored hashes of the signature record's Merkle tree in Go tlog's order (record/stored-tree.ts): derived from
 * the entries and kept beside them, so that the service serves checkpoints and proofs of a record of any size from
 * O(log n) hashes, and a start reads only the entries appended since. Written by the service's RecordLog, which
 * checks the chain as it reads and compares the last stored leaf with the record at a start (a store that does
 * not match is reset and built again from the first entry).
 */
export interface RecordTreeHashes {
  /** How many hashes are stored. */
  count(): Promise<number>;
  /** The hashes at `indexes`, in that order; rejects when one is not stored. */
  read(indexes: readonly number[]): Promise<Hash[]>;
  /** Stores `hashes` at the indexes from `at` on (`at` no more than count(); a store kept by several nodes keeps those it has). */
  write(at: number, hashes: readonly Hash[]): Promise<void>;
  /** Forgets every stored hash. */
  reset(): Promise<void>;
}

/** A job a worker leased from a shared queue, with how often it was taken (this time counted). */
export type LeasedJob = JobRecord & { readonly attempts: number };

/**
 * The job queue the nodes of a deployment share (PostgreSQL): a job is leased to one worker at a time and the lease
 * renewed while it is signed; a worker that dies loses its lease and another takes the job (jobs/queue-worker.ts).
 * A backend without one (the data directory) leaves the queue to the signing worker of its one process.
 */
export interface SharedJobQueue {
  /** How long a lease lasts without a heartbeat. */
  readonly leaseMs: number;
  /**
   * Leases the oldest queued job (or one whose lease ran out) to `owner`, leaving jobs that wait for a key in
   * `waitFor.unusable` to other workers until their wait is over; undefined when there is none.
   */
  claim(owner: string, waitFor?: { readonly unusable: readonly string[]; readonly keyWaitSeconds: number }): Promise<LeasedJob | undefined>;
  /** Renews `owner`'s lease on a job; false when it holds it no more. */
  heartbeat(organization: string, id: string, owner: string): Promise<boolean>;
  /** Where `owner` signs a leased job and how its progress is written (through the lease); `done()` cleans up. */
  workOn(record: JobRecord, owner: string, signal?: AbortSignal): Promise<JobProgressSink & { done(): Promise<void> }>;
  /** Lets go of a job whose processing failed, for a worker to take again after `delayMs` (the attempt counted). */
  retryLater(organization: string, id: string, owner: string, delayMs: number): Promise<void>;
  /** Puts a job that waits for a key back in the queue at once, for another worker (the attempt not counted). */
  waitForKey(record: JobRecord, owner: string): Promise<void>;
  /** Gives the jobs `owner` holds back to the queue at once (a worker that stops). */
  release(owner: string): Promise<void>;
  /**
   * Calls `wake` when any node queues a job (a hint: workers poll too). `lost` hears why it cannot start (`start`) or
   * why it stopped later (`later`); the worker then polls alone. Resolves to what ends it.
   */
  listen(wake: () => void, lost: (message: string, when: 'start' | 'later') => void): Promise<() => Promise<void>>;
}

/**
 * What processJob works in and writes through, for one job: the folder that holds its uploads and takes its result
 * package, and its progress.
 */
export type JobProgressSink = { readonly folder: string } & Pick<JobStateStore, 'save' | 'finishRecorded' | 'progress'>;

/** Where token hashes are kept: the data directory (backends/data-dir/token-file.ts) or PostgreSQL. */
export interface TokenKeeper {
  /** Makes a token valid for `days` days and returns it; only its hash is kept. */
  create(organization: string, user: string, days: number, now?: Date): CreatedToken;
  /** The stored token for a presented one, or undefined. Expiry and revocation are the caller's to check. */
  find(token: string): StoredToken | undefined | Promise<StoredToken | undefined>;
  /** Marks the selected tokens revoked; resolves to how many were revoked now. */
  revoke(selector: RevokeSelector, now?: Date): number | Promise<number>;
  /**
   * True when the store holds no token at all, revoked and expired ones counted (the data directory's store: a
   * service started with another --data-dir than `serve token create` was given); undefined where it is not known.
   */
  holdsNone?(): boolean;
}

/** Where a deployment keeps what it keeps, as the command line and the configuration name it. */
export interface BackendChoice {
  readonly dataDir: string;
  /** postgres://…: the PostgreSQL backend; without it, the data directory. */
  readonly database?: string | undefined;
  /** s3://bucket/prefix?endpoint=…: job files in object storage (with a database only). */
  readonly blobStore?: string | undefined;
}

/** What a node opens its backend with. */
export interface NodeBackendOptions extends BackendChoice {
  readonly role?: 'api' | 'worker' | 'all';
  readonly leaseMs?: number | undefined;
  readonly log: FastifyBaseLogger;
  /** The record key file the configuration or the command line names (absolute); without it, the deployment's own. */
  readonly recordKeyFile?: string | undefined;
}

/** A node's part of its backend: the jobs, the tokens, the shared queue if the backend has one, the record key. */
export interface NodeBackend {
  readonly jobs: JobStateStore;
  readonly tokens: TokenKeeper;
  /** The queue the deployment's workers share; undefined where the node's own signing worker keeps it (the data directory). */
  readonly queue: SharedJobQueue | undefined;
  /** The key this node signs the record's checkpoints with; undefined on a worker node. */
  readonly recordKey: RecordKey | undefined;
  close(): Promise<void>;
}

/** A backend (backends/<name>/index.ts), one of the list in backends/index.ts. */
export interface Backend {
  readonly name: string;
  /** Whether this choice names this backend (the first backend of the list that accepts it is used). */
  accepts(choice: BackendChoice): boolean;
  /** What a service node uses; the checks of the choice (a role or a bucket the backend cannot serve) throw UsageError. */
  openNode(options: NodeBackendOptions): Promise<NodeBackend>;
  /** The jobs, for an operator's command (`serve jobs list|prune`): nothing started; `close` ends the connection. */
  openJobStore(choice: BackendChoice): Promise<{ store: JobStateStore; where: string; close: () => Promise<void> }>;
  /** The token hashes, for `serve token create|revoke`; `close` ends the connection. */
  openTokens(choice: BackendChoice): Promise<{ keeper: TokenKeeper; close: () => Promise<void> }>;
  /** The signature record, for `serve record verify|export`. */
  openSignatureRecord(choice: BackendChoice): Promise<{ record: SignatureRecordReader; close: () => Promise<void> }>;
}
