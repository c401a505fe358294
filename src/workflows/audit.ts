// audit(): the release report auditors ask for, as a library function: every assembly with its hash, identity,
// verified strong name, vendor attribute and signing job (from the local ledger), compared with the previous
// release when given.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { formatAuditHtml } from '../report/audit-html.js';
import { formatAuditJson } from '../report/audit-json.js';
import { formatAuditMarkdown } from '../report/audit-markdown.js';
import { buildAudit, type AuditJob, type AuditReport } from '../rules/audit.js';
import { prepareCheck, type CheckOptions } from './check.js';
import { displayPath, readInputFile } from './files.js';
import { Ledger } from './ledger.js';

export const AuditFormats = ['html', 'markdown', 'json'] as const;
export type AuditFormat = (typeof AuditFormats)[number];

export interface AuditOptions extends Omit<CheckOptions, 'format' | 'output'> {
  /** The previous release's audit JSON: adds what changed. */
  readonly compare?: string;
  /** Files the release must contain: one relative path per line, or a JSON array. */
  readonly manifest?: string;
  /** The job ledger to take signing jobs from (default: the user's). */
  readonly ledger?: Ledger;
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

/** Signing jobs by the SHA-256 of the files they returned, from the local ledger. */
export function jobsFromLedger(ledger: Ledger): Map<string, AuditJob> {
  const map = new Map<string, AuditJob>();
  for (const entry of ledger.all()) {
    for (const r of entry.results ?? []) if (r.outputSha256) map.set(r.outputSha256, { jobId: entry.jobId, date: entry.createdAt, baseUrl: entry.baseUrl });
  }
  return map;
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
 * @throws UsageError for bad options, a previous report that is not an audit JSON, or a bad manifest
 */
export async function audit(options: AuditOptions): Promise<AuditReport> {
  const paths = options.paths ?? [];
  // With one folder, names in the manifest and comparisons are relative to it.
  const single = paths.length === 1 && statSafe(paths[0]!)?.isDirectory() ? paths[0] : undefined;
  const root = options.root ?? single;
  const prepared = await prepareCheck({ ...options, ...(root ? { root } : {}) });
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
  return buildAudit(prepared.inputs, {
    settings: prepared.settings,
    jobs: jobsFromLedger(options.ledger ?? new Ledger()),
    ...(options.manifest ? { manifest: parseManifest(read(options.manifest, 'manifest')) } : {}),
    ...(previous ? { previous } : {}),
  });
}

/** The report as HTML (one self-contained page), Markdown or JSON; `generatedAt` null leaves the time out. */
export function renderAudit(report: AuditReport, format: AuditFormat, generatedAt: string | null): string {
  return format === 'html' ? formatAuditHtml(report, generatedAt) : format === 'markdown' ? formatAuditMarkdown(report, generatedAt) : formatAuditJson(report, generatedAt);
}

