// `signgate audit`: parses the options, runs audit() and writes the report (HTML, Markdown or JSON).
import { msbuildLine } from '../../report/msbuild.js';
import { extname, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { countOf } from '../../report/terminal.js';
import {
  audit,
  AuditFormats,
  auditFormatOfExtension,
  auditWithSbom,
  renderAuditPieces,
  relativeToReport,
  renderSbom,
  SbomSpecVersions,
  verifyAuditReport,
  type AuditFormat,
  type AuditOptions,
  type SbomSpecVersion,
} from '../../workflows/audit.js';
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
  sbom?: string;
  sbomCreatorUrl?: string;
  sbomCreatorEmail?: string;
  sbomName?: string;
  sbomVersion?: string;
  sbomLicense?: string;
  sbomSourceUri?: string;
  sbomDownloadUri?: string;
  sbomSpec?: SbomSpecVersion;
  nugetPackages?: string;
}

/** The options that only mean something with --sbom. */
const SBOM_ONLY = [
  'sbomCreatorUrl',
  'sbomCreatorEmail',
  'sbomName',
  'sbomVersion',
  'sbomLicense',
  'sbomSourceUri',
  'sbomDownloadUri',
  'sbomSpec',
  'nugetPackages',
] as const;
const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

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
    io.out(`${args.verifyReport} matches ${where}: ${countOf(result.files, 'file')}, ${result.compared}`);
    return ExitCode.Ok;
  }
  io.out(`${args.verifyReport} differs from ${where} in ${result.differences.length} ${result.differences.length === 1 ? 'point' : 'points'}:`);
  for (const d of result.differences) io.out(`  - ${d}`);
  return ExitCode.Findings;
}

/**
 * The report's format: --format (or --json), else what the extension of -o names (`-o audit.md` is Markdown), else HTML.
 * @throws UsageError when --format and the extension of -o name two formats
 */
export function auditFormatOf(format: AuditFormat | undefined, output: string | undefined): AuditFormat {
  const named = output ? auditFormatOfExtension(extname(output)) : undefined;
  if (format && named && format !== named) {
    throw new UsageError(
      `--format ${format} and -o ${output} disagree: ${output} names a ${named} file`,
      `Leave out --format (the extension chooses ${named}), or name the file .${format === 'markdown' ? 'md' : format}.`,
    );
  }
  return format ?? named ?? 'html';
}

