// What an audit reads besides the release: the jobs of the local ledger, the manifest, the previous release's report
// and the service's signature record (its chain, and that it continues a checkpoint saved earlier), each read and
// checked before the engine runs.
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';
import type { AuditJob, AuditJobSource, AuditOptions as AuditEngineOptions, AuditReport, AuditSignature } from '../audit/model.js';
import { readInput, type EngineInput } from '../engine/index.js';
import { parseCheckpoint } from '../record/checkpoint.js';
import { CheckpointContinuation } from '../record/record-continuation.js';
import { recordFileLines, verifyRecordFileLines, type SignatureEntry } from '../record/signature-record.js';
import type { CheckSettings } from '../rules/types.js';
import { readError } from './files.js';
import { readRecordPublicKey } from './keys.js';
import { Ledger, ledgerPath } from './ledger.js';

/** The options of an audit that name what it reads besides the release. */
export interface AuditRecordOptions {
  /** The previous release's audit JSON: adds what changed. */
  readonly compare?: string | undefined;
  /** Files the release must contain: one relative path per line, or a JSON array. */
  readonly manifest?: string | undefined;
  /** The job ledger to take signing jobs from (default: the user's). */
  readonly ledger?: Ledger | undefined;
  /** The signing service's record. */
  readonly record?: string | undefined;
}

/** A checkpoint of the record saved earlier, and the record key that signs it (see savedCheckpoint in audit.ts). */
export interface SavedCheckpoint {
  readonly checkpoint: string;
  readonly key: string;
}

/** A manifest: one relative path per line (blank lines and # comments ignored), or a JSON array of paths. */
export function parseManifest(text: string): string[] {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (trimmed.startsWith('[')) {
    const list = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw new UsageError('the manifest JSON must be an array of paths');
    return list;
  }
  return trimmed
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/**
 * Signing jobs by the SHA-256 of the files they returned signed and verified, from the local ledger. A file a
 * failed job returned as it was uploaded is not the job's work: it keeps no job.
 */
export function jobsFromLedger(ledger: Ledger): Map<string, AuditJob> {
  const map = new Map<string, AuditJob>();
  for (const entry of ledger.all()) {
    for (const r of entry.results ?? [])
      if (r.outputSha256 && r.verified) map.set(r.outputSha256, { jobId: entry.jobId, date: entry.createdAt, baseUrl: entry.baseUrl });
  }
  return map;
}

/**
 * The ledger's place without absolute paths (the report stays the same for another user or folder):
 * `$SIGNGATE_CACHE_DIR/jobs.json` when that is set, else under `~`.
 */
export function describeLedgerPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SIGNGATE_CACHE_DIR) return '$SIGNGATE_CACHE_DIR/jobs.json';
  const path = ledgerPath(env);
  const home = homedir();
  return (path.startsWith(home + sep) ? `~${sep}${relative(home, path)}` : path).split(sep).join('/');
}

/** Where the report's jobs come from, for the report to say so when the column is empty. */
export function jobSourceOf(ledger: Ledger | undefined, env: NodeJS.ProcessEnv = process.env): AuditJobSource {
  const l = ledger ?? new Ledger();
  return { ledger: ledger && ledger.path !== ledgerPath(env) ? basename(ledger.path) : describeLedgerPath(env), found: l.all().length > 0 };
}

/**
 * A file the audit reads whole besides the release (a checkpoint, the manifest, the previous report), as text. Its
 * path is shown as the user gave it.
 * @throws SignGateError SG_ERR_IO_READ naming the file; UsageError when `what` is given and the file is empty
 */
function readAuditFile(path: string, what?: string): string {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (cause) {
    throw readError(cause, path);
  }
  if (what !== undefined && !text.trim()) throw new UsageError(`${path}: the ${what} is empty`);
  return text;
}

/**
 * An audit JSON report the user names (`--compare`, `--verify-report`), parsed; a byte-order mark allowed. The fields
 * are the caller's to check.
 * @throws SignGateError SG_ERR_IO_READ when it cannot be read; UsageError when it is empty or not JSON (`hint` says
 *   what to pass)
 */
export function readAuditJson(path: string, hint: string): AuditReport & { tool?: { version?: string } } {
  // Read first: a file that cannot be read is SG_ERR_IO_READ, not a report that does not parse.
  const text = readAuditFile(path, 'audit report').replace(/^\uFEFF/, '');
  try {
    return JSON.parse(text) as AuditReport;
  } catch (error) {
    throw new UsageError(`${path} is not an audit JSON report (${(error as Error).message})`, hint);
  }
}

