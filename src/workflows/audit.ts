// audit(): the release report auditors ask for, as a library function: every assembly with its hash, identity,
// verified strong name, vendor attribute and signing job (from the local ledger), compared with the previous
// release when given. A consumer of the pipeline (pipeline/index.ts), which reads the release and makes the records.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, relative, resolve, sep } from 'node:path';
import { UsageError } from '../core/errors.js';
import { VERSION } from '../runtime/version.js';
import { formatAuditHtml } from '../report/audit-html.js';
import { formatAuditJson, formatAuditJsonPieces } from '../report/audit-json.js';
import { formatAuditMarkdown } from '../report/audit-markdown.js';
import { diffAuditReports } from '../audit/compare.js';
import type { AuditJob, AuditJobSource, AuditOptions as AuditEngineOptions, AuditReport, AuditSignature } from '../audit/model.js';
import { recordFileLines, verifyRecordFileLines, type SignatureEntry } from '../record/signature-record.js';
import { parseCheckpoint } from '../record/checkpoint.js';
import { CheckpointContinuation } from '../record/record-continuation.js';
import type { CheckInput, CheckSettings } from '../rules/types.js';
import { parsePublicKeyBlob } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/token.js';
import { displayPath, noAssembliesError, readerOf, readInputFile, withInputFile } from './files.js';
import { readRecordPublicKey } from './keys.js';
import { Ledger, ledgerPath } from './ledger.js';
import { DEFAULT_MAX_UPLOAD_BYTES, runPipeline, type CheckOptions } from './pipeline/index.js';

export const AuditFormats = ['html', 'markdown', 'json'] as const;
export type AuditFormat = (typeof AuditFormats)[number];

export interface AuditOptions extends Omit<CheckOptions, 'format' | 'output'> {
  /** The previous release's audit JSON: adds what changed. */
  readonly compare?: string;
  /** Files the release must contain: one relative path per line, or a JSON array. */
  readonly manifest?: string;
  /** The job ledger to take signing jobs from (default: the user's). */
  readonly ledger?: Ledger;
  /** The signing service's record (`signgate serve record export`, or the data directory's signature-record.jsonl). */
  readonly record?: string;
  /**
   * A checkpoint of the record saved earlier (a job ledger's, or `signgate serve record checkpoint`'s): `record` must
   * continue it (no rollback, truncation or rewrite). Needs `recordKey`.
   */
  readonly recordCheckpoint?: string;
  /** The record key that signs checkpoints: a file (the service's record-key.pub) or the verifier key's text. */
  readonly recordKey?: string;
}

