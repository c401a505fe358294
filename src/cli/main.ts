// The signgate command line: yargs command modules over the library; sets exit codes, never calls process.exit.
import yargs from 'yargs';
import { UsageError } from '../core/errors.js';
import { VERSION } from '../runtime/version.js';
import { looksLikeToken } from '../core/secrets.js';
import { closest, closestOption } from '../core/words.js';
import type { CommandModule } from 'yargs';
import { EXIT_CODES_HELP, ExitCode, exitCodeFor, type ExitCodeValue } from './exit-codes.js';
import { collapseFileLists } from './file-lists.js';
import { FIX_PROPERTIES } from '../report/msbuild.js';
import { formatError, formatErrorForMsbuild, processIo, type Io } from './output.js';

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
      // Only the option's own text: what follows `:` or `=` may be a secret (`-token:sgt_…`).
      throw new UsageError(`-${m[1]} is not an option: options longer than one letter take two dashes`, `Write --${long}.`);
    }
    if (!m || !ours) return arg;
    // PowerShell writes a switch's value after a colon: -deleteAfterwards:$false arrives as -deleteAfterwards:False.
    return m[2] === undefined ? `--${ours}` : `--${ours}=${/^(true|false)$/i.test(m[3]!) ? m[3]!.toLowerCase() : m[3]}`;
  });
}

/** Options whose value is a token on purpose (each warns that a process list shows it). */
const TOKEN_OPTIONS = new Set(['--access-token', '--accessToken', '--token']);

/**
 * Refuses an argument shaped like an access token (ours or a JWT) anywhere but as the value of --access-token,
 * and there too when MSBuild built the command line (`--from-msbuild`): MSBuild logs command lines and records
 * them in binary logs. The error names the argument's position, never its text.
 */
export function refuseTokenArguments(argv: readonly string[]): void {
  const fromMsbuild = argv.includes('--from-msbuild');
  const how = fromMsbuild
    ? 'Set the SIGNGATE_ACCESS_TOKEN environment variable for the build (a CI secret), or name a file that holds the token with the SigngateAccessTokenFile property; never a property or SigngateSignArguments, which MSBuild logs.'
    : 'A token on the command line shows in process lists and logs: set SIGNGATE_ACCESS_TOKEN, or put it in a file and pass --access-token-file <file>.';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, ...rest] = arg.split('=');
    if (TOKEN_OPTIONS.has(name!)) {
      const value = rest.length > 0 ? rest.join('=') : argv[i + 1];
      if (fromMsbuild && value !== undefined) throw new UsageError('--access-token is set on a command line that MSBuild built (its value is not shown)', how);
      if (rest.length === 0) i++;
      continue;
    }
    if (looksLikeToken(arg)) throw new UsageError(`argument ${i + 1} looks like an access token (not shown)`, how);
  }
}

const GENERAL_HINT = "Run 'signgate --help' for the commands (then 'signgate check --help', say, for one command's options).";

/** The running command as typed (`signgate jobs`), or undefined before one is known. */
function runningCommand(parser: ParserState): string | undefined {
  const commands = parser.getInternalMethods?.().getContext?.().fullCommands ?? [];
  return commands.length ? `signgate ${commands.map((c) => c.split(' ')[0]).join(' ')}` : undefined;
}

/** "Run 'signgate check --help' for the options." with the running command's name, else the general hint. */
function helpHint(parser: ParserState): string {
  const command = runningCommand(parser);
  return command ? `Run '${command} --help' for the options.` : GENERAL_HINT;
}

/** What the running command's parser knows; yargs' typings do not name these methods. */
interface ParserState {
  getOptions?: () => { key?: Record<string, unknown>; choices?: Record<string, readonly string[]> };
  getInternalMethods?: () => { getContext?: () => { fullCommands?: readonly string[] } };
}

/**
 * yargs' "Unknown argument(s): vendor-apis, vendorApis" once per argument (yargs names a dashed option twice, the
 * second time in camelCase), with the nearest option of the command for each (`--vendor-api for vendor-apis`).
 */
