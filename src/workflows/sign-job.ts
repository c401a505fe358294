// The jobs of sign(): the plan the check's upload set makes (one job, or several when split), then each job in turn:
// uploaded (or resumed from the ledger), polled until finished, its record proof checked, its package downloaded,
// tied to the record and written, each file verified, deleted on the service when asked. Each transition is saved in
// the ledger as it happens. sign --archive polls and verifies through the same functions.
import { signedWithKey } from '../rules/sg203-already-signed.js';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { authenticodeOf, type AuthenticodeVerdict } from '../authenticode/verdict.js';
import { ServiceError, UsageError } from '../core/errors.js';
import { windowsPathKey } from '../core/windows-names.js';
import type { RecordVerifier } from '../record/checkpoint.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { describeTooLarge, proposeSplit } from '../rules/split.js';
import type { CheckInput, ExpectedKey } from '../rules/types.js';
import { ClientFileState, isFailedState, isPendingState } from '../core/file-states.js';
import type { JobRef, JobStatus, ServiceClient } from '../service-client/client.js';
import type { RetryInfo } from '../service-client/http.js';
import { readPackage, writePackage } from './extract.js';
import { SIGNING_LOG } from '../core/upload-names.js';
import { downloadTo } from './files.js';
import { displayPath } from './input-paths.js';
import { cacheDir, downloadName, sweepStaleDownloads, type Ledger, type LedgerEntry, type LedgerFile } from './ledger.js';
import { bindRecordToFiles, checkRecordProof, describeRecordCheck } from './record-proof.js';
import { fileVerdict } from './returned-file.js';

/** What sign() is asked besides the check's options: where results go, and how each job runs. */
export interface JobOptions {
  /** Where the signed files go (default ./signed; created if missing). */
  readonly destination?: string;
  /** Delete the job on the service once its results are saved locally. */
  readonly deleteAfterwards?: boolean;
  readonly comment?: string;
  /** Run the pre-flight check first and stop on errors (default true). */
  readonly check?: boolean;
  /** Upload several jobs when the files exceed the size limit or share names. */
  readonly split?: boolean;
  /** Overwrite files in the destination that the run cannot attribute to this job. */
  readonly force?: boolean;
  /** Seconds to wait for the service to finish a job (default 600). */
  readonly timeoutS?: number;
  /** First status poll interval in ms (grows by 1.5x up to 10 s; default 1000). */
  readonly pollIntervalMs?: number;
  /** The folder separator in uploaded names (default `\`, as the vendor's script sends them). */
  readonly nameSeparator?: '\\' | '/';
  /** Most bytes a result package may have (default twice the upload plus 16 MiB). */
  readonly maxDownloadBytes?: number;
  /**
   * The service's record key, expected up front: a file (the service's record-key.pub) or the key's text
   * (name+keyid+key, as `signgate serve record public-key` prints it). Every job's checkpoint must be signed by it,
   * and a job without a signature record is refused. Without it, the key is pinned on first use (job ledger).
   */
  readonly recordKey?: string;
}

export interface ProgressReporter {
  update(done: number, total: number): void;
  stop(): void;
}

/** Where sign() reports what it does; every member is optional. */
export interface SignEvents {
  /** A line for the user (stderr in the CLI). */
  readonly log?: (line: string) => void;
  /** A progress reporter for an upload or download. */
  readonly progress?: (label: string) => ProgressReporter;
  /**
   * An upload starts (job `job` of `jobs`): until `jobStarted`, the service may or may not have made the job (it does
   * once the whole upload arrived); a repeated upload carries the same Idempotency-Key.
   */
  readonly uploadStarted?: (upload: { files: number; job: number; jobs: number }) => void;
  /** A job exists on the service (uploaded now or resumed); until `jobDone`, it is kept there. */
  readonly jobStarted?: (job: { jobId: string; resumed: boolean }) => void;
  /** The job's results are saved in the destination and the ledger; only deleting it (when asked) is left. */
  readonly resultsSaved?: (job: { jobId: string; destination: string }) => void;
  readonly jobDone?: (job: { jobId: string }) => void;
  readonly retry?: (info: RetryInfo) => void;
}

