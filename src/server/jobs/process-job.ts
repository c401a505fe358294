// What happens to one job: the check's verdict (the engine product `signgate check` runs) and one decision per file
// (domain/signing-decision.ts) say what is signed, files to sign are signed with the matching key pair (in the
// service's thread or a pool of worker threads, see signing-pool.ts), every file gets a state and messages, and the
// result package holds every file plus signing-log.txt; a job that cannot be processed is finished unsigned. Both
// workers (signing-worker.ts in process, queue-worker.ts on a shared queue) run it.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { ErrorCodes } from '../../core/error-codes.js';
import { FileState } from '../../core/file-states.js';
import { isInputFault, isSignGateError, type SignGateError } from '../../core/errors.js';
import { SIGNING_LOG } from '../../core/upload-names.js';
import { DEFAULT_RESULT_FILE, UPLOADS_FOLDER } from '../domain/job-folder.js';
import { isPkcs11Key } from '../../strongname/pkcs11/signer.js';
import { inThisThread, runEngine } from '../../engine/index.js';
import { checkProduct } from '../../rules/check-product.js';
import { decideSigning, malformedMessages, SERVICE_SEVERITIES } from '../domain/signing-decision.js';
import type { CheckSettings } from '../../rules/types.js';
import type { PreparedZipData, ZipEntry } from '../../zip/write-zip.js';
import { writeZipFile, zipEntryOfFile } from '../zip-file.js';
import type { JobFile, JobMessage, JobRecord } from '../domain/job.js';
import type { JobProgressSink, JobStateStore } from '../ports.js';
import type { License, Organization, ServerConfig } from '../server-config.js';
import { inProcessSigner, type FileSigner } from './sign-file.js';
import { keysForJob } from './key-rotation.js';
import { KeyWait, keyWaitOver, optionKeyName } from './key-wait.js';
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

/** What processJob works in for a job of a store whose worker holds the queue (the data directory): the job's own folder. */
export function sinkOf(store: JobStateStore, record: JobRecord): JobProgressSink {
  return {
    folder: store.files.folder(record.organization, record.id),
    save: (r, signatures) => store.save(r, signatures),
    ...(store.progress && { progress: (r: JobRecord) => store.progress!(r) }),
    ...(store.finishRecorded && { finishRecorded: (r: JobRecord) => store.finishRecorded!(r) }),
  };
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
  const dir = store.folder;
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
  const dir = store.folder;
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
