import { CHECK_POOL_THRESHOLD, SCAN_POOL_THRESHOLD } from '../../workflows/pool-thresholds.js';
import { numberOption } from '../options.js';

// Options every command has.
export interface CommonArgs {
  verbose: boolean;
}

/** --threads of the commands that scan many files (inspect, verify). */
export const threadsOption = {
  // A string, so that a wrong value is shown as it was typed (yargs turns a non-number into NaN).
  type: 'string',
  coerce: numberOption('threads', { integer: true, min: 0, max: 256 }),
  describe: `Worker threads that read the files beside this one (default: from ${SCAN_POOL_THRESHOLD} files on, one per core idle now but this one's; 0: none)`,
} as const;

/** --threads of check and audit: the same option, with their own threshold. */
export const checkThreadsOption = {
  ...threadsOption,
  describe: `Worker threads for the per-file work (default: one per idle core from ${CHECK_POOL_THRESHOLD} files on, if two are idle; 0: none)`,
} as const;

/**
 * The strings of an array option; yargs gives `[undefined]` for an absent variadic positional. Here, not in
 * check.ts: a command that needs it (fix) would otherwise load the check command and all it imports at start.
 */
export function strings(values: readonly unknown[] | undefined): string[] | undefined {
  const list = values?.filter((v): v is string => typeof v === 'string' && v !== '');
  return list?.length ? list : undefined;
}
