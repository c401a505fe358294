// The PostgreSQL database of a deployment: its connection (the schema migrated first) and how it is named in
// messages (never with its password).
import pg from 'pg';
import { UsageError } from '../../../core/errors.js';
import { migrate, SchemaTooNew } from './migrations.js';

/** How long a lease lasts without a heartbeat, by default: a dead worker's job is taken over after this. */
export const DEFAULT_LEASE_MS = 30_000;

/** A connection string for messages: never its password. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    // `postgres:user:PW@host/db` (no //) parses with no host and the password in its path: show the scheme only.
    if (!u.host) return `${u.protocol} (rest not shown)`;
    return `${u.protocol}//${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}${u.pathname}`;
  } catch {
    return '(an unreadable connection string)';
  }
}

/**
 * A pool on the database with the schema migrated; a clear error when it cannot be reached. `newerSchema` hears of a
 * database on a newer schema that this release may still run on (side by side); one it may not run on is refused.
 * @throws SchemaTooNew (SG_ERR_SCHEMA_NEWER) for a newer schema that does not let this release run on it
 */
export async function openDatabase(database: string, newerSchema: (version: number) => void = () => {}): Promise<pg.Pool> {
  if (!/^postgres(ql)?:\/\//.test(database))
    throw new UsageError(`--database ${describeDatabase(database)} is not a PostgreSQL connection string`, 'Pass postgres://user:password@host:5432/database.');
  const pool = new pg.Pool({ connectionString: database, max: 10 });
  pool.on('error', () => {}); // an idle client's lost connection: the next query opens another
  try {
    const outcome = await migrate(pool);
    if (outcome.newerSchema !== undefined) newerSchema(outcome.newerSchema);
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof SchemaTooNew) throw error;
    throw new UsageError(
      `cannot use the database ${describeDatabase(database)}: ${(error as Error).message}`,
      'Check --database (or SIGNGATE_DATABASE_URL): the server must run and the role must be allowed to create tables.',
      'SG_ERR_CONFIG',
    );
  }
  return pool;
}
