// `signgate sign`: parses the options, runs sign() and prints each file's result. Replaces the vendor's
// post-build script (its parameter names work too).
import { ClientFileState, isSignedState } from '../../core/file-states.js';
import { describeAuthenticodeVerdict } from '../../authenticode/verdict.js';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { formatReport } from '../../report/index.js';
import { toJsonReport } from '../../report/json.js';
import { inBuildWords, oneLine } from '../../report/msbuild.js';
import { resolveAccessToken } from '../../workflows/access-token.js';
import { ledgerPath } from '../../workflows/ledger.js';
import { sign, signWithoutToken, type SignOptions, type SignResult } from '../../workflows/sign.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { Io } from '../output.js';
import {
  accessTokenFileOption,
  accessTokenOption,
  baseUrlOption,
  configOption,
  numberOption,
  optionKeyOption,
  rootOption,
  textOrJsonFormatOption,
  vendorApiOption,
  vendorNamespaceOption,
  vendorOption,
} from '../options.js';
import { createProgress, retryLine } from '../progress.js';
import { checkOptionsFrom, strings } from './check-command.js';
import type { SignArgs } from './sign-args.js';

export type { SignArgs } from './sign-args.js';

/** The SGB003 build error of msbuild/Signgate.targets: decided here, where the environment is, never by MSBuild. */
export const MSBUILD_NO_TOKEN =
  'error SGB003: signgate: SigngateSign is true but the environment variable SIGNGATE_ACCESS_TOKEN is not set; set it from your CI secret (or name a file that holds the token with -p:SigngateAccessTokenFile=<path>), or build with -p:SigngateSign=false to leave the output delay-signed. A token given as an MSBuild property is never read: MSBuild logs properties.';

/** Where a `sign` run is when Ctrl-C comes. */
export type InterruptPhase =
  | { readonly kind: 'before' }
  | { readonly kind: 'uploading'; readonly files: number }
  | { readonly kind: 'job'; readonly jobId: string }
  | { readonly kind: 'saved'; readonly jobId: string; readonly destination: string };

/** What Ctrl-C leaves behind, said as it is: `finished` are the jobs of this run (a split) already complete. */
export function interruptMessage(phase: InterruptPhase, finished: readonly string[], ledger: string): string {
  const earlier = finished.length ? `; finished before: job ${finished.join(', job ')}` : '';
  switch (phase.kind) {
    case 'before':
      return finished.length
        ? `interrupted before the next upload: nothing of it was sent to the service${earlier}`
        : 'interrupted before any upload: nothing was sent to the service';
    case 'uploading':
      return (
        `interrupted during the upload of ${phase.files} file(s): the service may have made the job already (it does once the whole upload arrived). ` +
        `Run the same command again: it sends the same Idempotency-Key, and a service that keeps it (the reference service does, for a day) gives back that job instead of making a second one; ` +
        `'signgate jobs list' shows the jobs on the service, 'signgate jobs delete <id>' removes one${earlier}`
      );
    case 'job':
      return `interrupted: job ${phase.jobId} is kept on the service and in the job ledger (${ledger}); run the same command again to resume it (nothing is uploaded again), or remove it with 'signgate jobs delete ${phase.jobId}'${earlier}`;
    case 'saved':
      return `interrupted while deleting job ${phase.jobId}: its results are saved in ${phase.destination} and in the job ledger; it may still be on the service: 'signgate jobs delete ${phase.jobId}' removes it${earlier}`;
  }
}

