// `signgate audit`: the release report auditors ask for (HTML, Markdown or JSON).
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { formatAuditHtml } from '../../report/audit-html.js';
import { formatAuditJson } from '../../report/audit-json.js';
import { formatAuditMarkdown } from '../../report/audit-markdown.js';
import { buildAudit, type AuditJob, type AuditReport } from '../../rules/audit.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { displayPath, readInputFile, writeFileAtomic } from '../files.js';
import { Ledger } from '../ledger.js';
import type { Io } from '../output.js';
import { prepareCheck, type CheckArgs } from './check.js';

export const AuditFormats = ['html', 'markdown', 'json'] as const;
type AuditFormat = (typeof AuditFormats)[number];

/** The check settings plus the audit's own options; `format` is the audit's, not the check report's. */
interface AuditArgs extends Omit<CheckArgs, 'format'> {
  format?: AuditFormat;
  timestamp: boolean;
  compare?: string;
  manifest?: string;
}

/** A manifest: one relative path per line (blank lines and # comments ignored), or a JSON array of paths. */
export function parseManifest(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const list = JSON.parse(trimmed) as unknown;
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw new UsageError('the manifest JSON must be an array of paths');
    return list;
  }
  return text
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

export async function runAudit(args: AuditArgs, io: Io): Promise<ExitCodeValue> {
  const paths = args.paths ?? [];
  // With one folder, names in the manifest and comparisons are relative to it.
  const single = paths.length === 1 && statSafe(paths[0]!)?.isDirectory() ? paths[0] : undefined;
  const { format: auditFormat, ...checkArgs } = args;
  const prepared = await prepareCheck({ ...checkArgs, root: args.root ?? single });
  const read = (file: string, what: string) => {
    const text = readInputFile(resolve(file), displayPath(resolve(file))).toString('utf8');
    if (!text.trim()) throw new UsageError(`${file}: the ${what} is empty`);
    return text;
  };
  let previous: AuditReport | undefined;
  if (args.compare) {
    try {
      previous = JSON.parse(read(args.compare, 'previous report')) as AuditReport;
    } catch (error) {
      throw new UsageError(`${args.compare} is not an audit JSON report (${(error as Error).message})`, 'Pass the JSON written by `signgate audit --format json` for the previous release.');
    }
    if (!Array.isArray(previous?.files)) throw new UsageError(`${args.compare} is not an audit JSON report (no "files" list)`, 'Pass the JSON written by `signgate audit --format json` for the previous release.');
  }
  const report = buildAudit(prepared.inputs, {
    settings: prepared.settings,
    jobs: jobsFromLedger(new Ledger()),
    ...(args.manifest ? { manifest: parseManifest(read(args.manifest, 'manifest')) } : {}),
    ...(previous ? { previous } : {}),
  });
  const generatedAt = args.timestamp ? new Date().toISOString() : null;
  const format: AuditFormat = auditFormat ?? 'html';
  const text = format === 'html' ? formatAuditHtml(report, generatedAt) : format === 'markdown' ? formatAuditMarkdown(report, generatedAt) : formatAuditJson(report, generatedAt);
  if (args.output) {
    writeFileAtomic(resolve(args.output), new TextEncoder().encode(text));
    const s = report.summary;
    io.err(`${format} audit written to ${displayPath(resolve(args.output))}: ${s.files} files, ${s.byOutcome.ok} ok, ${s.byOutcome.fail} fail, ${s.byOutcome['not-required']} not required, ${s.errors} errors`);
  } else io.out(text);
  return report.summary.errors === 0 ? ExitCode.Ok : ExitCode.Findings;
}

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

export const auditCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, AuditArgs> => ({
  command: 'audit [paths..]',
  describe: 'Release audit: every assembly with its hash, identity, verified strong name, vendor attribute and signing job',
  builder: (y: Argv) =>
    y
      .positional('paths', { type: 'string', array: true, describe: 'The release folders, files or quoted globs' })
      .option('key', { type: 'string', array: true, describe: 'The option public key file <optionId>_public.snk the release must be signed with' })
      .option('vendor', { type: 'string', describe: 'Vendor name (the attribute is <Vendor>SignedAssemblyAttribute)' })
      .option('vendor-api', { type: 'string', array: true, describe: 'Vendor API assembly name patterns (default <Vendor>.*)' })
      .option('root', { type: 'string', describe: 'Paths in the manifest and comparisons are relative to this folder (default: the one folder given)' })
      .option('format', { type: 'string', choices: AuditFormats, describe: 'Report format (default html)' })
      .option('output', { alias: 'o', type: 'string', describe: 'Write the report to this file (atomically)' })
      .option('timestamp', { type: 'boolean', default: true, describe: 'Add a generated-at line (--no-timestamp makes reports byte-identical for identical inputs)' })
      .option('compare', { type: 'string', describe: "The previous release's audit JSON: adds what changed" })
      .option('manifest', { type: 'string', describe: 'Files the release must contain: one relative path per line, or a JSON array' })
      .option('config', { type: 'string', describe: 'Config file (default: signgate.config.json from the working directory upward)' })
      .example('$0 audit release/ --key 12345_public.snk --vendor Contoso -o audit.html', 'the HTML report for auditors')
      .example('$0 audit release/ --format json -o audit-1.5.json --compare audit-1.4.json --no-timestamp', 'what changed since 1.4')
      .epilog('Exit codes: 0 no error findings, 1 error findings, 2 usage or configuration error, 3 unreadable input.') as unknown as Argv<AuditArgs>,
  handler: async (args: ArgumentsCamelCase<AuditArgs>) => setExit(await runAudit(args, io)),
});