/** The checkpoint options of an audit, checked: both or neither, and only with a record. */
function savedCheckpoint(options: Pick<AuditOptions, 'record' | 'recordCheckpoint' | 'recordKey'>): { checkpoint: string; key: string } | undefined {
  if (options.recordCheckpoint === undefined && options.recordKey === undefined) return undefined;
  if (!options.record) throw new UsageError('--checkpoint and --record-key check a signature record: pass --record too', 'Run: signgate audit release/ --record record.jsonl --checkpoint saved.checkpoint --record-key record-key.pub');
  if (options.recordCheckpoint === undefined || options.recordKey === undefined) {
    throw new UsageError(`--${options.recordCheckpoint === undefined ? 'record-key' : 'checkpoint'} needs --${options.recordCheckpoint === undefined ? 'checkpoint' : 'record-key'}`, "Pass the checkpoint you saved and the service's record public key (signgate serve record public-key) together.");
  }
  return { checkpoint: options.recordCheckpoint, key: options.recordKey };
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
    for (const r of entry.results ?? []) if (r.outputSha256 && r.verified) map.set(r.outputSha256, { jobId: entry.jobId, date: entry.createdAt, baseUrl: entry.baseUrl });
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
 * Reads a signature record exported by the service, a line at a time (never whole: see MAX_RECORD_LINE_BYTES), and
 * verifies its chain, and with `saved` that it continues the checkpoint saved earlier. Of its entries it keeps,
 * by the SHA-256 of the bytes they returned, those of `wanted` (the release's files; every entry without it), the
 * earliest where the same bytes were signed twice: the audit looks up no other.
 * @throws UsageError naming the file and its first break when the chain does not verify, or what is wrong with the
 * checkpoint
 */
export function readSignatureRecord(
  path: string,
  saved?: { readonly checkpoint: string; readonly key: string },
  wanted?: ReadonlySet<string>,
): NonNullable<AuditEngineOptions['record']> {
  const absolute = resolve(path);
  const shown = displayPath(absolute);
  // The checkpoint first: its size says which first entries its root covers, to hash them as they are read.
  const cpShown = saved && displayPath(resolve(saved.checkpoint));
  const checkpoint = saved && parseCheckpoint(readInputFile(resolve(saved.checkpoint), cpShown).toString('utf8'), readRecordPublicKey(saved.key), cpShown!);
  const continuation = checkpoint && new CheckpointContinuation(checkpoint);
  const bySignedSha256 = new Map<string, AuditSignature>();
  const keep = (entry: SignatureEntry) => {
    continuation?.add(entry);
    if ((wanted && !wanted.has(entry.signedSha256)) || bySignedSha256.has(entry.signedSha256)) return;
    const { prev: _prev, ...signature } = entry;
    bySignedSha256.set(entry.signedSha256, signature);
  };
  const result = withInputFile(absolute, shown, (fd) => verifyRecordFileLines(recordFileLines(readerOf(fd)), shown, undefined, keep));
  if (result.break) {
    throw new UsageError(`${shown} is not a signature record that verifies: ${result.break.message}`, 'Pass the record as `signgate serve record export` writes it (JSON lines); `signgate serve record verify --file` checks it. A record that does not verify vouches for no file.');
  }
  const problem = continuation?.problem(shown, cpShown!);
  if (problem) {
    const hint = "The record you hold is not the one the checkpoint was signed over, continued: ask the service's operator for the record as it is, " +
      'and find out who changed it.';
    throw new UsageError(`${shown} is not a continuation of the checkpoint ${cpShown}: ${problem}`, hint);
  }
  return { source: { file: basename(absolute), entries: result.entries, lastSeq: result.head.seq, lastHash: result.head.hash }, bySignedSha256 };
}

/**
 * The SHA-256 of every input, as the report names each file's bytes: the entries of the signature record the audit
 * needs are those that returned one of them.
 */
function inputHashes(inputs: readonly CheckInput[]): Set<string> {
  const hashes = new Set<string>();
  for (const input of inputs) {
    try {
      hashes.add(createHash('sha256').update(input.bytes).digest('hex'));
    } catch {
      // An input read on demand that cannot be read now has no entry to look up: the rounds report it.
    }
  }
  return hashes;
}

/**
 * What the audit's rounds run with besides the settings: the ledger's jobs, and the previous report, manifest and
 * signature record (its chain, and that it continues the `saved` checkpoint) that the options name, each read and
 * checked.
 * @throws UsageError for a previous report that is not an audit JSON, an empty file, or a record that does not verify
 */
function auditRoundOptions(
  options: AuditOptions,
  settings: CheckSettings,
  saved: ReturnType<typeof savedCheckpoint>,
  inputs: readonly CheckInput[],
): AuditEngineOptions {
  const read = (file: string, what: string) => {
    const text = readInputFile(resolve(file), displayPath(resolve(file))).toString('utf8').replace(/^\uFEFF/, '');
    if (!text.trim()) throw new UsageError(`${file}: the ${what} is empty`);
    return text;
  };
  let previous: AuditReport | undefined;
  if (options.compare) {
    try {
      previous = JSON.parse(read(options.compare, 'previous report')) as AuditReport;
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`${options.compare} is not an audit JSON report (${(error as Error).message})`, 'Pass the JSON written by `signgate audit --format json` for the previous release.');
    }
    if (!Array.isArray(previous?.files)) throw new UsageError(`${options.compare} is not an audit JSON report (no "files" list)`, 'Pass the JSON written by `signgate audit --format json` for the previous release.');
  }
  const ledger = options.ledger ?? new Ledger();
  return {
    settings,
    jobs: jobsFromLedger(ledger),
    jobSource: jobSourceOf(ledger),
    ...(options.manifest ? { manifest: parseManifest(read(options.manifest, 'manifest')) } : {}),
    ...(previous ? { previous } : {}),
    ...(options.record ? { record: readSignatureRecord(options.record, saved, inputHashes(inputs)) } : {}),
  };
}

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/**
 * Builds the release audit.
 * @example
 * const report = await audit({ paths: ['release'], keys: ['12345_public.snk'], vendor: 'Contoso' });
 * writeFileSync('audit.html', renderAudit(report, 'html', null));
 * @throws UsageError for bad options, a previous report that is not an audit JSON, or a bad manifest; SG_ERR_NO_INPUT
 *   when the inputs hold no assembly
 */
export async function audit(options: AuditOptions): Promise<AuditReport> {
  const paths = options.paths ?? [];
  // With one folder, names in the manifest and comparisons are relative to it.
  const single = paths.length === 1 && statSafe(paths[0]!)?.isDirectory() ? paths[0] : undefined;
  const root = options.root ?? single;
  // The checkpoint options are checked before the release is read.
  const saved = savedCheckpoint(options);
  const { result } = await runPipeline(
    { options: { ...options, ...(root ? { root } : {}) } },
    {
      produce: 'audit-records',
      prepare: ({ settings, inputs, paths: given }) => {
        // A release with no assembly is no release to vouch for: never a report of 0 files that passes.
        if (inputs.length === 0) throw noAssembliesError(given);
        return auditRoundOptions(options, settings, saved, inputs);
      },
    },
  );
  return result;
}

/** The report as HTML (one self-contained page), Markdown or JSON; `generatedAt` null leaves the time out. */
export function renderAudit(report: AuditReport, format: AuditFormat, generatedAt: string | null): string {
  return format === 'html' ? formatAuditHtml(report, generatedAt) : format === 'markdown' ? formatAuditMarkdown(report, generatedAt) : formatAuditJson(report, generatedAt);
}

/** renderAudit's text in pieces (the JSON a file or finding at a time), for writing a large report to a file. */
export function renderAuditPieces(report: AuditReport, format: AuditFormat, generatedAt: string | null): Iterable<string> {
  return format === 'json' ? formatAuditJsonPieces(report, generatedAt) : [renderAudit(report, format, generatedAt)];
}


export interface VerifyReportResult {
  /** One sentence per difference between the stored report and the folder; empty when they agree. */
  readonly differences: readonly string[];
  /** Things worth saying that are not differences (another signgate version made the report). */
  readonly notes: readonly string[];
  /** The report made now, from the stored report's inputs. */
  readonly report: AuditReport;
}

/**
 * Re-checks a stored audit JSON against a release folder: audits the folder again with the inputs the report
 * records (its vendor settings and public keys, so the key files are not needed) and names every difference
 * in the evidence: files added or missing, hashes, identities, key tokens, strong-name states and
 * verification, vendor attribute, option, outcome and findings.
 * @throws UsageError when the report is not an audit JSON of format 2 or later
 */
export async function verifyAuditReport(options: { readonly report: string; readonly paths: readonly string[]; readonly root?: string; readonly ledger?: Ledger; readonly threads?: number; readonly readAtOnceBytes?: number; readonly record?: string }): Promise<VerifyReportResult> {
  const hint = 'Pass the JSON written by `signgate audit --format json` (signgate 0.1 or later writes format 2).';
  let stored: AuditReport & { tool?: { version?: string } };
  try {
    stored = JSON.parse(readInputFile(resolve(options.report), displayPath(resolve(options.report))).toString('utf8').replace(/^\uFEFF/, '')) as typeof stored;
  } catch (error) {
    if (error instanceof SyntaxError) throw new UsageError(`${options.report} is not an audit JSON report (${error.message})`, hint);
    throw error;
  }
  if (!Array.isArray(stored?.files) || !Array.isArray(stored.settings?.keys) || !stored.settings.keys.every((k) => typeof k.publicKey === 'string')) {
    throw new UsageError(`${options.report} is not an audit JSON report that records its inputs (format ${String(stored?.formatVersion)})`, hint);
  }
  if (options.paths.length === 0) throw new UsageError('no release folder to verify the report against', 'Name the release folder: signgate audit --verify-report report.json release/');
  if (stored.signatureRecord && !options.record) {
    throw new UsageError(`${options.report} was made with the signature record ${stored.signatureRecord.file}`, `Pass that record again: signgate audit --verify-report ${options.report} <release folder> --record ${stored.signatureRecord.file}`);
  }
  const single = options.paths.length === 1 && statSafe(options.paths[0]!)?.isDirectory() ? options.paths[0] : undefined;
  const rootArg = options.root ?? single;
  const root = rootArg ? resolve(rootArg) : null;
  const s = stored.settings;
  const { result: report } = await runPipeline(
    // As the audit reads a folder: with its netmodules, which the report lists.
    { files: { paths: options.paths, root, threads: options.threads, readAtOnceBytes: options.readAtOnceBytes } },
    {
      produce: 'audit-records',
      prepare: ({ inputs }) => {
        const settings: CheckSettings = {
          vendor: s.vendor,
          vendorApi: s.vendorApi,
          vendorNamespace: s.vendorNamespace,
          // The token is computed again from the key, so a report whose token and key disagree shows a difference.
          keys: s.keys.map((k) => {
            const publicKey = parsePublicKeyBlob(Buffer.from(k.publicKey, 'hex'));
            return { optionId: k.optionId, source: k.source, token: publicKeyToken(publicKey.blob), publicKey };
          }),
          maxUploadBytes: DEFAULT_MAX_UPLOAD_BYTES,
          root: root ? displayPath(root) : null,
        };
        const ledger = options.ledger ?? new Ledger();
        const record = options.record ? { record: readSignatureRecord(options.record, undefined, inputHashes(inputs)) } : {};
        return { settings, jobs: jobsFromLedger(ledger), jobSource: jobSourceOf(ledger), ...record };
      },
    },
  );
  const notes = stored.tool?.version && stored.tool.version !== VERSION ? [`the report was made by signgate ${stored.tool.version}; this is ${VERSION}`] : [];
  return { differences: diffAuditReports(stored, report), notes, report };
}
