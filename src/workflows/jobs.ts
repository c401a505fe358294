// The organization's jobs on the service: download one into a folder, verified as sign verifies, and choose which to prune.
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { ClientFileState, isFailedState, isPendingState } from '../core/file-states.js';
import { windowsPathKey } from '../core/windows-names.js';
import type { JobRef, JobSummary, ServiceClient } from '../service-client/client.js';
import { CONFIG_FILE_NAME, loadConfig } from './config.js';
import { readPackage, writePackage, type ExtractResult } from './extract.js';
import { SIGNING_LOG } from '../core/upload-names.js';
import { downloadTo } from './files.js';
import { loadExpectedKey, readRecordPublicKey } from './keys.js';
import { cacheDir, downloadName, Ledger, makeCacheDir, sweepStaleDownloads, type LedgerFile } from './ledger.js';
import { bindRecordToFiles, checkRecordProof, describeRecordCheck } from './record-proof.js';
import { fileVerdict } from './returned-file.js';
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

/** Options of downloadJob: the keys the files must be signed with, and what may be overwritten. */
export interface DownloadJobOptions {
  /**
   * The option public key files (`<optionId>_public.snk`): every returned file must be signed with one of them
   * (default: "keys" of signgate.config.json).
   */
  readonly keys?: readonly string[];
  /** The config file (default: the nearest signgate.config.json from the working directory up). */
  readonly config?: string;
  /** The service's record key, expected up front (a file or the key's text), as `sign --record-key`. */
  readonly recordKey?: string;
  /** Overwrite files in the destination that the ledger does not record for the job. */
  readonly force?: boolean;
  readonly progress?: ProgressReporter;
  readonly ledger?: Ledger;
}

/** One returned file of a downloaded job, judged as `sign` judges it. */
export interface DownloadedFile {
  /** Its name in the job (as uploaded). */
  readonly name: string;
  /** The service's fileProcessingState, or Missing when its status does not name the file. */
  readonly state: string;
  readonly verified: boolean;
  /** Why it is not what was ordered, or null. */
  readonly reason: string | null;
  /**
   * Whether it was compared with the file uploaded (the ledger's source, with the SHA-256 it had then): then only its
   * signature may differ. A job uploaded elsewhere, or a source that changed since, is checked for its signature only.
   */
  readonly comparedWithUpload: boolean;
}

