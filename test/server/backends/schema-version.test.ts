// A node on a database whose schema is newer than its release knows: it runs beside the newer nodes only when every
// newer migration says nodes of its schema may still read the database (oldest_reader), with a warning at start;
// otherwise it refuses to start, naming both versions, the migrations in the way and the docs' section, and changes
// nothing in the database.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MIGRATIONS, migrate, SCHEMA_VERSION } from '../../../src/server/backends/postgres/migrations.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';
import { repoRoot } from '../../helpers/fixtures.js';
import { runSigngate, sandboxConfigCopy, startServiceProcess, stopServiceProcess } from '../../helpers/service-process.js';

test("docs/deploy.md states this release's schema and the window its migrations keep", () => {
  const deploy = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
  expect(deploy).toContain(`this release is schema ${SCHEMA_VERSION}):`);
  // A node runs only when every newer migration lets its schema read: the window starts at the highest oldestReader.
  const oldest = Math.max(...MIGRATIONS.filter((m) => m.version > 4).map((m) => m.oldestReader));
  expect(deploy).toContain(`The window now: migrations 5 to ${SCHEMA_VERSION} keep schema ${oldest} readable`);
});

describe.skipIf(!requireDatabase())('a database on a newer schema', () => {
  let database: string;
  let pool: pg.Pool;
  const config = sandboxConfigCopy();
  const nodeArgs = () => ['--config', config, '--data-dir', mkdtempSync(join(tmpdir(), 'signgate-schema-')), '--database', database];
  const versions = async () => (await pool.query<{ version: number }>('SELECT version FROM signgate_migrations ORDER BY version')).rows.map((r) => r.version);
  const newer = (version: number, name: string, oldestReader: number | null) =>
    pool.query('INSERT INTO signgate_migrations (version, name, oldest_reader) VALUES ($1, $2, $3)', [version, name, oldestReader]);

  beforeAll(async () => {
    database = await freshDatabase();
    pool = new pg.Pool({ connectionString: database, max: 2 });
    expect((await migrate(pool)).applied).toEqual(MIGRATIONS.map((m) => m.version));
  });
  afterAll(() => pool?.end());

  test('every migration this release applies says which schemas may read it; none reaches past its own version', async () => {
    const rows = (await pool.query<{ version: number; oldest_reader: number }>('SELECT version, oldest_reader FROM signgate_migrations ORDER BY version')).rows;
    expect(rows.map((r) => r.oldest_reader)).toEqual(MIGRATIONS.map((m) => m.oldestReader));
    for (const m of MIGRATIONS) expect(m.oldestReader).toBeLessThanOrEqual(m.version);
  });

  test('a newer migration that lets this schema read: the node starts, and warns naming both versions', async () => {
    await newer(SCHEMA_VERSION + 1, 'a column older nodes ignore', SCHEMA_VERSION);
    const node = await startServiceProcess(nodeArgs());
    try {
      const warning = node
        .stdout()
        .split('\n')
        .find((l) => l.includes('newer than this release'));
      expect(JSON.parse(warning!)).toMatchObject({ level: 40, schema: SCHEMA_VERSION + 1, known: SCHEMA_VERSION });
      expect((await fetch(`http://127.0.0.1:${node.port}/readyz`)).status).toBe(200);
    } finally {
      await stopServiceProcess(node, 'SIGTERM');
    }
  });

  test('one that does not, or does not say: the node refuses to start, naming both versions and the section; the database stays as it was', async () => {
    await newer(SCHEMA_VERSION + 2, 'a table older nodes misread', SCHEMA_VERSION + 2);
    await newer(SCHEMA_VERSION + 3, 'written by a release that does not say', null);
    const before = await versions();
    const r = await runSigngate(['serve', '--port', '0', ...nodeArgs()]);
    expect(r.code).toBe(3);
    const fatal = JSON.parse(r.out.split('\n').find((l) => l.includes('did not start'))!) as { code: string; msg: string; hint: string };
    expect(fatal.code).toBe('SG_ERR_SCHEMA_NEWER');
    expect(fatal.msg).toContain(`the database is on schema ${SCHEMA_VERSION + 3}, newer than this release's ${SCHEMA_VERSION}`);
    expect(fatal.msg).toContain(`${SCHEMA_VERSION + 2} ("a table older nodes misread", readable from schema ${SCHEMA_VERSION + 2} on)`);
    expect(fatal.msg).toContain(`${SCHEMA_VERSION + 3} ("written by a release that does not say", which does not say which releases may read it)`);
    expect(fatal.msg).not.toContain(`${SCHEMA_VERSION + 1} (`);
    expect(fatal.hint).toContain('docs/deploy.md#side-by-side-and-rolling-back');
    expect(await versions()).toEqual(before);
  });
});