export interface SignedFileResult {
  readonly path: string;
  readonly uploadName: string;
  readonly uploaded: boolean;
  readonly jobId: string | null;
  /** The service's fileProcessingState as it said it, or already-signed / not-uploaded / Missing. */
  readonly state: string;
  /** Signed with the organization's key, same identity, nothing else changed. */
  readonly verified: boolean;
  readonly reason: string | null;
  readonly output: string | null;
  readonly messages: readonly { dateTime: string | null; messageType: string; message: string }[];
  /**
   * Whether the returned file carries an Authenticode signature (it should not, unless the service adds one:
   * sign with signtool after this); null when nothing came back or the file was not uploaded.
   */
  readonly authenticode?: AuthenticodeVerdict | null;
}

export interface SignResult {
  readonly baseUrl: string;
  readonly destination: string;
  readonly ledger: string;
  readonly jobs: { jobId: string; resumed: boolean; files: number; deleted: boolean }[];
  readonly files: SignedFileResult[];
  /** Files in the result packages that were not uploaded, written apart under `from-service/` (not verified). */
  readonly extras: string[];
  /** The pre-flight check, as `check` gives it: with the service's licenses, on the files as they were uploaded. */
  readonly check: CheckResult;
  /** True when the pre-flight check stopped the run before any upload: `blocking` of its errors did. */
  stoppedByCheck: boolean;
  /** The check's errors that stop the run (0 when it went on). */
  blocking: number;
  summary: { files: number; uploaded: number; signed: number; verified: number; failed: number; notUploaded: number };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Polls a job's status with backoff until it is finished; past `timeoutS` it throws, leaving the job on the service. */
export async function pollJob(
  client: ServiceClient,
  job: JobRef,
  timeoutS: number,
  intervalMs: number,
  files?: number,
  log?: (line: string) => void,
): Promise<JobStatus> {
  const deadline = Date.now() + timeoutS * 1000;
  let wait = intervalMs;
  const told = new Set<string>();
  for (;;) {
    const last = await client.status(job, files === undefined ? {} : { files });
    if (last.processingFinished) return last;
    // What a queued file's message says while it waits (the service waits for its signing key): said once.
    for (const m of last.assemblies.flatMap((a) => (isPendingState(a.fileProcessingState) ? a.messages : []))) {
      const text = m.message.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '');
      if (log && !told.has(text)) {
        told.add(text);
        log(`job ${job.id}: the service says: ${m.message}`);
      }
    }
    if (Date.now() + wait > deadline) {
      const pending = last.assemblies.filter((a) => isPendingState(a.fileProcessingState)).length;
      throw new ServiceError(
        'SG_ERR_HTTP_TIMEOUT',
        `job ${job.id} is still being processed after ${timeoutS} s (${pending} of ${last.assemblies.length} files not final); it is kept on the service: run the same command again to resume it, or raise --timeout`,
        { method: 'GET', url: `${client.baseUrl}/assemblies/${encodeURIComponent(job.id)}/status` },
      );
    }
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(Math.round(wait * 1.5), 10_000);
  }
}

/** What the check decides: the errors that stop the run, or the groups to upload and the files that stay. */
export interface JobPlan {
  /** Errors that stop the run before any upload (0: none). */
  readonly blocking: number;
  readonly groups: CheckInput[][];
  readonly notUploaded: SignedFileResult[];
  /** Each netmodule's manifest module: it goes with it, and comes back unchanged. */
  readonly manifestOf: ReadonlyMap<string, string>;
}

/**
 * The jobs the check's upload set makes: one, or several that each fit the size limit and hold no name twice when
 * split.
 * @throws UsageError when the upload is over the limit without --split, or a single file is over it
 */
