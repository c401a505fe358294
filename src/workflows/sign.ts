// sign(): check -> licenses -> upload -> poll -> download -> extract -> verify -> (delete), as a library
// function. Never loses a result: the local ledger lets an interrupted run resume the same job, and the job is
// deleted (when asked) only once everything is saved locally.
import { authenticodeOf, type AuthenticodeVerdict } from '../authenticode/verdict.js';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { ServiceError, UsageError } from '../core/errors.js';
import { formatVersion } from '../metadata/module-metadata.js';
import type { CheckResult } from '../rules/runner.js';
import { describeTooLarge, proposeSplit } from '../rules/split.js';
import type { CheckInput, ExpectedKey } from '../rules/types.js';
import { createServiceClient, FAILED_STATES, PENDING_STATES, type JobRef, type JobStatus, type ServiceClient } from '../service-client/client.js';
import type { RetryInfo } from '../service-client/http.js';
import { readModule } from '../strongname/assembly-info.js';
import { compareIgnoringSignature, verifyStrongName } from '../strongname/strong-name.js';
import { readPackage, SERVICE_LOG_NAME, writePackage } from './extract.js';
import { displayPath, downloadTo, noAssembliesError } from './files.js';
import { bindRecordToFiles, checkRecordProof, describeRecordCheck } from './record-proof.js';
import { cacheDir, downloadName, Ledger, ledgerPath, makeCacheDir, sweepStaleDownloads, type LedgerEntry, type LedgerFile } from './ledger.js';
import { onlineLicenses } from './licenses.js';
import { readRecordPublicKey } from './keys.js';
import { runPipeline, type CheckOptions } from './pipeline/index.js';
import { windowsPathKey } from '../core/windows-names.js';

