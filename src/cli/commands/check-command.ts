// `signgate check`: the pre-flight gate. Parses the options, runs check() and prints the report.
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { Chalk } from 'chalk';
import { ReportFormats, formatReportPieces, type ReportFormat } from '../../report/index.js';
import { inBuildWords } from '../../report/msbuild.js';
import { checkExitCode } from '../../rules/rule-runner.js';
import { findRule } from '../../rules/index.js';
import type { SeveritySetting } from '../../core/diagnostic.js';
import { UsageError } from '../../core/errors.js';
import { check, DEFAULT_MAX_UPLOAD_BYTES, keepHeapSmall, type CheckOptions } from '../../workflows/check.js';
import { lineBatches, writeFileAtomic } from '../../workflows/files.js';
import { displayPath } from '../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import {
  accessTokenFileOption,
  accessTokenOption,
  baseUrlOption,
  configOption,
  numberOption,
  optionKeyOption,
  rootOption,
  vendorApiOption,
  vendorNamespaceOption,
  vendorOption,
} from '../options.js';
import type { Io } from '../output.js';
import { checkThreadsOption, strings, type CommonArgs } from './common.js';

export interface CheckArgs extends CommonArgs {
  paths?: string[];
  key?: string[];
  vendor?: string;
  vendorApi?: string[];
  reference?: string[];
  rule?: string[];
  vendorNamespace?: string;
  root?: string;
  format?: ReportFormat;
  output?: string;
  baseUrl?: string;
  online?: boolean;
  accessToken?: string;
  accessTokenFile?: string;
  config?: string;
  maxUploadBytes?: number;
  threads?: number;
  /** Run by the MSBuild targets (hidden): one project's output, settings named as MSBuild properties. */
  fromMsbuild?: boolean;
}

export { strings };

/**
 * `--rule name=severity` (or `id=severity`), as the config file's "rules" take them.
 * @throws UsageError for a rule or a severity that does not exist
 */
export function ruleSettings(values: readonly string[] | undefined): Record<string, SeveritySetting> | undefined {
  if (!values) return undefined;
  const out: Record<string, SeveritySetting> = {};
  for (const value of values) {
    const m = /^([A-Za-z0-9-]+)=(error|warning|note|off)$/.exec(value);
    if (!m || !findRule(m[1]!))
      throw new UsageError(
        `--rule ${JSON.stringify(value)} is not <rule>=<error|warning|note|off>`,
        'Name a rule by its id or name (docs/rules.md), for example --rule loads-under-no-license=note.',
      );
    out[m[1]!] = m[2] as SeveritySetting;
  }
  return out;
}

/** The library's check options from the command line's. */
export function checkOptionsFrom(args: CheckArgs): CheckOptions {
  const picked: Record<string, unknown> = {
    paths: strings(args.paths),
    keys: strings(args.key),
    vendor: args.vendor,
    vendorApi: args.vendorApi,
    references: strings(args.reference),
    rules: ruleSettings(strings(args.rule)),
    vendorNamespace: args.vendorNamespace,
    root: args.root,
    maxUploadBytes: args.maxUploadBytes,
    baseUrl: args.baseUrl,
    online: args.online,
    accessToken: args.accessToken,
    accessTokenFile: args.accessTokenFile,
    config: args.config,
    format: args.format,
    output: args.output,
    threads: args.threads,
    inBuild: args.fromMsbuild || undefined,
  };
  return Object.fromEntries(Object.entries(picked).filter(([, v]) => v !== undefined)) as CheckOptions;
}

/**
 * Prints a text given in pieces as `io.out` prints it whole: in parts of some tens of kilobytes, each ending a line
 * (see lineBatches), so that no part outlives the young generation of the garbage collector.
 */
export function printPieces(io: Io, pieces: Iterable<string>): void {
  let printed = false;
  for (const part of lineBatches(pieces)) {
    io.out(part);
    printed = true;
  }
  // As io.out(''): an empty text is an empty line.
  if (!printed) io.out('');
}

