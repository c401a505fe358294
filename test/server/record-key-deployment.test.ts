// One record key per deployment. `serve record key create` makes it once; every node named with it ("recordKey" or
// --record-key) signs with it. On PostgreSQL the first node records the key's public half, and a node with another
// key (an upgraded deployment whose nodes each made their own) or none refuses to start, naming both keys and the
// cure; it never makes a second key. Every node then answers the same GET …/record/public-key.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { createRecordKeyFile } from '../../src/server/record-key.js';
import { parseCheckpoint, parseVerifierKey } from '../../src/record/checkpoint.js';
import { freshDatabase, requireDatabase } from '../helpers/database.js';
import {
  cliToken,
  editConfig,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';

const nodes: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(nodes.map((n) => stopServiceProcess(n)));
});
const dir = () => mkdtempSync(join(tmpdir(), 'signgate-record-key-'));

async function publicKeyOf(node: ServiceProcess, token: string): Promise<string> {
  const r = await fetch(`${node.baseUrl}/record/public-key`, { headers: { authorization: `Bearer ${token}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as { publicKey: string }).publicKey;
}

test('serve record key create makes the key and its public half once, private to its owner, and never replaces it', async () => {
  const out = join(dir(), 'record-key.pem');
  const made = await runSigngate(['serve', 'record', 'key', 'create', '--out', out]);
  expect(made.code, made.err).toBe(0);
  expect(made.out.trim()).toMatch(/^signgate-record-[0-9a-f]{8}\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
  expect(readFileSync(join(out, '..', 'record-key.pub'), 'utf8').trim()).toBe(made.out.trim());
  if (process.platform !== 'win32') expect(statSync(out).mode & 0o777).toBe(0o600);
  const before = readFileSync(out, 'utf8');
  const again = await runSigngate(['serve', 'record', 'key', 'create', '--out', out]);
  expect(again.code).toBe(2);
  expect(again.err).toContain('exists: a record key is never replaced');
  expect(readFileSync(out, 'utf8')).toBe(before);
  // Two makers at once end with one key: the second finds the first's file.
  const racing = join(dir(), 'k.pem');
  expect([createRecordKeyFile(racing), createRecordKeyFile(racing)]).toEqual([true, false]);
});

test('serve record key create beside an existing .pub: refused, naming it and what to do; no key made, the .pub as it was', async () => {
  const folder = dir();
  const out = join(folder, 'record-key.pem');
  const pub = join(folder, 'record-key.pub');
  writeFileSync(pub, 'signgate-record-0badc0de+0badc0de+AAAA\n');
  const r = await runSigngate(['serve', 'record', 'key', 'create', '--out', out]);
  expect(r.code).toBe(2);
  expect(r.out).toBe('');
  expect(r.err).toContain(`${pub} exists: the public half of a record key is never replaced`);
  expect(r.err).toContain('move it aside');
  expect(r.err).toContain('choose another --out');
  expect(existsSync(out)).toBe(false);
  expect(readFileSync(pub, 'utf8')).toBe('signgate-record-0badc0de+0badc0de+AAAA\n');
  expect(readdirSync(folder).sort()).toEqual(['record-key.pub']);
});

test('record public-key and checkpoint read the configured key and write nothing', async () => {
  const d = dir();
  const key = join(d, 'deployment.pem');
  expect((await runSigngate(['serve', 'record', 'key', 'create', '--out', key])).code).toBe(0);
  const config = sandboxConfigCopy();
  editConfig(config, (raw) => ((raw as Record<string, unknown>).recordKey = key));
  const dataDir = join(d, 'data');
  const shown = await runSigngate(['serve', 'record', 'public-key', '--config', config, '--data-dir', dataDir]);
  expect(shown.code, shown.err).toBe(0);
  expect(shown.out.trim()).toBe(readFileSync(join(d, 'deployment.pub'), 'utf8').trim());
  expect(existsSync(join(dataDir, 'record-key.pem'))).toBe(false);
  expect(existsSync(join(dataDir, 'record-key.pub'))).toBe(false);
});

describe.skipIf(!requireDatabase())('nodes of one PostgreSQL deployment', () => {
  test('the first node records its key; a node without it refuses to start and makes none; with a copy of it, it starts and both answer the same key', async () => {
    const database = await freshDatabase();
    const config = sandboxConfigCopy();
    const env = { SIGNGATE_DATABASE_URL: database };
    const [a, b] = [join(dir(), 'a'), join(dir(), 'b')];
    const first = await startServiceProcess(['--config', config, '--data-dir', a], env);
    nodes.push(first);
    const db = new pg.Pool({ connectionString: database, max: 1 });
    try {
      const row = (await db.query<{ public_key: string }>('SELECT public_key FROM signgate_record_key')).rows;
      expect(row).toEqual([{ public_key: readFileSync(join(a, 'record-key.pub'), 'utf8').trim() }]);
    } finally {
      await db.end();
    }
    const refused = await runSigngate(['serve', '--config', config, '--data-dir', b, '--port', '0'], env);
    expect(refused.code).toBe(2);
    expect(refused.out + refused.err).toContain(`this node has no record key at ${join(b, 'record-key.pem')}`);
    expect(refused.out + refused.err).toContain(readFileSync(join(a, 'record-key.pub'), 'utf8').split('+').slice(0, 2).join('+'));
    expect(refused.out + refused.err).toContain('a node never makes a second key');
    expect(refused.out + refused.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(b, 'record-key.pem'))).toBe(false);

    copyFileSync(join(a, 'record-key.pem'), join(b, 'record-key.pem'));
    const second = await startServiceProcess(['--config', config, '--data-dir', b], env);
    nodes.push(second);
    const token = await cliToken(['--config', config, '--data-dir', a, '--database', database]);
    expect(await publicKeyOf(second, token)).toBe(await publicKeyOf(first, token));
  });

  test('an upgraded deployment whose nodes made a key each: the second refuses, naming both key ids', async () => {
    const database = await freshDatabase();
    const config = sandboxConfigCopy();
    const env = { SIGNGATE_DATABASE_URL: database };
    const [a, b] = [join(dir(), 'a'), join(dir(), 'b')];
    // As an older release left them: each data directory with a key of its own.
    for (const d of [a, b]) expect((await runSigngate(['serve', 'record', 'key', 'create', '--out', join(d, 'record-key.pem')])).code).toBe(0);
    const idOf = (d: string) => readFileSync(join(d, 'record-key.pub'), 'utf8').split('+').slice(0, 2).join('+');
    nodes.push(await startServiceProcess(['--config', config, '--data-dir', a], env));
    const refused = await runSigngate(['serve', '--config', config, '--data-dir', b, '--port', '0'], env);
    expect(refused.code).toBe(2);
    expect(refused.out + refused.err).toContain(`this node's record key ${idOf(b)}`);
    expect(refused.out + refused.err).toContain(`records ${idOf(a)}`);
    expect(refused.out + refused.err).toContain('One record key per deployment');
    expect(existsSync(join(b, 'record-key.pem'))).toBe(true); // its own key is the operator's to retire, not ours
  });

  test('with "recordKey" in server.json every node signs with that file, whatever its data directory', async () => {
    const database = await freshDatabase();
    const key = join(dir(), 'deployment.pem');
    expect((await runSigngate(['serve', 'record', 'key', 'create', '--out', key])).code).toBe(0);
    const config = sandboxConfigCopy();
    editConfig(config, (raw) => ((raw as Record<string, unknown>).recordKey = key));
    const env = { SIGNGATE_DATABASE_URL: database };
    const started = await Promise.all([join(dir(), 'a'), join(dir(), 'b')].map((d) => startServiceProcess(['--config', config, '--data-dir', d], env)));
    nodes.push(...started);
    const token = await cliToken(['--config', config, '--data-dir', dir(), '--database', database]);
    const keys = await Promise.all(started.map((n) => publicKeyOf(n, token)));
    expect(keys).toEqual([readFileSync(join(key, '..', 'deployment.pub'), 'utf8').trim(), readFileSync(join(key, '..', 'deployment.pub'), 'utf8').trim()]);
    // serve record checkpoint on PostgreSQL from the configuration alone (no node's data directory): signed by that key.
    const checkpoint = await runSigngate(['serve', 'record', 'checkpoint', '--config', config, '--database', database, '--data-dir', join(dir(), 'none')]);
    expect(checkpoint.code, checkpoint.err).toBe(0);
    expect(parseCheckpoint(`${checkpoint.out.trim()}\n`, parseVerifierKey(keys[0]!, 'the key'), 'the checkpoint').size).toBe(0);
    // A node pointed at a key file that is not there refuses, naming the file and the deployment's key.
    const missing = sandboxConfigCopy();
    const nowhere = join(dir(), 'nowhere.pem');
    editConfig(missing, (raw) => ((raw as Record<string, unknown>).recordKey = nowhere));
    const refused = await runSigngate(['serve', '--config', missing, '--data-dir', dir(), '--port', '0'], env);
    expect(refused.code).toBe(2);
    expect(refused.out + refused.err).toContain(`this node has no record key at ${nowhere}`);
    expect(refused.out + refused.err).toMatch(/or name it with \\?"recordKey\\?" in server\.json/);
    expect(existsSync(nowhere)).toBe(false);
    // Without a database, the same: named, and how to make one.
    const alone = await runSigngate(['serve', '--config', missing, '--data-dir', dir(), '--port', '0']);
    expect(alone.code).toBe(2);
    expect(alone.out + alone.err).toContain(`there is no record key at ${nowhere}`);
    expect(alone.out + alone.err).toContain('serve record key create');
  });
});
