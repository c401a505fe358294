// `signgate audit`: parses the options, runs audit() and writes the report (HTML, Markdown or JSON).
import { msbuildLine } from '../../report/msbuild.js';
import { extname, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { countOf } from '../../report/terminal.js';
import { audit, AuditFormats, renderAuditPieces, verifyAuditReport, type AuditFormat } from '../../workflows/audit.js';
import { keepHeapSmall } from '../../workflows/check.js';
import { writeFileAtomic } from '../../workflows/files.js';
import { displayPath } from '../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { Io } from '../output.js';
import { checkOptionsFrom, printPieces, type CheckArgs } from './check-command.js';
import { checkThreadsOption } from './common.js';
import { configOption, optionKeyOption, rootOption, vendorApiOption, vendorNamespaceOption, vendorOption } from '../options.js';

/** The check settings plus the audit's own options; `format` is the audit's, not the check report's. */
interface AuditArgs extends Omit<CheckArgs, 'format'> {
  format?: AuditFormat;
  timestamp: boolean;
  compare?: string;
  manifest?: string;
  record?: string;
  checkpoint?: string;
  recordKey?: string;
  verifyReport?: string;
}

/** `--verify-report stored.json <folder>`: every difference, one per line; exit 0 when none, 1 otherwise. */
async function runVerifyReport(args: AuditArgs, io: Io): Promise<ExitCodeValue> {
  if (args.compare || args.manifest || args.output)
    throw new UsageError(
      '--verify-report re-checks a stored report; it takes no --compare, --manifest or --output',
      'Run: signgate audit --verify-report report.json release/ (with --record when the report was made with one)',
    );
  const paths = (args.paths as string[] | undefined) ?? [];
  const result = await verifyAuditReport({
    report: args.verifyReport!,
    paths,
    ...(args.root ? { root: args.root } : {}),
    ...(args.threads === undefined ? {} : { threads: args.threads }),
    ...(args.record ? { record: args.record } : {}),
  });
  for (const note of result.notes) io.err(`note: ${note}`);
  const where = paths.join(', ');
  if (result.differences.length === 0) {
    io.out(
      `${args.verifyReport} matches ${where}: ${countOf(result.report.files.length, 'file')}, the same hashes, keys, strong-name states, Authenticode signatures, vendor attributes, options and findings`,
    );
    return ExitCode.Ok;
  }
  io.out(`${args.verifyReport} differs from ${where} in ${result.differences.length} ${result.differences.length === 1 ? 'point' : 'points'}:`);
  for (const d of result.differences) io.out(`  - ${d}`);
  return ExitCode.Findings;
}

/** The formats that `-o`'s extension names. */
const FORMAT_OF_EXTENSION: Record<string, AuditFormat> = { '.html': 'html', '.htm': 'html', '.md': 'markdown', '.markdown': 'markdown', '.json': 'json' };

/**
 * The report's format: --format (or --json), else what the extension of -o names (`-o audit.md` is Markdown), else HTML.
 * @throws UsageError when --format and the extension of -o name two formats
 */
export function auditFormatOf(format: AuditFormat | undefined, output: string | undefined): AuditFormat {
  const named = output ? FORMAT_OF_EXTENSION[extname(output).toLowerCase()] : undefined;
  if (format && named && format !== named) {
    throw new UsageError(
      `--format ${format} and -o ${output} disagree: ${output} names a ${named} file`,
      `Leave out --format (the extension chooses ${named}), or name the file .${format === 'markdown' ? 'md' : format}.`,
    );
  }
  return format ?? named ?? 'html';
}

export async function runAudit(args: AuditArgs, io: Io): Promise<ExitCodeValue> {
  // A process that audits and exits: its peak memory is what the audit keeps (see keepHeapSmall).
  keepHeapSmall();
  if (args.verifyReport) return runVerifyReport(args, io);
  const { format: givenFormat, output, ...rest } = args;
  const format = auditFormatOf(givenFormat, output);
  if (!output && format === 'html' && process.stdout.isTTY) {
    throw new UsageError(
      'the HTML report is a page for a browser, not for the terminal',
      'Pass -o audit.html to write it to a file, or --format markdown to read it here.',
    );
  }
  const { output: _output, format: _format, ...checkOptions } = checkOptionsFrom(rest);
  const report = await audit({
    ...checkOptions,
    ...(args.compare ? { compare: args.compare } : {}),
    ...(args.manifest ? { manifest: args.manifest } : {}),
    ...(args.record ? { record: args.record } : {}),
    ...(args.checkpoint === undefined ? {} : { recordCheckpoint: args.checkpoint }),
    ...(args.recordKey === undefined ? {} : { recordKey: args.recordKey }),
  });
  const generatedAt = args.timestamp ? new Date().toISOString() : null;
  if (output) {
    writeFileAtomic(resolve(output), renderAuditPieces(report, format, generatedAt));
    const s = report.summary;
    io.err(
      `${format} audit written to ${displayPath(resolve(output))}: ${countOf(s.files, 'file')}, ${s.byOutcome.ok} ok, ${s.byOutcome.fail} fail, ${s.byOutcome['not-required']} not required, ${countOf(s.errors, 'error')}`,
    );
  } else {
    printPieces(io, renderAuditPieces(report, format, generatedAt));
  }
  // In a build (SigngateShip), each error and warning is a diagnostic of its own, naming its file.
  if (args.fromMsbuild) for (const f of report.findings) if (f.severity !== 'note') io.out(msbuildLine(f));
  return report.summary.errors === 0 ? ExitCode.Ok : ExitCode.Findings;
}

export const auditCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, AuditArgs> => ({
  command: 'audit [paths..]',
  describe: 'Release audit: every assembly with its hash, identity, verified strong name, vendor attribute and signing job',
  builder: (y: Argv) =>
    y
      .positional('paths', { type: 'string', array: true, default: undefined, describe: 'The release folders, files or quoted globs' })
      .option('key', optionKeyOption)
      .option('vendor', vendorOption)
      .option('vendor-api', vendorApiOption)
      .option('vendor-namespace', vendorNamespaceOption)
      .option('from-msbuild', { type: 'boolean', hidden: true, describe: 'Run by msbuild/Signgate.targets: each finding also as an MSBuild diagnostic' })
      .option('root', rootOption('Paths in the manifest and comparisons are relative to this folder (default: the one folder given)'))
      .option('format', {
        type: 'string',
        choices: AuditFormats,
        describe: 'Report format (default: as the extension of -o says: .html, .md, .json; else html)',
      })
      .option('json', { type: 'boolean', describe: 'The same as --format json' })
      .option('output', { alias: 'o', type: 'string', describe: 'Write the report to this file (atomically)' })
      .option('timestamp', {
        type: 'boolean',
        default: true,
        describe: 'Add a generated-at line (--no-timestamp makes reports byte-identical for identical inputs)',
      })
      .option('compare', { type: 'string', describe: "The previous release's audit JSON: adds what changed" })
      .option('manifest', { type: 'string', describe: 'Files the release must contain: one relative path per line, or a JSON array' })
      .option('record', {
        type: 'string',
        describe:
          "The signing service's signature record (signgate serve record export): adds to each file the entry that signed it; a file signed with the organization's key without one is SG709",
      })
      .option('verify-report', {
        type: 'string',
        describe: 'Re-check a stored audit JSON against the release folder and name every difference (exit 0 identical, 1 differences)',
      })
      .option('config', configOption)
      .option('threads', checkThreadsOption)
      .example('$0 audit release/ --key 12345_public.snk --vendor Contoso -o audit.html', 'the HTML report for auditors')
      .example('$0 audit release/ --format json -o audit-1.5.json --compare audit-1.4.json --no-timestamp', 'what changed since 1.4')
      .option('checkpoint', {
        type: 'string',
        describe:
          'With --record: a checkpoint of the record saved earlier (serve record checkpoint, or recordCheckpoints in the job ledger); the record must continue it',
      })
      .option('record-key', { type: 'string', describe: "With --checkpoint: the service's record public key (its record-key.pub, or the key itself)" })
      .example(
        '$0 audit release/ --record record.jsonl --checkpoint saved.checkpoint --record-key record-key.pub',
        'the record, proven to continue the checkpoint saved earlier',
      )
      .example('$0 audit release/ --record record.jsonl -o audit.html', "with the entry of the service's signature record that signed each file")
      .example('$0 audit --verify-report audit-1.5.json release/', 'check that a stored report still describes the release')
      .epilog('Exit codes: 0 no error findings, 1 error findings, 2 usage or configuration error, 3 unreadable input.') as unknown as Argv<AuditArgs>,
  handler: async (args: ArgumentsCamelCase<AuditArgs>) => setExit(await runAudit(args, io)),
});