export function planJobs(check: CheckResult, inputs: readonly CheckInput[], maxUploadBytes: number, options: JobOptions): JobPlan {
  const runChecks = options.check ?? true;
  const handledBySplit = new Set(options.split ? ['upload-too-large', 'duplicate-name'] : []);
  const blocking = check.findings.filter((f) => f.severity === 'error' && !handledBySplit.has(f.rule)).length;
  const manifestOf = new Map(check.files.flatMap((f) => (f.manifest !== undefined ? [[f.path, f.manifest] as const] : [])));
  if (runChecks && blocking) return { blocking, groups: [], notUploaded: [], manifestOf };
  // In a build, a project that uses no vendor API (SG504 as a note) uploads nothing: a file of it that carries the
  // option's key goes to the service with the add-in that uses it, from the add-in's own output.
  const needsNone = runChecks && check.findings.some((f) => f.ruleId === 'SG504' && f.severity === 'note');
  const uploadPaths = new Set(needsNone ? [] : runChecks ? check.uploadSet.files : inputs.map((i) => i.path));
  const toUpload = inputs.filter((i) => uploadPaths.has(i.path));
  const notUploaded = check.files
    .filter((f) => !uploadPaths.has(f.path))
    .map((f): SignedFileResult => {
      const already = f.findings.find((x) => x.rule === 'already-signed');
      // SG203's token and option, said as the reason it is not uploaded.
      const reason = already
        ? `already signed (${already.ruleId}) ${signedWithKey(already.data)}; nothing to upload`
        : needsNone
          ? "needs no signing: this project uses no vendor API (what the add-in uses of it is signed from the add-in's output)"
          : f.reason;
      return {
        path: f.path,
        uploadName: inputs.find((i) => i.path === f.path)!.uploadName,
        uploaded: false,
        jobId: null,
        state: already ? ClientFileState.AlreadySigned : ClientFileState.NotUploaded,
        verified: false,
        reason,
        output: null,
        messages: [],
      };
    });
  const totalBytes = toUpload.reduce((n, i) => n + i.bytes.length, 0);
  if (!(totalBytes > maxUploadBytes || (options.split && check.findings.some((f) => f.rule === 'duplicate-name'))))
    return { blocking: 0, groups: toUpload.length ? [toUpload] : [], notUploaded, manifestOf };
  const plan = proposeSplit(
    toUpload.map((i) => ({
      path: i.path,
      uploadName: i.uploadName,
      size: i.bytes.length,
      ...(manifestOf.has(i.path) ? { unit: manifestOf.get(i.path)! } : {}),
    })),
    maxUploadBytes,
  );
  if (plan.tooLarge.length) {
    const { message, hint } = describeTooLarge(plan.tooLarge, maxUploadBytes);
    throw new UsageError(message, hint);
  }
  if (!options.split)
    throw new UsageError(
      `the upload is ${(totalBytes / 1e6).toFixed(1)} MB, over the limit of ${(maxUploadBytes / 1e6).toFixed(1)} MB`,
      `Pass --split to upload it in ${plan.jobs.length} jobs that each fit.`,
    );
  return { blocking: 0, groups: plan.jobs.map((job) => job.map((j) => toUpload.find((i) => i.path === j.path)!)), notUploaded, manifestOf };
}

/** What every job of a run shares. */
export interface JobRun {
  readonly client: ServiceClient;
  readonly baseUrl: string;
  readonly destination: string;
  readonly keys: readonly ExpectedKey[];
  readonly expectedKey: RecordVerifier | undefined;
  readonly ledger: Ledger;
  readonly manifests: ReadonlyMap<string, string>;
  readonly options: JobOptions;
  readonly events: SignEvents;
  readonly log: (line: string) => void;
  /** How many jobs the run has. */
  readonly jobs: number;
}

