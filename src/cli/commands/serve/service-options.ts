// What the serve commands share: the data folder they default to, the database they may name instead (--database,
// --database-file, SIGNGATE_DATABASE_URL), the token store either holds, and a path as a word to paste.
import { resolve } from 'node:path';
import { UsageError } from '../../../core/errors.js';
import { openTokens } from '../../../server/backends/index.js';
import type { TokenKeeper } from '../../../server/ports.js';
import { readFirstLine } from '../../../workflows/access-token.js';

/**
 * The data folder of every serve command that takes --data-dir (serve, token create and revoke, record): one default,
 * so that a token made without --data-dir is one the service started without it knows (from the same folder).
 */
export const DEFAULT_DATA_DIR = 'signgate-data';

/** A path as one word of a command line: quoted when it holds a space or a character a shell would act on. */
export function commandWord(word: string): string {
  if (/^[\w@%+=:,./\\-]+$/.test(word)) return word;
  return /["$`]/.test(word) ? `'${word.replace(/'/g, `'\\''`)}'` : `"${word}"`;
}

/** The token store of --database, or of the data directory; `close` ends a database connection. */
export async function tokenKeeper(args: { dataDir: string; database?: string }): Promise<{ keeper: TokenKeeper; close: () => Promise<void> }> {
  return openTokens({ dataDir: resolve(args.dataDir), database: args.database });
}

/** --database, with --database-file and SIGNGATE_DATABASE_URL beside it (a password stays out of the process list). */
export const databaseOption = {
  type: 'string',
  describe:
    'PostgreSQL connection string: jobs, queue and tokens in the database for several nodes (a password here shows in process lists: prefer --database-file or $SIGNGATE_DATABASE_URL)',
} as const;
export const databaseFileOption = {
  type: 'string',
  describe: 'A file whose first line is the PostgreSQL connection string (keep it readable by the service only)',
} as const;

/**
 * The connection string from --database, the first line of --database-file, or SIGNGATE_DATABASE_URL.
 * @throws UsageError for both options at once, or a file that cannot be read or is empty (its content never shown)
 */
export function databaseOf(args: { database?: string; databaseFile?: string }): string | undefined {
  if (args.database !== undefined && args.databaseFile !== undefined)
    throw new UsageError(
      '--database and --database-file are both given',
      'Pass one of them (prefer --database-file: a password on the command line shows in process lists).',
    );
  if (args.databaseFile !== undefined) {
    return readFirstLine(args.databaseFile, 'Put the connection string (postgres://user:password@host:5432/database) on the first line of the file.');
  }
  return args.database ?? (process.env.SIGNGATE_DATABASE_URL || undefined);
}
