// Where command output goes, and its colours: none with NO_COLOR or when stdout is not a terminal.
import { Chalk, type ChalkInstance } from 'chalk';
import { isSignGateError, UsageError } from '../core/errors.js';
import { maskRemembered, maskSecrets } from '../core/secrets.js';
import { inBuildWords, oneLine, origin } from '../report/msbuild.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly color: ChalkInstance;
}

export function colorLevel(stream: NodeJS.WriteStream = process.stdout): 0 | 1 | 2 | 3 {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR === '0' || env.FORCE_COLOR === 'false' ? 0 : 1;
  return stream.isTTY ? 1 : 0;
}

export function processIo(): Io {
  return {
    // The last guard: the access token this process holds never reaches the terminal, whatever path text took.
    out: (text) => void process.stdout.write(maskRemembered(text.endsWith('\n') ? text : `${text}\n`)),
    err: (text) => void process.stderr.write(maskRemembered(text.endsWith('\n') ? text : `${text}\n`)),
    color: new Chalk({ level: colorLevel() }),
  };
}

/**
 * One line for an error: its code, its message and, for usage errors, the hint. Never a stack unless verbose.
 * Secrets are masked: a cause may quote what a service sent (a JSON parser quotes the text it choked on).
 */
export function formatError(error: unknown, verbose = false): string {
  const { head, details, stack } = errorParts(error, verbose);
  return maskSecrets([head, ...details.map((d) => `  ${d}`), ...(stack ? [stack] : [])].join('\n'));
}

/**
 * The same for a command run by MSBuild (`--format msbuild`, `--from-msbuild`): one line in MSBuild's canonical
 * format, `origin : error CODE: message; hint: …`, whose origin is the file the error is about (a key file, the token
 * file, a record key) when it names one, else `signgate`, so that the error list shows it on that file. Exec makes
 * every other line of a tool's output a message of its own, which the error list and the build's summary leave out:
 * the hint goes on the error's line. Its words name the MSBuild properties a build sets, never the command line's
 * options (`properties`: fix's own, for `fix`; null: an error about the command line as typed, whose words stay).
 */
export function formatErrorForMsbuild(error: unknown, verbose = false, properties?: Readonly<Record<string, string>> | null): string {
  const { head, details, stack } = errorParts(error, verbose);
  const file = isSignGateError(error) ? error.file : undefined;
  const text = [head, ...details].join('; ');
  return maskSecrets([oneLine(`${origin(file)} : ${properties === null ? text : inBuildWords(text, properties)}`), ...(stack ? [stack] : [])].join('\n'));
}

/** An error's line (`error CODE: message`), the hint and causes said after it, and (verbose) an internal error's stack. */
function errorParts(error: unknown, verbose: boolean): { head: string; details: string[]; stack?: string } {
  if (isSignGateError(error)) {
    const details: string[] = [];
    if (error instanceof UsageError && error.hint) details.push(`hint: ${error.hint}`);
    if (verbose) {
      let cause = (error as Error).cause;
      while (cause) {
        details.push(`cause: ${cause instanceof Error ? cause.message : String(cause)}`);
        cause = cause instanceof Error ? cause.cause : undefined;
      }
    }
    return { head: `error ${error.code}: ${error.message}`, details };
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return { head: `error SG_ERR_INTERNAL: ${e.message}`, details: [], ...(verbose && e.stack ? { stack: e.stack } : {}) };
}