/**
 * One job: uploaded (or resumed from the ledger), polled until finished, its record proof checked, its package
 * downloaded, tied to the record and written, each file verified, and deleted on the service when asked. Each
 * transition is saved in the ledger as it happens.
 */
export async function signJob(
  run: JobRun,
  group: readonly CheckInput[],
  index: number,
): Promise<{ job: SignResult['jobs'][number]; files: SignedFileResult[]; extras: string[] }> {
  const { client, baseUrl, ledger, options, events, log } = run;
  const files: LedgerFile[] = group.map((i) => ({ name: i.uploadName, sha256: sha256(i.bytes), size: i.bytes.length, source: i.path }));
  const resumedEntry = ledger.resumable(baseUrl, files);
  if (resumedEntry) log(`resuming job ${resumedEntry.jobId} (uploaded ${resumedEntry.createdAt}); nothing is uploaded again`);
  const entry = resumedEntry ?? (await uploadJob(run, group, files, index));
  const resumed = resumedEntry !== undefined;
  events.jobStarted?.({ jobId: entry.jobId, resumed });
  const ref: JobRef = { id: entry.jobId, ...(entry.links ? { links: entry.links } : {}) };
  const status = await pollJob(client, ref, options.timeoutS ?? 600, options.pollIntervalMs ?? 1000, group.length, log);
  ledger.finished(entry);
  // The service's signature record: the job's entries in a signed checkpoint that continues the one seen before
  // (refused before the download when it does not), then tied to the bytes that came back (before they are written).
  const recorded = await checkRecordProof({
    client,
    ledger,
    baseUrl,
    jobId: entry.jobId,
    proof: status.signatureRecord,
    ...(run.expectedKey ? { expectedKey: run.expectedKey } : {}),
  });
  // The package goes to a name of our own: ids from the service never become paths. Packages a run that died
  // left behind go first.
  sweepStaleDownloads();
  const zipPath = join(cacheDir(), downloadName());
  const progress = events.progress?.('download');
  const groupBytes = group.reduce((n, i) => n + i.bytes.length, 0);
  let extracted;
  try {
    await client.download(ref, downloadTo(zipPath), {
      ...(progress ? { onProgress: (d: number, t: number) => progress.update(d, t) } : {}),
      maxBytes: options.maxDownloadBytes ?? 2 * groupBytes + 16 * 1024 * 1024,
    });
    progress?.stop();
    extracted = await readPackage(zipPath, run.destination, {
      expected: new Set(group.map((i) => i.uploadName)),
      force: options.force ?? false,
      logName: run.jobs > 1 ? `signing-log-${index + 1}.txt` : SIGNING_LOG,
    });
    const returnedOf = new Map(extracted.files.map((e) => [windowsPathKey(e.name), e.bytes]));
    bindRecordToFiles(
      recorded,
      files.map((f) => ({ uploadName: f.name, uploadedSha256: f.sha256, returned: returnedOf.get(windowsPathKey(f.name)) })),
      baseUrl,
      entry.jobId,
    );
    // The checkpoint is kept (checked again against a pin another run saved meanwhile) before anything is written.
    await recorded.keep();
    writePackage(extracted);
    log(describeRecordCheck(recorded, entry.jobId, baseUrl));
  } finally {
    progress?.stop();
    rmSync(zipPath, { force: true });
  }
  const extras = extracted.extras.map((extra) => {
    log(`the result package holds ${JSON.stringify(extra.name)}, which was not uploaded: written apart to ${displayPath(extra.path)}, not verified`);
    return displayPath(extra.path);
  });
  const results: NonNullable<LedgerEntry['results']> = [];
  const signed: SignedFileResult[] = [];
  for (const input of group) {
    const key = windowsPathKey(input.uploadName);
    const fileStatus = status.assemblies.find((a) => windowsPathKey(a.fileName) === key);
    const returned = extracted.files.find((e) => windowsPathKey(e.name) === key);
    const state = fileStatus?.fileProcessingState ?? ClientFileState.Missing;
    const reason = fileVerdict(state, input.bytes, returned?.bytes, run.keys, run.manifests.has(input.path));
    const verified = reason === null;
    const messages = [...(fileStatus?.messages ?? [])];
    results.push({ fileName: input.uploadName, state, verified, outputSha256: returned ? sha256(returned.bytes) : null, messages });
    const authenticode = returned ? authenticodeOf(returned.bytes) : null;
    signed.push({
      path: input.path,
      uploadName: input.uploadName,
      uploaded: true,
      jobId: entry.jobId,
      state,
      verified,
      reason,
      output: returned ? displayPath(returned.path) : null,
      messages,
      authenticode,
    });
  }
  ledger.downloaded(entry, run.destination, results);
  events.resultsSaved?.({ jobId: entry.jobId, destination: displayPath(run.destination) });
  // Everything of this job is saved locally now: deleting it loses nothing, whatever the verdicts.
  let deleted = false;
  if (options.deleteAfterwards) {
    await client.delete(ref);
    ledger.deleted(entry);
    deleted = true;
  }
  events.jobDone?.({ jobId: entry.jobId });
  return { job: { jobId: entry.jobId, resumed, files: group.length, deleted }, files: signed, extras };
}