export async function runCheckCommand(args: CheckArgs, io: Io): Promise<ExitCodeValue> {
  // A process that checks and exits: its peak memory is what the check keeps (see keepHeapSmall).
  keepHeapSmall();
  const { result, prepared } = await check(checkOptionsFrom(args));
  const { format, output, configPath } = prepared;
  // In a build, in the build's words (SigngateCheckOnline, not --online).
  for (const note of prepared.notes) io.err(`note: ${args.fromMsbuild ? inBuildWords(note) : note}`);
  // The report is written a part at a time, never held whole (the report of a large set is many megabytes).
  if (output) {
    writeFileAtomic(resolve(output), formatReportPieces(format, result, { color: new Chalk({ level: 0 }) }));
    io.err(`${format} report written to ${displayPath(resolve(output))}${configPath ? ` (settings from ${displayPath(configPath)})` : ''}`);
    if (format !== 'text') printPieces(io, formatReportPieces('text', result, { color: io.color }));
  } else {
    printPieces(io, formatReportPieces(format, result, { color: io.color }));
  }
  return checkExitCode(result) === 0 ? ExitCode.Ok : ExitCode.Findings;
}

export const checkCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, CheckArgs> => ({
  command: 'check [paths..]',
  describe: 'Pre-flight gate: will the signing service accept every file, and will the signed result load?',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('paths', {
        type: 'string',
        array: true,
        default: undefined,
        describe: 'Build output folders, files or glob patterns (default: "paths" in the config)',
      })
      .option('key', optionKeyOption)
      .option('vendor', vendorOption)
      .option('vendor-api', vendorApiOption)
      .option('rule', {
        type: 'string',
        array: true,
        describe: 'A rule\'s severity for this run, <rule>=<error|warning|note|off> (as "rules" in signgate.config.json); e.g. loads-under-no-license=note',
      })
      .option('reference', {
        type: 'string',
        array: true,
        describe: 'A vendor API assembly (or its folder) the add-in compiles against: read only to name the vendor attribute exactly',
      })
      .option('vendor-namespace', vendorNamespaceOption)
      .option('from-msbuild', {
        type: 'boolean',
        hidden: true,
        describe: 'Run by msbuild/Signgate.targets: a project that references no vendor API needs no signing (a note), and hints name MSBuild properties',
      })
      .option('root', rootOption('Upload names are paths relative to this folder (the relative folders then count for duplicates)'))
      .option('format', { type: 'string', choices: ReportFormats, describe: 'Report format (default text)' })
      .option('json', { type: 'boolean', describe: 'The same as --format json' })
      .option('output', { alias: 'o', type: 'string', describe: 'Write the report to this file (a text summary still goes to stdout)' })
      .option('max-upload-bytes', {
        type: 'number',
        coerce: numberOption('max-upload-bytes', { integer: true, min: 1 }),
        describe: `Size limit of one upload job (default ${DEFAULT_MAX_UPLOAD_BYTES})`,
      })
      .option('base-url', baseUrlOption('Signing service base URL (…/<service-name>/v1.0): the check goes online with it (the license cross-check)'))
      .option('online', {
        type: 'boolean',
        describe:
          'Go online: cross-check the licenses (GET /licenses) at --base-url, "baseUrl" in the config or SIGNGATE_BASE_URL (alone, ' +
          'they leave the check offline); needs a token; --no-online: offline, whatever the config says',
      })
      .option('access-token', accessTokenOption)
      .option('access-token-file', accessTokenFileOption)
      .option('config', configOption)
      .option('threads', checkThreadsOption)
      .example('$0 check bin/Release --key 12345_public.snk --vendor Contoso', 'check a build output folder')
      .example('$0 check --format sarif -o signgate.sarif', 'settings from signgate.config.json, SARIF for code scanning')
      .example('$0 check bin/Release --online', 'with SIGNGATE_BASE_URL and SIGNGATE_ACCESS_TOKEN exported: the license cross-check too')
      .example(
        '$0 check obj/Release/net48/MyAddin.dll --reference ../sdk/Contoso.AddinApi.dll --rule loads-under-no-license=note',
        'name the vendor attribute from its API assembly; report SG801 too',
      )
      .epilog(
        'Exit codes: 0 no error findings, 1 error findings, 2 usage or configuration error, 3 unreadable input, network or service error.',
      ) as unknown as Argv<CheckArgs>,
  handler: async (args: ArgumentsCamelCase<CheckArgs>) => setExit(await runCheckCommand(args, io)),
});
