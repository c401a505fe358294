// Exit codes shared by every command; README and --help list them.
import { UsageError } from '../core/errors.js';

export const ExitCode = {
  /** Everything is as it should be. */
  Ok: 0,
  /** The tool ran and found something wrong (a finding, an invalid signature, a refused operation). */
  Findings: 1,
  /** The command line or configuration is wrong. */
  Usage: 2,
  /** An input could not be read (missing, unreadable, not an assembly), or a network or service error. */
  Unreadable: 3,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const EXIT_CODES_HELP = [
  'Exit codes:',
  '  0  all good',
  '  1  findings (an invalid or missing signature, a refused operation)',
  '  2  usage or configuration error',
  '  3  unreadable input (missing file, not a .NET assembly, malformed), or a network or service error',
].join('\n');

/** The worst of several exit codes, where unreadable input outranks findings. */
export function worstExitCode(codes: Iterable<ExitCodeValue>): ExitCodeValue {
  let worst: ExitCodeValue = ExitCode.Ok;
  const rank = (c: ExitCodeValue) => [ExitCode.Ok, ExitCode.Findings, ExitCode.Unreadable, ExitCode.Usage].indexOf(c);
  for (const c of codes) if (rank(c) > rank(worst)) worst = c;
  return worst;
}

/** The exit code of a command that failed with `error`: 2 for a usage or configuration error, else 3. */
export function exitCodeFor(error: unknown): ExitCodeValue {
  // Unreadable input, key and I/O errors, and anything unexpected, all mean the inputs could not be judged.
  return error instanceof UsageError && (error.code === 'SG_ERR_USAGE' || error.code === 'SG_ERR_CONFIG') ? ExitCode.Usage : ExitCode.Unreadable;
}
