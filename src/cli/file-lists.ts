// Long file lists past yargs. `signgate inspect $(find …)` hands the command line thousands of files; yargs spends
// tens of microseconds on each positional (it parses them twice, coercing and alias-checking every one), which
// for the 2,629 files of the Mono corpus was a tenth of the whole run. Runs of plain arguments are therefore
// replaced by one placeholder each before yargs parses, and put back into the positional list afterwards.

/**
 * Commands whose options each take at most one value: in them a plain argument that follows another plain
 * argument is always a positional (in `check`, `--key a.snk b.snk` gives --key two values).
 */
const FILE_LIST_COMMANDS: ReadonlySet<string> = new Set(['inspect', 'verify']);

/** Runs shorter than this are left to yargs. */
const MIN_RUN = 8;

/** A placeholder no real argument can equal: the command line of a process cannot hold a NUL character. */
const PLACEHOLDER = '\u0000signgate-files:';

export interface FileLists {
  /** The arguments for yargs, each long run of plain arguments replaced by a placeholder. */
  readonly argv: string[];
  /** Puts the runs back into the positional `key`'s values, in their places. */
  restore(args: Record<string, unknown>, key: string): void;
}

/**
 * Replaces runs of plain arguments after the command name with placeholders, for the commands in FILE_LIST_COMMANDS.
 * A plain argument right after an option stays (it may be the option's value), as does everything after `--`.
 */
export function collapseFileLists(argv: readonly string[]): FileLists {
  const runs: string[][] = [];
  const command = argv.findIndex((a) => !a.startsWith('-'));
  const keep = (): FileLists => ({ argv: [...argv], restore: () => {} });
  if (command < 0 || !FILE_LIST_COMMANDS.has(argv[command]!)) return keep();
  const out = argv.slice(0, command + 1);
  let i = command + 1;
  while (i < argv.length) {
    const arg = argv[i]!;
    if (arg === '--') break;
    const free = !arg.startsWith('-') && (i === command + 1 || !argv[i - 1]!.startsWith('-'));
    if (!free) {
      out.push(arg);
      i++;
      continue;
    }
    let end = i;
    while (end < argv.length && argv[end] !== '--' && !argv[end]!.startsWith('-')) end++;
    if (end - i < MIN_RUN) out.push(...argv.slice(i, end));
    else {
      out.push(`${PLACEHOLDER}${runs.length}`);
      runs.push(argv.slice(i, end));
    }
    i = end;
  }
  out.push(...argv.slice(i));
  if (runs.length === 0) return keep();
  return {
    argv: out,
    restore: (args, key) => {
      const values = args[key];
      if (!Array.isArray(values)) return;
      args[key] = values.flatMap((v: unknown) =>
        typeof v === 'string' && v.startsWith(PLACEHOLDER) ? (runs[Number(v.slice(PLACEHOLDER.length))] ?? [v]) : [v],
      );
    },
  };
}
