// The archive path on the command line: `signgate sign --archive <zip>` and `signgate pack`.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { formatReport } from '../../report/index.js';
import { toJsonReport } from '../../report/json.js';
import { pack, signArchive } from '../../workflows/archive.js';
import { displayPath } from '../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { Io } from '../output.js';
import { retryLine } from '../progress.js';
import { checkOptionsFrom, strings, type CheckArgs } from './check-command.js';
import type { SignArgs } from './sign-args.js';
import { configOption, optionKeyOption, rootOption, vendorApiOption, vendorNamespaceOption, vendorOption } from '../options.js';

/** `sign --archive <zip>`: upload the archive to POST /archives, wait, download the result archive, verify. */
export async function runSignArchive(args: SignArgs & { archive: string }, io: Io): Promise<ExitCodeValue> {
  const c = io.color;
  const { paths: _paths, ...options } = checkOptionsFrom(args);
  const result = await signArchive(
    {
      ...options,
      archive: args.archive,
      ...(args.destinationPath ? { destination: args.destinationPath } : {}),
      ...(args.comment !== undefined ? { comment: args.comment } : {}),
      deleteAfterwards: args.deleteAfterwards,
      check: args.check,
      force: args.force,
      timeoutS: args.timeout,
      pollIntervalMs: args.pollInterval,
      ...(args.recordKey !== undefined ? { recordKey: args.recordKey } : {}),
    },
    {
      log: (line) => io.err(line),
      retry: (r) => io.err(retryLine(r)),
    },
  );
  // One document in every outcome, a stopped check included.
  if (args.json) io.out(JSON.stringify({ ...result, check: toJsonReport(result.check) }, null, 2));
  else if (result.stoppedByCheck) io.out(formatReport('text', result.check, { color: io.color }));
  if (result.stoppedByCheck) {
    io.err(
      `signgate sign: the pre-flight check of the assemblies in ${displayPath(args.archive)} found ${result.check.summary.errors} error(s); nothing was uploaded. Fix them, or pass --no-check to upload anyway.`,
    );
    return ExitCode.Findings;
  }
  if (!args.json) {
    for (const f of result.files) {
      const mark = f.verified ? c.green('ok  ') : f.failed ? c.red('FAIL') : c.dim('keep');
      io.out(
        `${mark} ${f.name}  ${f.verified ? 'signed and verified' : (f.reason ?? (f.state === 'not an assembly' ? 'not an assembly: returned as it was' : `returned as it was (${f.state})`))}`,
      );
    }
    for (const extra of result.extras ?? []) io.out(`${c.red('FAIL')} ${extra}  sent back by the service but never uploaded: left out of the result archive`);
    const s = result.summary;
    io.out(
      `\n${s.files} files, ${s.assemblies} assemblies: ${s.verified} signed and verified, ${s.failed ? c.red(`${s.failed} failed`) : '0 failed'}. Result archive ${displayPath(result.output!)} (with signing-log.txt and signing-logs/ per file)${result.deleted ? '; the job was deleted' : ''}`,
    );
  }
  return result.summary.failed === 0 ? ExitCode.Ok : ExitCode.Findings;
}

interface PackArgs extends CheckArgs {
  check: boolean;
  force: boolean;
}

export const packCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, PackArgs> => ({
  command: 'pack [paths..]',
  describe: 'Pre-flight check, then write the ZIP archive of the build output for the archive path (sign --archive, /exchange)',
  builder: (y: Argv) =>
    y
      .positional('paths', {
        type: 'string',
        array: true,
        default: undefined,
        describe: 'Build output folders or files: every file below a folder goes into the archive',
      })
      .option('output', { alias: 'o', type: 'string', demandOption: true, describe: 'The archive to write (.zip)' })
      .option('key', optionKeyOption)
      .option('vendor', vendorOption)
      .option('vendor-api', vendorApiOption)
      .option('vendor-namespace', vendorNamespaceOption)
      .option('root', rootOption('Names in the archive are paths relative to this folder (default: each folder named)'))
      .option('check', { type: 'boolean', default: true, describe: 'Write nothing when the pre-flight check finds errors (--no-check writes anyway)' })
      .option('force', { type: 'boolean', default: false, describe: 'Pack files that look like access tokens anyway (a key pair or private key never)' })
      .option('config', configOption)
      .example(
        '$0 pack bin/Release -o MyAddin-1.4.zip --key 12345_public.snk --vendor Contoso',
        'check, then zip the build output',
      ) as unknown as Argv<PackArgs>,
  handler: async (args: ArgumentsCamelCase<PackArgs>) => {
    const { output: _report, format: _format, ...options } = checkOptionsFrom({ ...args, paths: strings(args.paths) ?? [] });
    const result = await pack({ ...options, archive: args.output!, check: args.check, force: args.force });
    if (result.stoppedByCheck) {
      io.out(formatReport('text', result.check, { color: io.color }));
      io.err(
        `signgate pack: the pre-flight check found ${result.check.summary.errors} error(s); ${displayPath(result.archive)} was not written. Fix them, or pass --no-check.`,
      );
      return setExit(ExitCode.Findings);
    }
    io.out(displayPath(result.archive));
    io.err(
      `signgate pack: ${result.files.length} files in ${displayPath(result.archive)} (${result.check.summary.needsSigning} need signing, ${result.check.summary.warnings} warnings); upload it with 'signgate sign --archive ${displayPath(result.archive)}' or on the service's /exchange page`,
    );
    setExit(ExitCode.Ok);
  },
});
