// Processes jobs after their upload was acknowledged, as many at once as the signer has threads: the check's
// verdict (the engine product `signgate check` runs) and one decision per file (signing-decision.ts) say what is
// signed, files to sign are signed with the matching key pair (in the service's thread or a pool of worker threads,
// see signing-pool.ts), every file gets a state and messages, and the result package holds every file plus
// signing-log.txt.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { ErrorCodes } from '../../core/error-codes.js';
import { FileState } from '../../core/file-states.js';
import { isInputFault, isSignGateError, KeyError, type SignGateError } from '../../core/errors.js';
import { SIGNING_LOG } from '../../core/upload-names.js';
import { DEFAULT_RESULT_FILE, UPLOADS_FOLDER } from '../domain/job-folder.js';
import type { TokenPinState } from '../../strongname/pkcs11/pin.js';
import { pkcs11PinState, type Pkcs11Event } from '../../strongname/pkcs11/session.js';
import { isPkcs11Key, probePkcs11Key, type Pkcs11KeyPair } from '../../strongname/pkcs11/signer.js';
import { inThisThread, runEngine } from '../../engine/index.js';
import { checkProduct } from '../../rules/check-product.js';
import { decideSigning, malformedMessages, SERVICE_SEVERITIES } from '../domain/signing-decision.js';
import type { CheckSettings } from '../../rules/types.js';
import type { PreparedZipData, ZipEntry } from '../../zip/write-zip.js';
import { writeZipFile, zipEntryOfFile } from '../zip-file.js';
import type { JobFile, JobMessage, JobRecord } from '../domain/job.js';
import type { JobProgressSink, JobStateStore } from '../ports.js';
import type { JobWorker } from './job-worker.js';
import type { License, Organization, ServerConfig } from '../server-config.js';
import { inProcessSigner, type FileSigner } from './sign-file.js';
import { keysForJob } from './key-rotation.js';
import { KeyWait, keyWaitOver, noteWaiting, optionKeyName } from './key-wait.js';
import type { SignatureEvent } from '../../record/signature-record.js';
import type { JobMemory } from './job-memory.js';

function message(messageType: JobMessage['messageType'], text: string): JobMessage {
  return { dateTime: new Date().toISOString(), messageType, message: text };
}

/** The check settings a service organization signs with: its licensed keys, the service's vendor. */
export function organizationSettings(config: ServerConfig, org: Organization): CheckSettings {
  return {
    vendor: config.vendor,
    vendorApi: config.vendorApi,
    vendorNamespace: config.vendorNamespace,
    keys: org.licenses.map((l) => ({ optionId: l.optionId, source: `option ${l.optionId}`, publicKey: l.key.publicKey, token: l.token })),
    maxUploadBytes: config.maxUploadBytes,
    root: null,
  };
}