export async function runSign(args: SignArgs, io: Io): Promise<ExitCodeValue> {
  if (args.archive !== undefined) {
    if (args.fromMsbuild && !resolveAccessToken(args)) return noToken(io);
    return (await import('./archive-command.js')).runSignArchive({ ...args, archive: args.archive }, io);
  }
  const paths = [
    ...(strings(args.files) ?? []),
    ...(strings(args.assemblies) ?? [])
      .flatMap((a) => a.split(','))
      .map((s) => s.trim())
      .filter(Boolean),
  ];
  const root = args.rootDirectory ?? args.root;
  const options: SignOptions = {
    ...checkOptionsFrom({ ...args, paths, ...(root ? { root } : {}) }),
    ...(args.destinationPath ? { destination: args.destinationPath } : {}),
    deleteAfterwards: args.deleteAfterwards,
    ...(args.comment !== undefined ? { comment: args.comment } : {}),
    check: args.check,
    split: args.split,
    force: args.force,
    timeoutS: args.timeout,
    pollIntervalMs: args.pollInterval,
    ...(args.nameSeparator ? { nameSeparator: args.nameSeparator } : {}),
    ...(args.maxDownloadBytes ? { maxDownloadBytes: args.maxDownloadBytes } : {}),
    ...(args.recordKey !== undefined ? { recordKey: args.recordKey } : {}),
  };
  // A build without a token: a project with nothing to upload (a helper that uses no vendor API) needs none.
  if (args.fromMsbuild && !resolveAccessToken(args)) {
    const none = await signWithoutToken(options);
    if (!none) return noToken(io);
    printResult(none, io, true);
    return ExitCode.Ok;
  }
  // Ctrl-C says what is true at that moment: what the service holds, what the ledger holds, and how to go on.
  let phase: InterruptPhase = { kind: 'before' };
  const finished: string[] = [];
  const onInterrupt = () => {
    io.err(`\n${interruptMessage(phase, finished, ledgerPath())}`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  let result: SignResult;
  try {
    result = await sign(options, {
      // In a build, in the build's words (SigngateRecordKey, not --record-key).
      log: (line) => io.err(args.fromMsbuild ? inBuildWords(line) : line),
      progress: (label) => createProgress(label, io),
      retry: (r) => io.err(retryLine(r)),
      uploadStarted: ({ files }) => (phase = { kind: 'uploading', files }),
      jobStarted: ({ jobId }) => (phase = { kind: 'job', jobId }),
      resultsSaved: ({ jobId, destination }) => (phase = { kind: 'saved', jobId, destination }),
      jobDone: ({ jobId }) => {
        if (phase.kind === 'saved') finished.push(`${jobId} (its files are in ${phase.destination})`);
        phase = { kind: 'before' };
      },
    });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
  // One document in every outcome, a stopped check included (schemas/sign-result.schema.json).
  if (args.json) io.out(JSON.stringify({ ...result, check: toJsonReport(result.check) }, null, 2));
  else if (result.stoppedByCheck) {
    // In a build, each finding of sign's own check (online: SG601, SG205) is a diagnostic of its own.
    io.out(formatReport(args.fromMsbuild ? 'msbuild' : 'text', result.check, { color: io.color }));
  } else printResult(result, io, args.fromMsbuild === true);
  if (result.stoppedByCheck) {
    const anyway = args.fromMsbuild ? 'add --no-check to SigngateSignArguments' : 'pass --no-check';
    io.err(`signgate sign: the pre-flight check found ${result.blocking} error(s); nothing was uploaded. Fix them, or ${anyway} to upload anyway.`);
    return ExitCode.Findings;
  }
  return result.summary.failed === 0 ? ExitCode.Ok : ExitCode.Findings;
}

/**
 * A file that did not come back signed, as MSBuild reads a diagnostic: the file, the code (the service's rule, as its
 * message names it, else SG_ERR_NOT_SIGNED), why and what the service said, on one line.
 */
function notSignedLine(f: SignResult['files'][number]): string {
  const said = f.messages.filter((m) => m.messageType !== 'Information').map((m) => m.message);
  const code = said.map((m) => /^(SG\d{3})\b/.exec(m)?.[1]).find(Boolean) ?? 'SG_ERR_NOT_SIGNED';
  const text = `${f.uploadName} was not signed: ${f.reason ?? f.state}${said.length ? `; the service says: ${said.join(' | ')}` : ''}`;
  return `${f.path} : error ${code}: ${oneLine(text)}`;
}

/** SGB003: a build whose signing step has files to upload and no token. */
function noToken(io: Io): ExitCodeValue {
  io.err(MSBUILD_NO_TOKEN);
  return ExitCode.Usage;
}

function printResult(result: SignResult, io: Io, inBuild = false): void {
  const c = io.color;
  for (const f of result.files) {
    if (inBuild && f.uploaded && !f.verified) {
      io.out(notSignedLine(f));
      continue;
    }
    const mark = !f.uploaded ? c.dim('skip') : f.verified ? c.green('ok  ') : c.red('FAIL');
    const verdict = f.uploaded
      ? f.verified
        ? `signed and verified${isSignedState(f.state) ? '' : ` (the service says ${f.state})`}`
        : (f.reason ?? f.state)
      : c.dim(f.reason ?? f.state);
    io.out(`${mark} ${f.path}${f.output ? ` -> ${f.output}` : ''}  ${verdict}`);
    for (const m of f.messages) io.out(`       ${m.messageType === 'Error' ? c.red(m.messageType) : m.messageType}: ${m.message}`);
    if (f.authenticode && f.authenticode.state !== 'absent')
      io.out(
        `       ${c.yellow('Authenticode')}: ${describeAuthenticodeVerdict(f.authenticode)}${f.authenticode.state === 'valid' ? '' : '; sign with signtool after this step'}`,
      );
  }
  const authenticode = result.files.filter((f) => f.authenticode && f.authenticode.state !== 'absent').length;
  const returned = result.files.filter((f) => f.authenticode).length;
  // The advice to Authenticode-sign now is for files that came back signed; with none, there is nothing to sign yet.
  if (authenticode) io.out(`${c.yellow('note')} ${authenticode} of ${returned} returned files carry an Authenticode signature (see above)`);
  else if (result.summary.verified > 0)
    io.out(`Authenticode: none of the ${returned} returned files carries a signature; Authenticode-sign the signed ones now if you ship it (docs/msbuild.md)`);
  for (const extra of result.extras) io.out(`${c.yellow('note')} ${extra}  sent by the service but not uploaded: kept apart, not verified`);
  const s = result.summary;
  const already = result.files.filter((f) => f.state === ClientFileState.AlreadySigned).length;
  // The output folder is named only when a job's results were written there.
  const where = result.jobs.length ? `Output in ${result.destination}` : 'Nothing was written.';
  io.out(
    `\n${s.uploaded} uploaded in ${result.jobs.length} job(s): ${s.verified} signed and verified, ${s.failed ? c.red(`${s.failed} failed`) : '0 failed'}; ${s.notUploaded} not uploaded${already ? ` (${already} already signed)` : ''}. ${where}`,
  );
}

export const signCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, SignArgs> => ({
  command: 'sign [files..]',
  describe: 'Check, upload, wait, download, extract and verify: the whole signing round trip',
  builder: (y: Argv) =>
    y
      .positional('files', { type: 'string', array: true, default: undefined, describe: 'Assemblies, folders or quoted globs (or --assemblies a.dll,b.dll)' })
      .option('assemblies', { type: 'string', array: true, describe: "Comma-separated assemblies (the vendor script's parameter)" })
      .option('key', optionKeyOption)
      .option('vendor', vendorOption)
      .option('vendor-api', vendorApiOption)
      .option('vendor-namespace', vendorNamespaceOption)
      .option('root-directory', { alias: ['rootDirectory', 'root'], ...rootOption('Upload names are paths relative to this folder') })
      .option('destination-path', { alias: 'destinationPath', type: 'string', describe: 'Where the signed files go (default ./signed; created if missing)' })
      .option('delete-afterwards', {
        alias: 'deleteAfterwards',
        type: 'boolean',
        default: false,
        describe: 'Delete the job on the service once its results are saved locally',
      })
      .option('comment', { type: 'string', describe: 'Comment stored with the job' })
      .option('base-url', baseUrlOption())
      .option('access-token', accessTokenOption)
      .option('access-token-file', accessTokenFileOption)
      .option('check', { type: 'boolean', default: true, describe: 'Run the pre-flight check first and stop on errors (--no-check uploads anyway)' })
      .option('split', { type: 'boolean', default: false, describe: 'Upload several jobs when the files exceed the size limit or share names' })
      .option('force', { type: 'boolean', default: false, describe: 'Overwrite files in the destination that are not among the files being signed' })
      .option('timeout', {
        type: 'number',
        default: 600,
        coerce: numberOption('timeout', { min: 1 }),
        describe: 'Seconds to wait for the service to finish a job',
      })
      .option('poll-interval', {
        type: 'number',
        default: 1000,
        coerce: numberOption('poll-interval', { integer: true, min: 10 }),
        hidden: true,
        describe: 'First status poll interval in ms (grows by 1.5x up to 10 s)',
      })
      .option('max-upload-bytes', {
        type: 'number',
        coerce: numberOption('max-upload-bytes', { integer: true, min: 1 }),
        describe: 'Size limit of one job (default 40000000)',
      })
      .option('max-download-bytes', {
        type: 'number',
        coerce: numberOption('max-download-bytes', { integer: true, min: 1 }),
        describe: 'Most bytes a result package may have (default twice the upload plus 16 MiB)',
      })
      .option('record-key', {
        alias: 'recordKey',
        type: 'string',
        describe:
          "The service's record public key, expected up front (its record-key.pub, or the key's text name+keyid+key): every job's checkpoint must be signed by it; without it the key is pinned on first use",
      })
      .option('name-separator', {
        type: 'string',
        choices: ['\\', '/'],
        describe: "Folder separator in uploaded names (default \\ as the vendor's script sends them)",
      })
      .option('archive', {
        type: 'string',
        describe: 'Upload this ZIP archive of the project (the archive path; signgate pack writes one); the result archive goes to --destination-path',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result as JSON (schemas/sign-result.schema.json)' })
      .option('format', textOrJsonFormatOption)
      .option('config', configOption)
      .option('from-msbuild', {
        type: 'boolean',
        hidden: true,
        describe:
          'Run by msbuild/Signgate.targets: a missing token is the SGB003 build error when there is something to upload, and no token may be on the command line',
      })
      .example(
        '$0 sign bin/Release --root bin/Release --destination-path signed --delete-afterwards',
        'settings from signgate.config.json, token from SIGNGATE_ACCESS_TOKEN',
      )
      .example('$0 sign --baseUrl https://… --accessToken $TOKEN --assemblies A.dll,B.dll --destinationPath out', "the vendor script's parameter names")
      .epilog(
        `Exit codes: 0 every file signed and verified, 1 findings or files not signed, 2 usage error, 3 unreadable input, network or service error.\nThe job ledger is ${ledgerPath()} (SIGNGATE_CACHE_DIR moves it); a run interrupted after the upload resumes that job.`,
      ) as unknown as Argv<SignArgs>,
  handler: async (args: ArgumentsCamelCase<SignArgs>) => setExit(await runSign(args, io)),
});
