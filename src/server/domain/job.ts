// A job as the service keeps it, whatever keeps it: its files and their states, its messages, the summary GET
// /assemblies shows, and what an operator sees of it. Plain records, shared by every backend (ports.ts).
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

/** What GET /assemblies shows of a job: kept in memory so that a list never reads every job file. */
export interface JobSummary {
  readonly id: string;
  readonly comment: string | null;
  readonly createdAt: string;
  readonly processingFinished: boolean;
  readonly fileCount: number;
}

/** How long the service remembers an upload's Idempotency-Key: a day. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