function unknownArguments(message: string, parser: ParserState, argv: readonly string[]): UsageError | undefined {
  const m = /^Unknown arguments?: (.+)$/.exec(message);
  if (!m) return undefined;
  const kebab = (w: string) => w.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
  const all = m[1]!.split(', ');
  // yargs drops the dashes: an option is shown as it was typed, a stray word as it is.
  const typed = (w: string) => argv.find((a) => /^--?[^=]/.test(a) && kebab(a.replace(/^-+/, '').split('=')[0]!) === kebab(w))?.split('=')[0];
  const words = all.filter((w, i) => all.findIndex((o) => kebab(o) === kebab(w)) === i).map((w) => typed(w) ?? w);
  const options = parser.getOptions?.().key ?? {};
  const known = Object.keys(options).filter((k) => k.length > 1 && !/[A-Z]/.test(k));
  const guesses = words.flatMap((word) => {
    const near = closestOption(word.replace(/^-+/, ''), known);
    return near ? [`--${near} for ${word}`] : [];
  });
  const hint = guesses.length ? `Did you mean ${guesses.join(', ')}? ${helpHint(parser)}` : helpHint(parser);
  return new UsageError(`Unknown argument${words.length === 1 ? '' : 's'}: ${words.join(', ')}`, hint);
}

/**
 * yargs' "Not enough non-option arguments": what the running command needs, by name, with the values it takes when
 * it takes a few (`signgate jobs needs <action>: list, status, …`).
 */
function missingArguments(message: string, parser: ParserState): UsageError | undefined {
  if (!/^Not enough non-option arguments/.test(message)) return undefined;
  const usage = parser.getInternalMethods?.().getContext?.().fullCommands?.at(-1);
  const command = runningCommand(parser);
  if (!usage || !command) return undefined;
  const required = [...usage.matchAll(/<([^>.]+)(\.\.)?>/g)].map((r) => (r[2] ? `one or more <${r[1]}>` : `<${r[1]}>`));
  const choices = parser.getOptions?.().choices ?? {};
  const values = required.map((r) => choices[r.replace(/^.*<|>$/g, '')]).find((c) => c?.length);
  const list = values ? `: ${values.slice(0, -1).join(', ')}${values.length > 1 ? ' or ' : ''}${values.at(-1)}` : '';
  return new UsageError(
    `${command} needs ${required.join(' and ')}${list}`,
    values ? `For example: ${command} ${values[0]}; '${command} --help' says what each takes.` : `Run '${command} --help'.`,
  );
}

/** `--format msbuild` (check) or `--from-msbuild` (sign, fix) anywhere before `--`: the output goes into an MSBuild log. */
export function msbuildOutput(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  const args = end >= 0 ? argv.slice(0, end) : argv;
  return args.some((a, i) => a === '--from-msbuild' || a === '--format=msbuild' || (a === '--format' && args[i + 1] === 'msbuild'));
}

type SetExit = (code: ExitCodeValue) => void;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each command has its own argument type
type CommandFactory = (io: Io, setExit: SetExit) => CommandModule<any, any>;

/**
 * Each command's module, loaded only when that command runs (or for the overall --help): `check` never loads
 * the server, `--version` loads no command at all.
 */
const COMMANDS: Record<string, () => Promise<CommandFactory>> = {
  check: async () => (await import('./commands/check-command.js')).checkCommand as unknown as CommandFactory,
  sign: async () => (await import('./commands/sign-command.js')).signCommand as unknown as CommandFactory,
  licenses: async () => (await import('./commands/jobs-command.js')).licensesCommand as unknown as CommandFactory,
  jobs: async () => (await import('./commands/jobs-command.js')).jobsCommand as unknown as CommandFactory,
  audit: async () => (await import('./commands/audit-command.js')).auditCommand as unknown as CommandFactory,
  inspect: async () => (await import('./commands/inspect-command.js')).inspectCommand as unknown as CommandFactory,
  verify: async () => (await import('./commands/verify-command.js')).verifyCommand as unknown as CommandFactory,
  token: async () => (await import('./commands/token-command.js')).tokenCommand as unknown as CommandFactory,
  resign: async () => (await import('./commands/resign-command.js')).resignCommand as unknown as CommandFactory,
  fix: async () => (await import('./commands/fix-command.js')).fixCommand as unknown as CommandFactory,
  serve: async () => (await import('./commands/serve/index.js')).serveCommand as unknown as CommandFactory,
  pack: async () => (await import('./commands/archive-command.js')).packCommand as unknown as CommandFactory,
};