/** Uploads one job's files (the same Idempotency-Key for the same files), and enters it in the ledger as uploaded. */
async function uploadJob(run: JobRun, group: readonly CheckInput[], files: LedgerFile[], index: number): Promise<LedgerEntry> {
  const { baseUrl, ledger, options, events, log } = run;
  const before = ledger.completed(baseUrl, files);
  if (before) {
    const what =
      before.state === 'failed'
        ? `were uploaded before in job ${before.jobId} (${before.createdAt}), which did not sign them all`
        : `were signed before in job ${before.jobId} (${before.createdAt})`;
    log(`these ${files.length} file(s) ${what}; uploading them again`);
  }
  events.uploadStarted?.({ files: group.length, job: index + 1, jobs: run.jobs });
  const progress = events.progress?.(`upload${run.jobs > 1 ? ` ${index + 1}/${run.jobs}` : ''}`);
  const idempotencyKey = uploadKey(baseUrl, options.comment, files, before?.jobId);
  const job = await run.client.upload(
    group.map((i) => ({ name: i.uploadName, bytes: i.bytes })),
    options.comment,
    progress ? (d, t) => progress.update(d, t) : undefined,
    { idempotencyKey },
  );
  progress?.stop();
  const entry = ledger.uploaded({ jobId: job.id, links: job.links, baseUrl, comment: options.comment ?? null, files });
  log(`uploaded ${group.length} file(s) as job ${job.id}`);
  return entry;
}

/** The result with its files in order and its summary counted. */
export function withSummary(result: SignResult): SignResult {
  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const uploaded = result.files.filter((f) => f.uploaded);
  result.summary = {
    files: result.files.length,
    uploaded: uploaded.length,
    signed: uploaded.filter((f) => f.output !== null && !isFailedState(f.state)).length,
    verified: uploaded.filter((f) => f.verified).length,
    failed: uploaded.filter((f) => !f.verified).length,
    notUploaded: result.files.length - uploaded.length,
  };
  return result;
}

/**
 * The Idempotency-Key of an upload: the same for the same files (names and contents), comment and service, so
 * that an upload repeated after its answer was lost (a network cut, the service or this run killed) gets the job
 * the first one made; a new one after a completed job of the same files (named by `after`) is a new upload.
 */
export function uploadKey(baseUrl: string, comment: string | undefined, files: readonly { name: string; sha256: string }[], after: string | undefined): string {
  const lines = ['signgate-upload/1', baseUrl, comment ?? '', after ?? '', ...files.map((f) => `${f.name}\u0000${f.sha256}`).sort()];
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}