/**
 * Reads a signature record exported by the service, a line at a time (never whole: see MAX_RECORD_LINE_BYTES), and
 * verifies its chain, and with `saved` that it continues the checkpoint saved earlier. Of its entries it keeps,
 * by the SHA-256 of the bytes they returned, those of `wanted` (the release's files; every entry without it), the
 * earliest where the same bytes were signed twice: the audit looks up no other. Paths are shown as the user gave them.
 * @throws UsageError naming the file and its first break when the chain does not verify, or what is wrong with the
 * checkpoint; SignGateError SG_ERR_IO_READ when a file cannot be read
 */
export function readSignatureRecord(path: string, saved?: SavedCheckpoint, wanted?: ReadonlySet<string>): NonNullable<AuditEngineOptions['record']> {
  // The checkpoint first: its size says which first entries its root covers, to hash them as they are read.
  const checkpointText = saved && readAuditFile(saved.checkpoint);
  let fd: number;
  try {
    fd = openSync(resolve(path), 'r');
  } catch (cause) {
    throw readError(cause, path);
  }
  try {
    const key = saved && readRecordPublicKey(saved.key);
    const checkpoint = saved && parseCheckpoint(checkpointText!, key!, saved.checkpoint);
    const continuation = checkpoint && new CheckpointContinuation(checkpoint);
    const bySignedSha256 = new Map<string, AuditSignature>();
    const keep = (entry: SignatureEntry) => {
      continuation?.add(entry);
      if ((wanted && !wanted.has(entry.signedSha256)) || bySignedSha256.has(entry.signedSha256)) return;
      const { prev: _prev, ...signature } = entry;
      bySignedSha256.set(entry.signedSha256, signature);
    };
    const lines = recordFileLines((into: Buffer) => readSync(fd, into, 0, into.length, null));
    const result = verifyRecordFileLines(lines, path, undefined, keep);
    if (result.break) {
      throw new UsageError(
        `${path} is not a signature record that verifies: ${result.break.message}`,
        'Pass the record as `signgate serve record export` writes it (JSON lines); `signgate serve record verify --file` checks it. A record that does not verify vouches for no file.',
      );
    }
    const problem = continuation?.problem(path, saved!.checkpoint);
    if (problem) {
      const hint =
        "The record you hold is not the one the checkpoint was signed over, continued: ask the service's operator for the record as it is, " +
        'and find out who changed it.';
      throw new UsageError(`${path} is not a continuation of the checkpoint ${saved!.checkpoint}: ${problem}`, hint);
    }
    return { source: { file: basename(path), entries: result.entries, lastSeq: result.head.seq, lastHash: result.head.hash }, bySignedSha256 };
  } catch (cause) {
    // An error of the file system while the record is read names the record.
    throw (cause as NodeJS.ErrnoException).syscall === undefined ? cause : readError(cause, path);
  } finally {
    closeSync(fd);
  }
}

/**
 * The SHA-256 of every input, as the report names each file's bytes: the entries of the signature record the audit
 * needs are those that returned one of them.
 */
export function inputHashes(inputs: readonly EngineInput[]): Set<string> {
  const hashes = new Set<string>();
  for (const input of inputs) {
    try {
      hashes.add(createHash('sha256').update(readInput(input)).digest('hex'));
    } catch {
      // A file that cannot be read now has no entry to look up: the engine reports it.
    }
  }
  return hashes;
}

/**
 * What the audit's engine runs with besides the settings: the ledger's jobs, and the previous report, manifest and
 * signature record (its chain, and that it continues the `saved` checkpoint) that the options name, each read and
 * checked.
 * @throws UsageError for a previous report that is not an audit JSON, an empty file, or a record that does not verify
 */
export function auditRecords(
  options: AuditRecordOptions,
  settings: CheckSettings,
  saved: SavedCheckpoint | undefined,
  inputs: readonly EngineInput[],
): AuditEngineOptions {
  // The files' hashes first: the record's entries kept are those of these bytes.
  const wanted = options.record ? inputHashes(inputs) : undefined;
  const previous =
    options.compare === undefined
      ? undefined
      : readAuditJson(options.compare, 'Pass the JSON written by `signgate audit --format json` for the previous release.');
  if (previous && !Array.isArray(previous.files))
    throw new UsageError(
      `${options.compare} is not an audit JSON report (no "files" list)`,
      'Pass the JSON written by `signgate audit --format json` for the previous release.',
    );
  const ledger = options.ledger ?? new Ledger();
  return {
    settings,
    jobs: jobsFromLedger(ledger),
    jobSource: jobSourceOf(ledger),
    ...(options.manifest ? { manifest: parseManifest(readAuditFile(options.manifest, 'manifest')) } : {}),
    ...(previous ? { previous } : {}),
    ...(options.record ? { record: readSignatureRecord(options.record, saved, wanted) } : {}),
  };
}