function signingLog(record: JobRecord): string {
  const lines = [`Signing job ${record.id} for ${record.organization}${record.comment ? ` (${record.comment})` : ''}, created ${record.createdAt}`, ''];
  for (const file of record.assemblies) {
    lines.push(`${file.fileName}: ${file.fileProcessingState}`);
    for (const m of file.messages) lines.push(`  ${m.dateTime} ${m.messageType}: ${m.message}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Signs one job. `signal` is checked between steps: when it is aborted (the job is being deleted, or the
 * service stops) the job is left as it is, and nothing is written for it any more. The only file written into
 * the job's folder is the result package (through a temporary file), so a job folder that is gone stays gone.
 */
export async function processJob(
  store: JobProgressSink,
  config: ServerConfig,
  record: JobRecord,
  signal: AbortSignal = new AbortController().signal,
  /** The result package's name in the job's folder (a worker of the PostgreSQL queue names its own). */
  resultFile = DEFAULT_RESULT_FILE,
  signer: FileSigner = inProcessSigner,
  /** The uploaded files kept in memory since the upload (signed from there, not read back), and where the package is kept. */
  memory?: JobMemory,
): Promise<void> {
  try {
    await processJobSteps(store, config, record, signal, resultFile, signer, memory);
  } finally {
    memory?.forgetUploads(record.organization, record.id);
  }
}

async function processJobSteps(
  store: JobProgressSink,
  config: ServerConfig,
  record: JobRecord,
  signal: AbortSignal,
  resultFile: string,
  signer: FileSigner,
  memory: JobMemory | undefined,
): Promise<void> {
  const dir = store.jobDir(record.organization, record.id);
  const configured = config.organizations.get(record.organization);
  // Each option with the key the job was accepted with (key rotation: key-rotation.ts).
  const jobKeys = configured && keysForJob(configured, record.acceptedKeys);
  const org = jobKeys?.organization;
  const uploads = join(dir, UPLOADS_FOLDER);
  if (signal.aborted) return;
  // Its entries are in the record already (the finish was interrupted after them): finished as it is, not signed again.
  if (await store.finishRecorded?.(record)) return;
  // The package entries the signer prepared (CRC-32 and deflate in the pool's threads); a file without one is
  // read back from the uploads.
  const packed = new Map<string, PreparedZipData>();
  // The record's entries of the files signed: appended with the finished job, in the same step.
  const signatures: SignatureEvent[] = [];
  // Progress (a file's state) is shown to status calls; where the store can show it without writing it (the data
  // directory), it is not made durable: after a crash the job is processed again from here.
  const show = (r: JobRecord) => (store.progress ? store.progress(r) : store.save(r));
  for (const f of record.assemblies) {
    f.fileProcessingState = FileState.Processing;
    f.messages = [];
  }
  await show(record);
  if (!org) {
    for (const f of record.assemblies) {
      f.fileProcessingState = FileState.Error;
      f.messages.push(message('Error', `The organization ${record.organization} is no longer configured; nothing was signed.`));
    }
  } else {
    const inputs = await Promise.all(
      record.assemblies.map(async (f) => ({
        path: f.fileName,
        uploadName: f.fileName,
        bytes: memory?.takeUpload(record.organization, record.id, f.fileName) ?? (await readFile(join(uploads, f.fileName))),
        explicit: true,
      })),
    );
    // The check's verdict on every file, as `signgate check` gives it, then one decision per file (signing-decision.ts).
    const check = await runEngine(checkProduct({ settings: organizationSettings(config, org), severities: SERVICE_SEVERITIES }), inputs, inThisThread());
    const byPath = new Map(check.files.map((f) => [f.path, f]));
    // Decided up front, shown in the job file one file at a time as each is finished; up to signer.ahead files are
    // handed to the signer before the one being finished, so that every thread works. From the hand-over on, a
    // file's bytes may belong to a pool thread: nothing here reads them again.
    const decisions = record.assemblies.map((file) => {
      const decision = decideSigning(byPath.get(file.fileName)!, org, jobKeys!.retired);
      const decided: JobFile = {
        ...file,
        fileProcessingState: decision.action === 'error' ? FileState.Error : FileState.Signed,
        messages: decision.messages.map((m) => message(m.messageType, m.message)),
      };
      return { decided, signWith: decision.action === 'sign' ? decision.license : undefined };
    });
    // Each file's package entry (with the signed bytes' SHA-256): of the signed file, of the file as uploaded, or none
    // when the signature did not verify.
    const handedOver: Promise<{ entry: PreparedZipData; signedSha256?: string } | undefined>[] = [];
    const handOver = (upTo: number) => {
      for (let j = handedOver.length; j <= Math.min(upTo, decisions.length - 1); j++) {
        const signWith = decisions[j]!.signWith;
        const pending = signWith
          ? signer.sign(inputs[j]!.bytes, signWith.key).then((signed) => signed && { entry: signed.entry, signedSha256: signed.sha256 })
          : signer.pack(inputs[j]!.bytes).then((entry) => ({ entry }));
        pending.catch(() => {}); // awaited below unless the job stops first
        handedOver.push(pending);
      }
    };
    for (const [i, file] of record.assemblies.entries()) {
      if (signal.aborted) return; // deleted, or left unfinished and resumed after the restart
      handOver(i + signer.ahead);
      const { decided } = decisions[i]!;
      file.fileProcessingState = decided.fileProcessingState;
      file.messages = decided.messages;
      let done: { entry: PreparedZipData; signedSha256?: string } | undefined;
      try {
        done = await handedOver[i]!;
      } catch (error) {
        // The file's own fault met while signing it (isInputFault): that file ends Error, the job goes on.
        if (isInputFault(error)) malformed(file, error);
        else if (!tokenUnavailable(error)) throw error;
        else if (!keyWaitOver(record, config.keyWaitSeconds)) {
          // The key cannot be used now: the job waits for it (the worker puts it back in the queue), it is not failed.
          const license = decisions[i]!.signWith!;
          throw new KeyWait([{ name: optionKeyName(record.organization, license.optionId), license, error }]);
        } else {
          file.fileProcessingState = FileState.Error;
          file.messages = [message('Error', keyUnavailableText(decisions[i]!.signWith!, error, config.keyWaitSeconds))];
        }
      }
      if (signal.aborted) return;
      const signWith = decisions[i]!.signWith;
      if (done) {
        packed.set(file.fileName, done.entry);
        if (signWith && done.signedSha256) signatures.push(signatureEvent(record, file, signWith, done.signedSha256));
      } else if (file.fileProcessingState !== FileState.Error) {
        file.fileProcessingState = FileState.Error;
        file.messages = [
          message(
            'Error',
            signWith && isPkcs11Key(signWith.key)
              ? `Not signed: the signature made with option ${signWith.optionId}'s key in a PKCS#11 token does not verify with the option's public key (the token's key is not the one the service is configured with). The service's operator must fix the configuration (its /readyz says so); upload the files again afterwards.`
              : 'Internal error: the signature did not verify; the file was not signed.',
          ),
        ];
      }
      if (signal.aborted) return;
      await show(record);
      await new Promise((resolve) => setImmediate(resolve)); // let requests in between files
    }
  }
  // Where the record's entries and the finished state are written in two steps (the data directory), every file's
  // final state is on disk before the entries: a job finished from its entries after a crash (finishRecorded) shows them.
  if (store.progress && store.finishRecorded && signatures.length) {
    if (signal.aborted) return;
    await store.save(record);
  }
  const entries: ZipEntry[] = [];
  for (const f of record.assemblies) {
    const prepared = packed.get(f.fileName);
    entries.push(prepared ? { name: f.fileName, source: { prepared } } : zipEntryOfFile(f.fileName, join(uploads, f.fileName)));
  }
  record.processingFinished = true;
  delete record.keyWait;
  entries.push({ name: SIGNING_LOG, source: { bytes: new TextEncoder().encode(signingLog(record)) } });
  if (resultFile !== DEFAULT_RESULT_FILE) record.resultFile = resultFile;
  if (signal.aborted) return;
  const written: Uint8Array[] | undefined = memory ? [] : undefined;
  await writeZipFile(join(dir, resultFile), entries, written);
  if (signal.aborted) return;
  await store.save(record, signatures);
  if (written) memory!.keepPackage(record.organization, record.id, resultFile, written);
}

/** The signature record's entry for a file signed with `license`'s key (without its place in the chain). */
function signatureEvent(record: JobRecord, file: JobFile, license: License, signedSha256: string): SignatureEvent {
  return {
    time: new Date().toISOString(),
    organization: record.organization,
    user: record.submittedBy?.user ?? '(not recorded)',
    tokenId: record.submittedBy?.tokenId ?? null,
    job: record.id,
    file: file.fileName,
    uploadedSha256: file.sha256,
    signedSha256,
    optionId: license.optionId,
    keyToken: license.token,
    keyLocation: license.keyLocation,
  };
}

/**
 * Finishes a job the service gave up on: every file an error with `text`, the package of the files as uploaded
 * and the signing log, then the record. Throws when that cannot be written either (the caller tries later).
 */
export async function finishUnsigned(store: JobProgressSink, record: JobRecord, text: string, resultFile = DEFAULT_RESULT_FILE): Promise<void> {
  const dir = store.jobDir(record.organization, record.id);
  for (const f of record.assemblies) {
    f.fileProcessingState = FileState.Error;
    f.messages = [message('Error', `Not signed: ${text}`), message('Info', 'The package holds the file as uploaded.')];
  }
  record.processingFinished = true;
  const entries: ZipEntry[] = record.assemblies.map((f) => zipEntryOfFile(f.fileName, join(dir, UPLOADS_FOLDER, f.fileName)));
  entries.push({ name: SIGNING_LOG, source: { bytes: new TextEncoder().encode(signingLog(record)) } });
  await writeZipFile(join(dir, resultFile), entries);
  if (resultFile === DEFAULT_RESULT_FILE) delete record.resultFile;
  else record.resultFile = resultFile;
  await store.save(record);
}

/** Ends a file as Error with SG001 and its own fault, as `check` says it. */
function malformed(file: JobFile, error: SignGateError): void {
  file.fileProcessingState = FileState.Error;
  file.messages = malformedMessages(error).map((m) => message(m.messageType, m.message));
}

/** An error of a key in a PKCS#11 token (module, token, PIN, key or signing), which fails the file, not the job. */
function tokenUnavailable(error: unknown): error is SignGateError {
  return isSignGateError(error) && error.code.startsWith('SG_ERR_PKCS11_');
}

/**
 * What a client is told when the option's key in a token cannot sign: what kind of failure (the code and its
 * meaning), never the service's paths, token names or anything of the PIN; the operator sees the whole message in
 * /readyz's log line.
 */
function keyUnavailableText(license: License, error: SignGateError, waitedS: number): string {
  const waited = waitedS >= 120 ? `${Math.round(waitedS / 60)} minutes` : `${waitedS} s`;
  return `Not signed: the signing key of option ${license.optionId} (in a PKCS#11 token) is not available after ${waited} of waiting (limits.keyWaitSeconds): ${ErrorCodes[error.code]} (${error.code}). The service's operator must fix the token; upload the files again afterwards.`;
}

/** The state of an option's key in a PKCS#11 token, as /readyz shows it (no token names, paths or PINs). */
export interface TokenKeyReadiness {
  readonly organization: string;
  readonly optionId: number;
  /** A key the option had before (previousKeys), which jobs accepted before the rotation still sign with. */
  readonly previous?: boolean;
  /** The token's user PIN counters, read without logging in; absent when the token cannot be reached. */
  readonly pin?: TokenPinState;
  /** True when the key signed a probe digest that verified with the option's configured public key. */
  readonly ready: boolean;
  /** Why not, when not: the error code (docs/errors.md). */
  readonly code?: string;
}

/** A readiness failure with the state of every key, for /readyz's answer. */
export class TokenKeysNotReady extends KeyError {
  constructor(
    code: SignGateError['code'],
    message: string,
    readonly details: { readonly tokenKeys: readonly TokenKeyReadiness[] },
  ) {
    super(code, message);
  }
}

/**
 * Proves every key in a PKCS#11 token of the configuration: its token's PIN counters are read (without logging in),
 * then the key signs a random digest in the module's owner (this thread) and the signature is verified with the
 * option's configured public key, each within `timeoutMs` (a module that does not answer makes the node not ready
 * rather than the probe hang). A key whose token went away and came back is found again on the way.
 * @throws TokenKeysNotReady (SG_ERR_PKCS11_*) naming every option whose key cannot sign, with every key's state
 */
export async function probeTokenKeys(config: ServerConfig, timeoutMs = 5_000): Promise<readonly TokenKeyReadiness[]> {
  const states: TokenKeyReadiness[] = [];
  const failures: { code: SignGateError['code']; message: string }[] = [];
  for (const org of config.organizations.values()) {
    // Each option's key, and the keys it had before (previousKeys): jobs accepted before a rotation still need them.
    const keys = org.licenses.flatMap((license) => [
      { license, key: license.key, previous: false },
      ...license.previous.map((p) => ({ license, key: p.key, previous: true })),
    ]);
    for (const { license, key, previous } of keys) {
      if (!isPkcs11Key(key)) continue;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new KeyError('SG_ERR_PKCS11_TOKEN', `the PKCS#11 key did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      });
      // The PIN counters after the probe: a token put back is found by then.
      const pin = () => {
        const state = pkcs11PinState((key as Pkcs11KeyPair).pkcs11);
        return state ? { pin: state } : {};
      };
      const which = { organization: org.id, optionId: license.optionId, ...(previous ? { previous: true } : {}) };
      try {
        await Promise.race([probePkcs11Key(key.pkcs11, key.publicKey), timeout]);
        states.push({ ...which, ...pin(), ready: true });
      } catch (error) {
        const code = isSignGateError(error) ? error.code : 'SG_ERR_PKCS11_TOKEN';
        states.push({ ...which, ...pin(), ready: false, code });
        failures.push({ code, message: `${previous ? 'a previous key of ' : ''}option ${license.optionId} of ${org.id}: ${(error as Error).message}` });
      } finally {
        clearTimeout(timer);
      }
    }
  }
  if (failures.length) throw new TokenKeysNotReady(failures[0]!.code, failures.map((f) => f.message).join('; '), { tokenKeys: states });
  return states;
}

/** Writes what the owner of the PKCS#11 modules did to the service's log (the PIN never is in an event). */
export function logPkcs11Event(log: FastifyBaseLogger, event: Pkcs11Event): void {
  switch (event.kind) {
    case 'pin-state': {
      const level = event.state === 'ok' ? 'info' : event.state === 'count-low' ? 'warn' : 'error';
      log[level](
        { pkcs11: event.uri, token: event.token, pin: event.state },
        event.state === 'ok'
          ? 'logging in to the PKCS#11 token'
          : event.state === 'count-low'
            ? 'the PKCS#11 token counted a wrong PIN: logging in with the configured PIN once'
            : `the PKCS#11 token's user PIN is ${event.state === 'locked' ? 'locked' : 'on its final try'}: not logging in`,
      );
      return;
    }
    case 'retry':
      log.warn({ pkcs11: event.uri, code: event.code, attempt: event.attempt }, 'PKCS#11 operation failed; trying again with a fresh session');
      return;
    case 'reinitialized':
      log.warn({ module: event.module }, 'PKCS#11 module initialized again (a token went away or the module lost its state)');
      return;
    case 'failed':
      log.error({ pkcs11: event.uri, code: event.code, err: { message: event.message } }, `PKCS#11 operation failed: ${event.code}`);
  }
}

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

/** What a worker tells of each job it finishes: the service's metrics count them. */
export interface JobObserver {
  /**
   * A job this process finished, every file in its final state; `seconds` it took from the start of its processing
   * (absent for a job given up on after its attempts).
   */
  jobFinished(record: JobRecord, seconds?: number): void;
}

/** How many of a finished job's files came back signed (or unchanged as part of a signed assembly), and how many failed. */
export function fileCounts(record: JobRecord): { signed: number; failed: number } {
  const signed = record.assemblies.filter((f) => f.fileProcessingState === FileState.Signed).length;
  return { signed, failed: record.assemblies.filter((f) => f.fileProcessingState === FileState.Error).length };
}

/**
 * Logs a job this process processed, with its counts: at warn when no file of it was signed (an operator filters
 * on that), else at info; and tells the observer. `startedMs`: performance.now() when its processing started.
 */
export function reportJobProcessed(
  log: FastifyBaseLogger,
  observer: JobObserver | undefined,
  record: JobRecord,
  startedMs: number,
  fields: Record<string, unknown> = {},
): void {
  const { signed, failed } = fileCounts(record);
  const level = signed === 0 && failed > 0 ? 'warn' : 'info';
  log[level]({ job: record.id, organization: record.organization, files: record.assemblies.length, signed, failed, ...fields }, 'job processed');
  observer?.jobFinished(record, (performance.now() - startedMs) / 1000);
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
      await finishUnsigned(this.store, record, `${failureText(error)} (${attempt} attempts); nothing in this job was signed: upload the files again.`);
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
        await processJob(this.store, this.config(), record, controller.signal, DEFAULT_RESULT_FILE, this.signer, this.memory);
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
