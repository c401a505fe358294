// audit(): the release report auditors ask for, as a library function: every assembly with its hash, identity,
// verified strong name, vendor attribute and signing job (from the local ledger), compared with the previous
// release when given: prepare (pipeline/index.ts) → the ledger, manifest, previous report and record → the engine
// with the audit's product.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { VERSION } from '../runtime/version.js';
import { formatAuditHtml } from '../report/audit-html.js';
import { formatAuditJson, formatAuditJsonPieces } from '../report/audit-json.js';
import { formatAuditMarkdown } from '../report/audit-markdown.js';
import { diffAuditReports } from '../audit/compare.js';
import type { AuditReport } from '../audit/model.js';
import type { CheckSettings } from '../rules/types.js';
import { auditProduct } from '../audit/audit-product.js';
import { runEngine } from '../engine/index.js';
import { parsePublicKeyBlob } from '../strongname/key-blob.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { auditRecords, readAuditJson, type SavedCheckpoint } from './audit-records.js';
import { displayPath, noAssembliesError } from './input-paths.js';
import { Ledger } from './ledger.js';

export { jobsFromLedger, readSignatureRecord } from './audit-records.js';
import { BOUNDED, DEFAULT_MAX_UPLOAD_BYTES, engineRunner, prepareCheck, readFiles, type CheckOptions } from './pipeline/index.js';

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
function savedCheckpoint(options: Pick<AuditOptions, 'record' | 'recordCheckpoint' | 'recordKey'>): SavedCheckpoint | undefined {
  if (options.recordCheckpoint === undefined && options.recordKey === undefined) return undefined;
  if (!options.record)
    throw new UsageError(
      '--checkpoint and --record-key check a signature record: pass --record too',
      'Run: signgate audit release/ --record record.jsonl --checkpoint saved.checkpoint --record-key record-key.pub',
    );
  if (options.recordCheckpoint === undefined || options.recordKey === undefined) {
    throw new UsageError(
      `--${options.recordCheckpoint === undefined ? 'record-key' : 'checkpoint'} needs --${options.recordCheckpoint === undefined ? 'checkpoint' : 'record-key'}`,
      "Pass the checkpoint you saved and the service's record public key (signgate serve record public-key) together.",
    );
  }
  return { checkpoint: options.recordCheckpoint, key: options.recordKey };
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
  const read = await prepareCheck({ ...options, ...(root ? { root } : {}) }, BOUNDED);
  // A release with no assembly is no release to vouch for: never a report of 0 files that passes.
  if (read.inputs.length === 0) throw noAssembliesError(read.paths);
  return runEngine(auditProduct(auditRecords(options, read.settings, saved, read.inputs)), read.inputs, await engineRunner(read));
}

/** The report as HTML (one self-contained page), Markdown or JSON; `generatedAt` null leaves the time out. */
export function renderAudit(report: AuditReport, format: AuditFormat, generatedAt: string | null): string {
  return format === 'html'
    ? formatAuditHtml(report, generatedAt)
    : format === 'markdown'
      ? formatAuditMarkdown(report, generatedAt)
      : formatAuditJson(report, generatedAt);
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
export async function verifyAuditReport(options: {
  readonly report: string;
  readonly paths: readonly string[];
  readonly root?: string;
  readonly ledger?: Ledger;
  readonly threads?: number;
  readonly readAtOnceBytes?: number;
  readonly record?: string;
}): Promise<VerifyReportResult> {
  const hint = 'Pass the JSON written by `signgate audit --format json` (signgate 0.1 or later writes format 2).';
  const stored = readAuditJson(options.report, hint);
  if (!Array.isArray(stored?.files) || !Array.isArray(stored.settings?.keys) || !stored.settings.keys.every((k) => typeof k.publicKey === 'string')) {
    throw new UsageError(`${options.report} is not an audit JSON report that records its inputs (format ${String(stored?.formatVersion)})`, hint);
  }
  if (options.paths.length === 0)
    throw new UsageError('no release folder to verify the report against', 'Name the release folder: signgate audit --verify-report report.json release/');
  if (stored.signatureRecord && !options.record) {
    throw new UsageError(
      `${options.report} was made with the signature record ${stored.signatureRecord.file}`,
      `Pass that record again: signgate audit --verify-report ${options.report} <release folder> --record ${stored.signatureRecord.file}`,
    );
  }
  const single = options.paths.length === 1 && statSafe(options.paths[0]!)?.isDirectory() ? options.paths[0] : undefined;
  const rootArg = options.root ?? single;
  const root = rootArg ? resolve(rootArg) : null;
  const s = stored.settings;
  // As the audit reads a folder: with its netmodules, which the report lists.
  const read = await readFiles({ paths: options.paths, root, threads: options.threads, readAtOnceBytes: options.readAtOnceBytes }, BOUNDED);
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
  const records = auditRecords({ ledger: options.ledger, record: options.record }, settings, undefined, read.inputs);
  const report = await runEngine(auditProduct(records), read.inputs, await engineRunner(read));
  const notes = stored.tool?.version && stored.tool.version !== VERSION ? [`the report was made by signgate ${stored.tool.version}; this is ${VERSION}`] : [];
  return { differences: diffAuditReports(stored, report), notes, report };
}