export interface DownloadJobResult extends ExtractResult {
  /** True when every file verified and the files were written; false: nothing was written. */
  readonly written: boolean;
  readonly verdicts: readonly DownloadedFile[];
  /** What the signature record proved (the line `sign` prints). */
  readonly record: string;
}

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The bytes the ledger says were uploaded under a name, when its source still holds them. */
function uploadedBytes(file: LedgerFile | undefined): Uint8Array | undefined {
  if (!file) return undefined;
  try {
    const bytes = readFileSync(resolve(file.source));
    return sha256Of(bytes) === file.sha256 ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Downloads a finished job's result package and verifies it as `sign` does before anything is written: the job's
 * signature record (when the service keeps one; refused when it does not continue the one seen before), each
 * returned file's SHA-256 against its record entry, and each file's verdict (signed with one of `keys`, the signature
 * valid, and, when the ledger knows the upload, changed in nothing but its signature). When every file verifies the
 * package is extracted into `destination` and the ledger updated; otherwise nothing is written. Files the ledger does
 * not record for the job are overwritten only with `force`.
 * @throws UsageError no key, the job not finished; SignGateError SG_ERR_RECORD_PROOF, SG_ERR_HTTP_*
 */
export async function downloadJob(client: ServiceClient, jobId: string, destination: string, options: DownloadJobOptions): Promise<DownloadJobResult> {
  const keyPaths = options.keys?.length ? options.keys : (loadConfig(options.config).config.keys ?? []);
  if (!keyPaths.length)
    throw new UsageError(
      `jobs download verifies every returned file against the option's public key, and no key file is given`,
      `Pass --key <optionId>_public.snk (the key the files were delay-signed with), or set "keys" in ${CONFIG_FILE_NAME}.`,
    );
  const keys = keyPaths.map(loadExpectedKey);
  const expectedKey = options.recordKey === undefined ? undefined : readRecordPublicKey(options.recordKey);
  makeCacheDir();
  sweepStaleDownloads();
  const ledger = options.ledger ?? new Ledger();
  const known = ledger.find(jobId);
  const ref: JobRef = known?.links ? { id: jobId, links: known.links } : { id: jobId };
  const status = await client.status(ref, known ? { files: known.files.length } : {});
  if (!status.processingFinished)
    throw new UsageError(
      `job ${jobId} is still being processed on ${client.baseUrl}`,
      `Wait, then run 'signgate jobs download ${jobId}' again ('signgate jobs status ${jobId}' says where it is).`,
    );
  const recorded = await checkRecordProof({
    client,
    ledger,
    baseUrl: client.baseUrl,
    jobId,
    proof: status.signatureRecord,
    ...(expectedKey ? { expectedKey } : {}),
  });
  const zipPath = join(cacheDir(), downloadName());
  try {
    await client.download(ref, downloadTo(zipPath), options.progress ? { onProgress: (d, t) => options.progress!.update(d, t) } : {});
    options.progress?.stop();
    const plan = await readPackage(zipPath, resolve(destination), {
      ...(known ? { expected: new Set(known.files.map((f) => f.name)) } : {}),
      force: options.force ?? false,
      logName: SIGNING_LOG,
    });
    // The job's files: what the ledger uploaded, else what the status names and the package holds.
    const names = known
      ? known.files.map((f) => f.name)
      : [...new Map([...status.assemblies.map((a) => a.fileName), ...plan.files.map((f) => f.name)].map((n) => [windowsPathKey(n), n])).values()];
    const returnedOf = new Map(plan.files.map((f) => [windowsPathKey(f.name), f.bytes]));
    const ledgerFileOf = new Map((known?.files ?? []).map((f) => [windowsPathKey(f.name), f]));
    // The record binds each returned file; without the ledger, the uploaded SHA-256 is the record entry's own.
    bindRecordToFiles(
      recorded,
      names.map((name) => {
        const key = windowsPathKey(name);
        const entry = recorded.offered ? recorded.byFile.get(key) : undefined;
        return { uploadName: name, uploadedSha256: ledgerFileOf.get(key)?.sha256 ?? entry?.uploadedSha256 ?? '', returned: returnedOf.get(key) };
      }),
      client.baseUrl,
      jobId,
    );
    const verdicts = names.map((name): DownloadedFile => {
      const key = windowsPathKey(name);
      const state = status.assemblies.find((a) => windowsPathKey(a.fileName) === key)?.fileProcessingState ?? ClientFileState.Missing;
      const returned = returnedOf.get(key);
      const uploaded = uploadedBytes(ledgerFileOf.get(key));
      const netmodule = /\.netmodule$/i.test(name);
      // Without the upload, the returned file stands for it: its identity, key and signature are checked, not what else changed.
      const reason =
        netmodule && !uploaded
          ? returned
            ? null
            : 'the result package does not contain the file'
          : fileVerdict(state, uploaded ?? returned ?? new Uint8Array(), returned, keys, netmodule);
      return { name, state, verified: reason === null, reason, comparedWithUpload: uploaded !== undefined };
    });
    const written = verdicts.every((v) => v.verified);
    if (written) {
      await recorded.keep();
      writePackage(plan);
      if (known)
        ledger.downloaded(
          known,
          resolve(destination),
          verdicts.map((v) => {
            const returned = returnedOf.get(windowsPathKey(v.name));
            return { fileName: v.name, state: v.state, verified: v.verified, outputSha256: returned ? sha256Of(returned) : null, messages: [] };
          }),
        );
    }
    return { files: plan.files, extras: plan.extras, log: plan.log, written, verdicts, record: describeRecordCheck(recorded, jobId, client.baseUrl) };
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