export interface SignOptions extends CheckOptions {
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
  /** The pre-flight check stopped the run: nothing was uploaded. */
  readonly checkFailed?: (check: CheckResult, errors: number) => void;
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
  /** True when the pre-flight check stopped the run before any upload. */
  stoppedByCheck: boolean;
  summary: { files: number; uploaded: number; signed: number; verified: number; failed: number; notUploaded: number };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Why a returned file is not what was ordered, or null when it is signed correctly and changed in nothing else. */
export function checkReturnedFile(uploaded: Uint8Array, returned: Uint8Array, keys: readonly ExpectedKey[]): string | null {
  let before;
  let after;
  try {
    before = readModule(uploaded);
    after = readModule(returned);
  } catch (error) {
    return `the returned file cannot be read: ${(error as Error).message}`;
  }
  const a = before.assembly;
  const b = after.assembly;
  if (!a || !b) return 'the returned file has no assembly manifest';
  if (a.name !== b.name || formatVersion(a.version) !== formatVersion(b.version) || a.culture !== b.culture || Buffer.compare(Buffer.from(a.publicKey), Buffer.from(b.publicKey)) !== 0) {
    return `the identity changed: ${a.name} ${formatVersion(a.version)} became ${b.name} ${formatVersion(b.version)}`;
  }
  const key = keys.find((k) => Buffer.compare(Buffer.from(k.publicKey.blob), Buffer.from(b.publicKey)) === 0);
  if (!key) return "the returned file is not signed with one of the organization's keys";
  const verification = verifyStrongName(after, { expectedKey: key.publicKey });
  if (!verification.valid) return `the signature does not verify: ${verification.reason}`;
  const diff = compareIgnoringSignature(before, returned);
  if (!diff.onlySignatureDiffers) return `the returned file differs in more than its signature, flag and checksum (first at ${diff.firstDifference?.where})`;
  return null;
}

/**
 * A file's verdict: from what came back, not from the state's name; a failed state is believed, an unknown one shown.
 * A netmodule (`netmodule`) is not signed: it must come back byte for byte, or its manifest's File-table hash breaks.
 */
export function fileVerdict(state: string, uploaded: Uint8Array, returned: Uint8Array | undefined, keys: readonly ExpectedKey[], netmodule = false): string | null {
  if (FAILED_STATES.has(state.toLowerCase())) return `the service reports ${state}`;
  if (!returned) return 'the result package does not contain the file';
  const reason = netmodule
    ? Buffer.compare(Buffer.from(uploaded), Buffer.from(returned)) === 0
      ? null
      : "the netmodule came back changed; the hash its assembly's File table records no longer matches"
    : checkReturnedFile(uploaded, returned, keys);
  return reason === null ? null : state === 'Missing' ? `the service did not report the file, and ${reason}` : reason;
}

/** Polls a job's status with backoff until it is finished; past `timeoutS` it throws, leaving the job on the service. */
export async function pollJob(client: ServiceClient, job: JobRef, timeoutS: number, intervalMs: number, files?: number, log?: (line: string) => void): Promise<JobStatus> {
  const deadline = Date.now() + timeoutS * 1000;
  let wait = intervalMs;
  const told = new Set<string>();
  for (;;) {
    const last = await client.status(job, files === undefined ? {} : { files });
    if (last.processingFinished) return last;
    // What a queued file's message says while it waits (the service waits for its signing key): said once.
    for (const m of last.assemblies.flatMap((a) => (PENDING_STATES.has(a.fileProcessingState.toLowerCase()) ? a.messages : []))) {
      const text = m.message.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '');
      if (log && !told.has(text)) {
        told.add(text);
        log(`job ${job.id}: the service says: ${m.message}`);
      }
    }
    if (Date.now() + wait > deadline) {
      const pending = last.assemblies.filter((a) => PENDING_STATES.has(a.fileProcessingState.toLowerCase())).length;
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

/**
 * The whole signing round trip.
 * @example
 * const result = await sign({ paths: ['bin/Release'], root: 'bin/Release', keys: ['12345_public.snk'], vendor: 'Contoso',
 *   baseUrl: 'https://signing.example.com/assembly-signing/v1.0', accessTokenFile: 'token.txt', destination: 'signed' });
 * if (result.summary.failed > 0) process.exitCode = 1;
 * @throws UsageError for bad options; ServiceError SG_ERR_HTTP_*; SignGateError for an unsafe result package
 */
export async function sign(options: SignOptions, events: SignEvents = {}): Promise<SignResult> {
  const log = events.log ?? (() => {});
  // A record key given up front is read before anything else: a wrong one stops the run before any upload.
  const expectedKey = options.recordKey === undefined ? undefined : readRecordPublicKey(options.recordKey);
  const destination = resolve(options.destination ?? 'signed');
  // The destination is often inside the build output (bin/Release/signed): earlier results there are not inputs.
  const inDestination = (p: string) => {
    const rel = relative(destination, resolve(p));
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  // 1. Pre-flight check with the licenses: the pipeline's check results over the inputs held in memory (what is
  // uploaded is what was checked).
  let service: { readonly client: ServiceClient; readonly baseUrl: string; readonly inputs: CheckInput[] } | undefined;
  const { read: prepared, result: check } = await runPipeline(
    { options },
    {
      produce: 'check-results',
      reading: 'held',
      prepare: async ({ notes, baseUrl, token, settings, severities, inputs: read, paths }) => {
        for (const note of notes) log(`note: ${note}`);
        if (read.length === 0) throw noAssembliesError(paths);
        const inputs = read.filter((i) => !inDestination(i.path));
        if (inputs.length === 0) throw new UsageError('no files to sign outside the destination folder', 'Point signgate at the build output, and --destination-path somewhere else or below it.');
        if (!baseUrl || !token) throw new UsageError('sign needs the service address and an access token', 'Pass --base-url (or "baseUrl" in signgate.config.json) and --access-token-file, or set SIGNGATE_BASE_URL and SIGNGATE_ACCESS_TOKEN.');
        const client = createServiceClient({ baseUrl, accessToken: token, ...(options.nameSeparator ? { nameSeparator: options.nameSeparator } : {}), ...(events.retry ? { onRetry: events.retry } : {}) });
        const licenses = onlineLicenses(await client.licenseEntries(), settings.keys);
        for (const note of licenses.notes) log(`note: ${note}`);
        service = { client, baseUrl, inputs };
        return { inputs, settings: { ...settings, ...licenses.settings }, severities };
      },
    },
  );
  const { client, baseUrl, inputs } = service!;
  const { settings } = prepared;
  const runChecks = options.check ?? true;
  const handledBySplit = new Set(options.split ? ['upload-too-large', 'duplicate-name'] : []);
  const blocking = check.findings.filter((f) => f.severity === 'error' && !handledBySplit.has(f.rule));
  const result: SignResult = { baseUrl, destination: displayPath(destination), ledger: ledgerPath(), jobs: [], files: [], extras: [], stoppedByCheck: false, summary: { files: inputs.length, uploaded: 0, signed: 0, verified: 0, failed: 0, notUploaded: 0 } };
  if (runChecks && blocking.length) {
    events.checkFailed?.(check, blocking.length);
    result.stoppedByCheck = true;
    return result;
  }
  const uploadPaths = new Set(runChecks ? check.uploadSet.files : inputs.map((i) => i.path));
  const toUpload = inputs.filter((i) => uploadPaths.has(i.path));
  // Netmodules go with their manifest: in its job, and back unchanged.
  const manifestOf = new Map(check.files.flatMap((f) => (f.manifest !== undefined ? [[f.path, f.manifest] as const] : [])));
  for (const f of check.files.filter((f) => !uploadPaths.has(f.path))) {
    const already = f.findings.find((x) => x.rule === 'already-signed');
    // "already signed with key token … (option …)" from SG203, said as the reason it is not uploaded.
    const reason = already ? `already signed (${already.ruleId}) ${already.message.replace(/^already signed\s*/, '')}; nothing to upload`.replace(/\s+;/, ';') : f.reason;
    result.files.push({ path: f.path, uploadName: inputs.find((i) => i.path === f.path)!.uploadName, uploaded: false, jobId: null, state: already ? 'already-signed' : 'not-uploaded', verified: false, reason, output: null, messages: [] });
  }

  // 2. One job, or several when split.
  const totalBytes = toUpload.reduce((n, i) => n + i.bytes.length, 0);
  let groups: CheckInput[][] = toUpload.length ? [toUpload] : [];
  if (totalBytes > settings.maxUploadBytes || (options.split && check.findings.some((f) => f.rule === 'duplicate-name'))) {
    const plan = proposeSplit(
      toUpload.map((i) => ({ path: i.path, uploadName: i.uploadName, size: i.bytes.length, ...(manifestOf.has(i.path) ? { unit: manifestOf.get(i.path)! } : {}) })),
      settings.maxUploadBytes,
    );
    if (plan.tooLarge.length) {
      const { message, hint } = describeTooLarge(plan.tooLarge, settings.maxUploadBytes);
      throw new UsageError(message, hint);
    }
    if (!options.split) throw new UsageError(`the upload is ${(totalBytes / 1e6).toFixed(1)} MB, over the limit of ${(settings.maxUploadBytes / 1e6).toFixed(1)} MB`, `Pass --split to upload it in ${plan.jobs.length} jobs that each fit.`);
    groups = plan.jobs.map((job) => job.map((j) => toUpload.find((i) => i.path === j.path)!));
  }

  const ledger = new Ledger();
  makeCacheDir();
  for (const [index, group] of groups.entries()) {
    const files: LedgerFile[] = group.map((i) => ({ name: i.uploadName, sha256: sha256(i.bytes), size: i.bytes.length, source: i.path }));
    let entry: LedgerEntry | undefined = ledger.resumable(baseUrl, files);
    const resumed = entry !== undefined;
    if (entry) log(`resuming job ${entry.jobId} (uploaded ${entry.createdAt}); nothing is uploaded again`);
    else {
      const before = ledger.completed(baseUrl, files);
      if (before) {
        const what = before.state === 'failed' ? `were uploaded before in job ${before.jobId} (${before.createdAt}), which did not sign them all` : `were signed before in job ${before.jobId} (${before.createdAt})`;
        log(`these ${files.length} file(s) ${what}; uploading them again`);
      }
      events.uploadStarted?.({ files: group.length, job: index + 1, jobs: groups.length });
      const progress = events.progress?.(`upload${groups.length > 1 ? ` ${index + 1}/${groups.length}` : ''}`);
      const idempotencyKey = uploadKey(baseUrl, options.comment, files, before?.jobId);
      const job = await client.upload(group.map((i) => ({ name: i.uploadName, bytes: i.bytes })), options.comment, progress ? (d, t) => progress.update(d, t) : undefined, { idempotencyKey });
      progress?.stop();
      const now = new Date().toISOString();
      entry = { jobId: job.id, links: job.links, baseUrl, comment: options.comment ?? null, createdAt: now, updatedAt: now, state: 'uploaded', files };
      ledger.upsert(entry);
      log(`uploaded ${group.length} file(s) as job ${job.id}`);
    }
    events.jobStarted?.({ jobId: entry.jobId, resumed });
    const ref: JobRef = { id: entry.jobId, ...(entry.links ? { links: entry.links } : {}) };
    const status = await pollJob(client, ref, options.timeoutS ?? 600, options.pollIntervalMs ?? 1000, group.length, log);
    entry.state = 'finished';
    ledger.upsert(entry);
    // The service's signature record: the job's entries in a signed checkpoint that continues the one seen before
    // (refused before the download when it does not), then tied to the bytes that came back (before they are written).
    const recorded = await checkRecordProof({ client, ledger, baseUrl, jobId: entry.jobId, proof: status.signatureRecord, ...(expectedKey ? { expectedKey } : {}) });
    // The package goes to a name of our own: ids from the service never become paths. Packages a run that died
    // left behind go first.
    sweepStaleDownloads();
    const zipPath = join(cacheDir(), downloadName());
    const progress = events.progress?.('download');
    const groupBytes = group.reduce((n, i) => n + i.bytes.length, 0);
    let extracted;
    try {
      await client.download(ref, downloadTo(zipPath), { ...(progress ? { onProgress: (d: number, t: number) => progress.update(d, t) } : {}), maxBytes: options.maxDownloadBytes ?? 2 * groupBytes + 16 * 1024 * 1024 });
      progress?.stop();
      extracted = await readPackage(zipPath, destination, {
        expected: new Set(group.map((i) => i.uploadName)),
        force: options.force ?? false,
        logName: groups.length > 1 ? `signing-log-${index + 1}.txt` : SERVICE_LOG_NAME,
      });
      const returnedOf = new Map(extracted.files.map((e) => [windowsPathKey(e.name), e.bytes]));
      bindRecordToFiles(recorded, files.map((f) => ({ uploadName: f.name, uploadedSha256: f.sha256, returned: returnedOf.get(windowsPathKey(f.name)) })), baseUrl, entry.jobId);
      writePackage(extracted);
      if (recorded.offered) recorded.keep();
      log(describeRecordCheck(recorded, entry.jobId, baseUrl));
    } finally {
      progress?.stop();
      rmSync(zipPath, { force: true });
    }
    entry.state = 'downloaded';
    entry.destination = destination;
    for (const extra of extracted.extras) {
      result.extras.push(displayPath(extra.path));
      log(`the result package holds ${JSON.stringify(extra.name)}, which was not uploaded: written apart to ${displayPath(extra.path)}, not verified`);
    }
    const results: NonNullable<LedgerEntry['results']> = [];
    for (const input of group) {
      const key = windowsPathKey(input.uploadName);
      const fileStatus = status.assemblies.find((a) => windowsPathKey(a.fileName) === key);
      const returned = extracted.files.find((e) => windowsPathKey(e.name) === key);
      const state = fileStatus?.fileProcessingState ?? 'Missing';
      const reason = fileVerdict(state, input.bytes, returned?.bytes, settings.keys, manifestOf.has(input.path));
      const verified = reason === null;
      const messages = [...(fileStatus?.messages ?? [])];
      results.push({ fileName: input.uploadName, state, verified, outputSha256: returned ? sha256(returned.bytes) : null, messages });
      const authenticode = returned ? authenticodeOf(returned.bytes) : null;
      result.files.push({ path: input.path, uploadName: input.uploadName, uploaded: true, jobId: entry.jobId, state, verified, reason, output: returned ? displayPath(returned.path) : null, messages, authenticode });
    }
    entry.results = results;
    entry.state = results.every((r) => r.verified) ? 'verified' : 'failed';
    ledger.upsert(entry);
    events.resultsSaved?.({ jobId: entry.jobId, destination: displayPath(destination) });
    // Everything of this job is saved locally now: deleting it loses nothing, whatever the verdicts.
    let deleted = false;
    if (options.deleteAfterwards) {
      await client.delete(ref);
      entry.state = 'deleted';
      ledger.upsert(entry);
      deleted = true;
    }
    events.jobDone?.({ jobId: entry.jobId });
    result.jobs.push({ jobId: entry.jobId, resumed, files: group.length, deleted });
  }

  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const uploaded = result.files.filter((f) => f.uploaded);
  result.summary = {
    files: result.files.length,
    uploaded: uploaded.length,
    signed: uploaded.filter((f) => f.output !== null && !FAILED_STATES.has(f.state.toLowerCase())).length,
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