/** The commands to register: the one named first on the command line, or all (help, a typo, none). */
function commandsFor(argv: readonly string[]): string[] {
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) return [];
  const first = argv.find((a) => !a.startsWith('-'));
  return first && first in COMMANDS ? [first] : Object.keys(COMMANDS);
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: readonly string[], io: Io = processIo()): Promise<ExitCodeValue> {
  let exitCode: ExitCodeValue = ExitCode.Ok;
  const setExit = (code: ExitCodeValue) => {
    exitCode = code;
  };
  // Run by MSBuild (the targets pass one of these): an error is one canonical line that keeps its hint.
  // In a build, an error names the MSBuild properties the build sets (fix's own for fix), except one about the command
  // line as typed (a mistyped option in SigngateCheckArguments), whose options stay as they were written.
  // `--format msbuild` typed by hand keeps the options' names: only the targets pass --from-msbuild.
  const properties = !argv.includes('--from-msbuild') ? null : argv.find((a) => !a.startsWith('-')) === 'fix' ? FIX_PROPERTIES : undefined;
  const typed = new WeakSet<object>();
  const format = msbuildOutput(argv)
    ? (error: unknown, verbose?: boolean) =>
        formatErrorForMsbuild(error, verbose, typeof error === 'object' && error !== null && typed.has(error) ? null : properties)
    : formatError;
  let normalized: string[];
  try {
    normalized = normalizeVendorParameters(argv);
    refuseTokenArguments(normalized);
  } catch (error) {
    if (typeof error === 'object' && error !== null) typed.add(error);
    io.err(format(error));
    return ExitCode.Usage;
  }
  const first = normalized.find((a) => !a.startsWith('-'));
  if (first && !(first in COMMANDS) && normalized.indexOf(first) === 0) {
    const near = closest(first, Object.keys(COMMANDS));
    io.err(
      `error SG_ERR_USAGE: ${JSON.stringify(first)} is not a command${near ? `; did you mean ${near}?` : ''}\n  hint: run 'signgate --help' for the commands`,
    );
    return ExitCode.Usage;
  }
  const factories = await Promise.all(commandsFor(normalized).map((name) => COMMANDS[name]!()));
  // Long file lists bypass yargs' per-argument work; the middleware below puts them back (file-lists.ts).
  const lists = collapseFileLists(normalized);
  let parser = yargs(lists.argv)
    .scriptName('signgate')
    // Stated, not looked up: yargs would search for a package.json, which a one-file executable has none of.
    .version(VERSION)
    .usage('$0 <command> [options]\n\nPre-flight, signing and verification of strong-named .NET add-in assemblies.')
    .option('verbose', { type: 'boolean', default: false, describe: 'Show the cause chain of errors' })
    // One spelling for JSON output everywhere: --json and --format json mean the same in every command.
    .middleware((args) => {
      lists.restore(args, 'inputs');
      if (args.format === 'json') args.json = true;
      else if (args.json === true && args.format === undefined) args.format = 'json';
    })
    .demandCommand(1, 'Name a command: check, sign, pack, licenses, jobs, audit, inspect, verify, token, resign or serve.')
    .strict()
    .epilog(EXIT_CODES_HELP)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    // Throwing here stops yargs before any command handler runs: a mistyped option never lets work start.
    .fail((message, error) => {
      // yargs wraps what a `coerce` throws (our UsageError) into its own YError: keep it a usage error.
      // The parser holds the running command's options by now.
      const state = parser as unknown as ParserState;
      if (error && error.name !== 'YError') throw error;
      const failure = error
        ? new UsageError(error.message, helpHint(state))
        : (unknownArguments(message, state, normalized) ?? missingArguments(message, state) ?? new UsageError(message, helpHint(state)));
      typed.add(failure);
      throw failure;
    })
    .help();
  for (const factory of new Set(factories)) parser = parser.command(factory(io, setExit));
  // yargs renders the whole help text each time a command starts, in case it fails later and wants to show
  // it; our failures print an error and a hint instead, so skip that work (a third of `check`'s start-up).
  const usage = (parser as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } })
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (usage?.cacheHelpMessage) usage.cacheHelpMessage = () => {};
  try {
    await parser.parseAsync();
  } catch (error) {
    const verbose = argv.includes('--verbose');
    io.err(format(error, verbose));
    return exitCodeFor(error);
  }
  return exitCode;
}
