// The signgate command line: yargs command modules over the library; sets exit codes, never calls process.exit.
import yargs from 'yargs';
import { UsageError } from '../core/errors.js';
import { checkCommand } from './commands/check.js';
import { inspectCommand } from './commands/inspect.js';
import { resignCommand } from './commands/resign.js';
import { serveCommand } from './commands/serve.js';
import { signCommand } from './commands/sign.js';
import { jobsCommand, licensesCommand } from './commands/jobs.js';
import { auditCommand } from './commands/audit.js';
import { tokenCommand } from './commands/token.js';
import { verifyCommand } from './commands/verify.js';
import { EXIT_CODES_HELP, ExitCode, type ExitCodeValue } from './exit-codes.js';
import { formatError, processIo, type Io } from './output.js';

/** The vendor's post-build script's parameters, as PowerShell users type them (`-baseUrl`, `--BaseUrl`). */
const VENDOR_PARAMETERS: Record<string, string> = {
  baseurl: 'base-url',
  accesstoken: 'access-token',
  assemblies: 'assemblies',
  destinationpath: 'destination-path',
  deleteafterwards: 'delete-afterwards',
  rootdirectory: 'root-directory',
  comment: 'comment',
};

/** Rewrites the vendor script's parameter spellings, in any case and with one or two dashes, to ours. */
export function normalizeVendorParameters(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return argv.map((arg, i) => {
    if (end >= 0 && i > end) return arg;
    const m = /^--?([A-Za-z]+)(?:([=:])(.*))?$/.exec(arg);
    const ours = m ? VENDOR_PARAMETERS[m[1]!.toLowerCase()] : undefined;
    if (m && !ours && /^-[A-Za-z]{3,}/.test(arg)) {
      const long = m[1]!.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
      throw new UsageError(`${arg} is not an option: options longer than one letter take two dashes`, `Write --${long}.`);
    }
    if (!m || !ours) return arg;
    // PowerShell writes a switch's value after a colon: -deleteAfterwards:$false arrives as -deleteAfterwards:False.
    return m[2] === undefined ? `--${ours}` : `--${ours}=${/^(true|false)$/i.test(m[3]!) ? m[3]!.toLowerCase() : m[3]}`;
  });
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<ExitCodeValue> {
  let exitCode: ExitCodeValue = ExitCode.Ok;
  const setExit = (code: ExitCodeValue) => {
    exitCode = code;
  };
  let normalized: string[];
  try {
    normalized = normalizeVendorParameters(argv);
  } catch (error) {
    io.err(formatError(error));
    return ExitCode.Usage;
  }
  const parser = yargs(normalized)
    .scriptName('signgate')
    .usage('$0 <command> [options]\n\nPre-flight, signing and verification of strong-named .NET add-in assemblies.')
    .option('verbose', { type: 'boolean', default: false, describe: 'Show the cause chain of errors' })
    .command(checkCommand(io, setExit))
    .command(signCommand(io, setExit) as never)
    .command(licensesCommand(io, setExit) as never)
    .command(jobsCommand(io, setExit) as never)
    .command(auditCommand(io, setExit) as never)
    .command(inspectCommand(io, setExit))
    .command(verifyCommand(io, setExit))
    .command(tokenCommand(io, setExit))
    .command(resignCommand(io, setExit))
    .command(serveCommand(io, setExit))
    // One spelling for JSON output everywhere: --json and --format json mean the same in every command.
    .middleware((args) => {
      if (args.format === 'json') args.json = true;
      else if (args.json === true && args.format === undefined) args.format = 'json';
    })
    .demandCommand(1, 'Name a command: check, sign, licenses, jobs, audit, inspect, verify, token, resign or serve.')
    .strict()
    .epilog(EXIT_CODES_HELP)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    // Throwing here stops yargs before any command handler runs: a mistyped option never lets work start.
    .fail((message, error) => {
      // yargs wraps what a `coerce` throws (our UsageError) into its own YError: keep it a usage error.
      if (error && error.name === 'YError') throw new UsageError(error.message, "run 'signgate <command> --help'");
      if (error) throw error;
      throw new UsageError(message, "run 'signgate --help' or 'signgate <command> --help'");
    })
    .help();
  try {
    await parser.parseAsync();
  } catch (error) {
    const verbose = argv.includes('--verbose');
    io.err(formatError(error, verbose));
    // Unreadable input, key and I/O errors, and anything unexpected, all mean the inputs could not be judged.
    return error instanceof UsageError && (error.code === 'SG_ERR_USAGE' || error.code === 'SG_ERR_CONFIG') ? ExitCode.Usage : ExitCode.Unreadable;
  }
  return exitCode;
}
