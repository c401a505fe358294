// Where command output goes, and its colours: none with NO_COLOR or when stdout is not a terminal.
import { Chalk, type ChalkInstance } from 'chalk';
import { isSignGateError, UsageError } from '../core/errors.js';
import { maskRemembered, maskSecrets } from '../core/secrets.js';

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
  return maskSecrets(formatErrorLines(error, verbose));
}

function formatErrorLines(error: unknown, verbose: boolean): string {
  if (isSignGateError(error)) {
    const lines = [`error ${error.code}: ${error.message}`];
    if (error instanceof UsageError && error.hint) lines.push(`  hint: ${error.hint}`);
    if (verbose) {
      let cause = (error as Error).cause;
      while (cause) {
        lines.push(`  cause: ${cause instanceof Error ? cause.message : String(cause)}`);
        cause = cause instanceof Error ? cause.cause : undefined;
      }
    }
    return lines.join('\n');
  }
  const e = error instanceof Error ? error : new Error(String(error));
  return `error SG_ERR_INTERNAL: ${e.message}${verbose && e.stack ? `\n${e.stack}` : ''}`;
}
