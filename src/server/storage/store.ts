// What the routes and the signing worker need from where jobs are kept, as one interface with two
// implementations: the data directory (JobStore, the default: one process) and PostgreSQL (PgJobStore: any
// number of API and worker processes on one database). Job files (uploads, signed files, the result
// package) are in the data directory, which PostgreSQL nodes then share, or with PostgreSQL in S3-compatible
// object storage (S3Blobs), where nodes share no folder.
import type { Readable } from 'node:stream';
import type { RecordVerification, SignatureEntry, SignatureEvent } from '../../record/signature-record.js';
import type { Hash } from '../../record/merkle.js';

// The records every store keeps, whatever keeps them.
export type { FileProcessingState } from '../../core/file-states.js';
import type { FileProcessingState } from '../../core/file-states.js';

export interface JobMessage {
  readonly dateTime: string;
  readonly messageType: 'Info' | 'Warning' | 'Error';
  readonly message: string;
}

export interface JobFile {
  /** Relative path with `/`, as uploaded. */
  readonly fileName: string;
  readonly size: number;
  readonly sha256: string;
  fileProcessingState: FileProcessingState;
  messages: JobMessage[];
}

export interface JobRecord {
  readonly id: string;
  readonly organization: string;
  readonly comment: string | null;
  readonly createdAt: string;
  processingFinished: boolean;
  assemblies: JobFile[];
  /** The result package's file name in the job's folder once finished (default result.zip). */
  resultFile?: string;
  /** The Idempotency-Key the upload came with, if any. */
  idempotencyKey?: string;
  /** Who uploaded the job: the user, and the id of the personal access token (null for OpenID Connect). Absent in jobs of older versions. */
  submittedBy?: { readonly user: string; readonly tokenId: string | null };
  /**
   * The key each of the organization's options had when the job was accepted (its public key token): the job is
   * signed with these keys, also after an option's key changed (key rotation). Absent in jobs of older versions:
   * they sign with the options' current keys.
   */
  acceptedKeys?: readonly { readonly optionId: number; readonly token: string }[];
  /**
   * Set while the job waits for a signing key that no worker could use (a PKCS#11 token away, a wrong PIN): since
   * when, and the options (`organization/optionId`). The job stays queued; it is signed once a worker can use the
   * key, or its files end Error after limits.keyWaitSeconds (key-wait.ts).
   */
  keyWait?: { readonly since: string; readonly options: readonly string[] };
  /** When the job finished (its result package written), set by the store; absent in jobs finished by older versions. */
  finishedAt?: string;
  /** The sequence numbers of the job's entries in the signature record, set by a store that cannot look them up by job (the data directory). */
  recordSeqs?: number[];
}

/** A kept job as an operator sees it (`serve jobs list`, retention): every organization's, nothing of its files. */
export interface JobOverview {
  readonly organization: string;
  readonly id: string;
  readonly createdAt: string;
  /** When it finished; null while it waits or is signed. A job finished by an older version counts from createdAt. */
  readonly finishedAt: string | null;
  readonly fileCount: number;
  readonly comment: string | null;
}

/** Where an upload is written while it arrives. */
export interface PendingJob {
  readonly id: string;
  readonly organization: string;
  readonly dir: string;
  readonly uploadsDir: string;
}

/** What GET /assemblies shows of a job: kept in memory so that a list never reads every job file. */
export interface JobSummary {
  readonly id: string;
  readonly comment: string | null;
  readonly createdAt: string;
  readonly processingFinished: boolean;
  readonly fileCount: number;
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
  /** The result package of a finished job, as a stream. */
  openResult(record: JobRecord): Promise<Readable>;
  /**
   * A file kept with the job, by its path in the job's folder (`archive.json`, `archive-files/…`, `uploads/…`, the
   * result package), wherever this store keeps job files; undefined when the job has no such file.
   */
  readJobFile(record: JobRecord, name: string): Promise<Buffer | undefined>;
  /** The folder of a kept job's files. */
  jobDir(organization: string, id: string): string;
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

/** What processJob writes through: the job's folder and its progress. */
export type JobProgressSink = Pick<JobStateStore, 'jobDir' | 'save' | 'finishRecorded' | 'progress'>;

/** The result package's name in a job's folder unless the job names another. */
export const DEFAULT_RESULT_FILE = 'result.zip';

/** How long the service remembers an upload's Idempotency-Key: a day. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
