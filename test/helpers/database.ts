// PostgreSQL for the tests: SIGNGATE_TEST_DATABASE_URL names a role that may create databases (.ci/run makes
// one). Every test service gets a database of its own. SIGNGATE_TEST_STORE=postgres runs the service tests
// (startServer) on PostgreSQL instead of the data directory.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { test } from 'vitest';

export const TEST_DATABASE_URL = process.env.SIGNGATE_TEST_DATABASE_URL || undefined;
export const STORE_UNDER_TEST: 'postgres' | 'data-dir' = process.env.SIGNGATE_TEST_STORE === 'postgres' ? 'postgres' : 'data-dir';

/** Throws in CI without a database (.ci/run starts one); outside CI the caller skips. */
export function requireDatabase(): boolean {
  if (process.env.CI && !TEST_DATABASE_URL)
    throw new Error('CI is set but SIGNGATE_TEST_DATABASE_URL is not: .ci/run must install and start PostgreSQL and export it');
  return TEST_DATABASE_URL !== undefined;
}

if (STORE_UNDER_TEST === 'postgres' && !TEST_DATABASE_URL) throw new Error('SIGNGATE_TEST_STORE=postgres needs SIGNGATE_TEST_DATABASE_URL');

/** The URL of database `name` on the test server, created when missing. */
export async function testDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } catch (error) {
    if ((error as { code?: string }).code !== '42P04') throw error; // exists already
  } finally {
    await admin.end();
  }
  const url = new URL(TEST_DATABASE_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One database per data directory: a service restarted on the same folder finds its jobs again. */
export function databaseFor(dataDir: string): Promise<string> {
  return testDatabase(`signgate_t_${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`);
}

/** A database of its own for one test. */
export function freshDatabase(): Promise<string> {
  return testDatabase(`signgate_t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`);
}

/**
 * A test of the data directory's own files (tokens.json, job.json, a service process on a data directory): run
 * with the data-directory store only. PostgreSQL's counterparts are in test/server/postgres-*.test.ts.
 */
export const dataDirOnly = test.skipIf(STORE_UNDER_TEST === 'postgres');