/** Audits with the SBOM and writes it (args.sbom); the report and the SBOM's errors, the inventory let go. */
async function writeSbom(
  args: AuditArgs,
  auditOptions: AuditOptions,
  generatedAt: string | null,
  io: Io,
): Promise<{ report: Awaited<ReturnType<typeof audit>>; sbomErrors: number }> {
  const withSbom = await auditWithSbom({
    ...auditOptions,
    sbom: {
      creatorUrl: args.sbomCreatorUrl,
      creatorEmail: args.sbomCreatorEmail,
      name: args.sbomName,
      version: args.sbomVersion,
      license: args.sbomLicense,
      sourceUri: args.sbomSourceUri,
      downloadUri: args.sbomDownloadUri,
      specVersion: args.sbomSpec,
    },
    ...(args.nugetPackages === undefined ? {} : { nugetPackages: args.nugetPackages }),
  });
  const target = resolve(args.sbom!);
  writeFileAtomic(target, await renderSbom(withSbom, generatedAt));
  const inv = withSbom.inventory;
  for (const f of inv.findings) io.err(`${f.severity} ${f.ruleId} ${f.rule} ${f.file ?? ''}: ${f.message}`);
  const sbomErrors = inv.findings.filter((f) => f.severity === 'error').length;
  const packaged = inv.files.filter((f) => f.package).length;
  io.err(
    `CycloneDX ${args.sbomSpec ?? '1.6'} SBOM written to ${displayPath(target)}: ${countOf(inv.files.length, 'component')}, ${packaged} from NuGet packages${inv.packageFolder ? '' : ' (no NuGet package folder: their licences are unknown)'}, ${countOf(inv.findings.length, 'finding')}`,
  );
  return { report: withSbom.report, sbomErrors };
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
  const stray = SBOM_ONLY.find((k) => args[k] !== undefined);
  if (stray && !args.sbom)
    throw new UsageError(`--${kebab(stray)} is an option of the SBOM`, 'Pass --sbom <file> (for example --sbom release.cdx.json) with it, or leave it out.');
  const { output: _output, format: _format, ...checkOptions } = checkOptionsFrom(rest);
  const auditOptions = {
    ...checkOptions,
    ...(args.compare ? { compare: args.compare } : {}),
    ...(args.manifest ? { manifest: args.manifest } : {}),
    ...(args.record ? { record: args.record } : {}),
    ...(args.checkpoint === undefined ? {} : { recordCheckpoint: args.checkpoint }),
    ...(args.recordKey === undefined ? {} : { recordKey: args.recordKey }),
  };
  const generatedAt = args.timestamp ? new Date().toISOString() : null;
  // The SBOM's inventory is let go before the audit's report is written (the peak memory is at the end).
  const { report, sbomErrors } = args.sbom ? await writeSbom(args, auditOptions, generatedAt, io) : { report: await audit(auditOptions), sbomErrors: 0 };
  if (output) {
    // Its evidence names its files from where it lies: the report folder can be moved or zipped with them.
    writeFileAtomic(resolve(output), renderAuditPieces(relativeToReport(report, output), format, generatedAt));
    const s = report.summary;
    io.err(
      `${format} audit written to ${displayPath(resolve(output))}: ${countOf(s.files, 'file')}, ${s.byOutcome.ok} ok, ${s.byOutcome.fail} fail, ${s.byOutcome['not-required']} not required, ${countOf(s.errors, 'error')}`,
    );
  } else {
    printPieces(io, renderAuditPieces(report, format, generatedAt));
  }
  // In a build (SigngateShip), each error and warning is a diagnostic of its own, naming its file.
  if (args.fromMsbuild) for (const f of report.findings) if (f.severity !== 'note') io.out(msbuildLine(f));
  return report.summary.errors === 0 && sbomErrors === 0 ? ExitCode.Ok : ExitCode.Findings;
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
      .option('sbom', {
        type: 'string',
        describe: 'Also write the CycloneDX JSON SBOM of the release to this file: every shipped file, its hashes, package, licence and signatures',
      })
      .option('sbom-creator-url', { type: 'string', describe: 'With --sbom: the URL of the organization that makes it (or "sbomCreatorUrl" in the config)' })
      .option('sbom-creator-email', { type: 'string', describe: 'With --sbom: its e-mail address (or "sbomCreatorEmail"); one of the two is required' })
      .option('sbom-name', { type: 'string', describe: "With --sbom: the add-in's name (default: the project its deps.json names, else its main assembly)" })
      .option('sbom-version', { type: 'string', describe: "With --sbom: the add-in's version (default: its main assembly's)" })
      .option('sbom-license', { type: 'string', describe: "With --sbom: the licence of the vendor's own files (SPDX expression or LicenseRef-…)" })
      .option('sbom-source-uri', { type: 'string', describe: "With --sbom: where the vendor's source code is" })
      .option('sbom-download-uri', { type: 'string', describe: 'With --sbom: where the release is downloaded from' })
      .option('sbom-spec', { type: 'string', choices: SbomSpecVersions, describe: 'With --sbom: the CycloneDX version (default 1.6)' })
      .option('nuget-packages', { type: 'string', describe: 'With --sbom: the NuGet package folder (default: NUGET_PACKAGES, else ~/.nuget/packages)' })
      .option('config', configOption)
      .option('threads', checkThreadsOption)
      .example('$0 audit release/ -o audit.html --sbom release.cdx.json --sbom-creator-url https://contoso.example', 'the audit and the SBOM')
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
