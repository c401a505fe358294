// The upgrade path of docs/deploy.md ("Upgrading"), from what an older release really wrote: fixtures/upgrade/295561f
// holds a data directory and a PostgreSQL dump (with that node's data directory) left by commit 295561f, which
// predates the deployment's record key (migration 5) and the key-wait columns (migration 6); its manifest names the
// jobs and the SHA-256 of the result packages that release served (fixtures/scripts/make-upgrade-fixture.sh made it).
// The current service starts on a copy of each and must: (1) keep the record, which verifies against the checkpoint
// the old release signed; (2) serve the old job's package byte for byte; (3) sign a new job whose checkpoint continues
// the old one, as the current `signgate sign` checks from the job ledger the old client left, and as
// `serve record verify --checkpoint` checks after it.
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { MIGRATIONS } from '../../../src/server/backends/postgres/migrations.js';
import { freshDatabase, requireDatabase, STORE_UNDER_TEST } from '../../helpers/database.js';
import { fixturePath } from '../../helpers/fixtures.js';
import {
  cliToken,
  runSigngate,
  sampleSignArgs,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from '../../helpers/service-process.js';

const FIXTURE = fixturePath('upgrade/295561f');
interface OldStore {
  /** The old service's base URL when it ran (the old client's ledger pinned its record under it). */
  baseUrl: string;
  jobs: { id: string; resultSha256: string }[];
  data: string;
  checkpoint: string;
  ledger: string;
  dump?: string;
}
const manifest = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as { commit: string; stores: { 'data-dir': OldStore; postgres: OldStore } };
interface RecordPin {
  publicKey: string;
  size: number;
  checkpoint: string;
}

const services: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(services.map((s) => stopServiceProcess(s)));
});
const temp = (what: string) => mkdtempSync(join(tmpdir(), `signgate-upgrade-${what}-`));
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const entries = (n: number) => `${n} ${n === 1 ? 'entry' : 'entries'}, chain intact`;

/** A copy of the old release's data directory, to start the current service on. */
function copyOfData(store: OldStore): string {
  const dir = join(temp('data'), 'data');
  cpSync(join(FIXTURE, store.data), dir, { recursive: true });
  return dir;
}

/** The current service on the old data (`storeArgs`: the database, if any); resolves once /readyz answers 200. */
async function startUpgraded(dataDir: string, storeArgs: string[]): Promise<{ service: ServiceProcess; config: string }> {
  const config = sandboxConfigCopy();
  const service = await startServiceProcess(['--config', config, '--data-dir', dataDir, ...storeArgs]);
  services.push(service);
  const ready = await fetch(`http://127.0.0.1:${service.port}/readyz`);
  expect(ready.status, `${await ready.text()}\n${service.stderr()}`).toBe(200);
  return { service, config };
}

/** The three checks of an upgrade: the old record verifies, the old jobs download as they were, a new job continues the record. */
async function checkUpgraded(store: OldStore, service: ServiceProcess, config: string, dataDir: string, storeArgs: string[]): Promise<void> {
  const oldCheckpoint = join(FIXTURE, store.checkpoint);
  const oldSize = Number(readFileSync(oldCheckpoint, 'utf8').split('\n')[1]);
  const shown = relative(process.cwd(), oldCheckpoint); // as the CLI names a file below its working folder
  const verify = () => runSigngate(['serve', 'record', 'verify', '--data-dir', dataDir, ...storeArgs, '--checkpoint', oldCheckpoint]);

  // (1) The record the old release wrote, against the checkpoint it signed.
  const before = await verify();
  expect(before.code, `${before.out}${before.err}`).toBe(0);
  expect(before.out).toContain(`${entries(oldSize)}, last entry ${oldSize}`);
  expect(before.out).toContain(`continues the checkpoint ${shown}`);

  // (2) The old jobs' packages, byte for byte as the old release served them.
  const token = await cliToken(['--config', config, '--data-dir', dataDir, ...storeArgs]);
  for (const job of store.jobs) {
    const r = await fetch(`${service.baseUrl}/assemblies/${job.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(r.status, `GET /assemblies/${job.id}`).toBe(200);
    expect(sha256(new Uint8Array(await r.arrayBuffer())), `result package of ${job.id}`).toBe(job.resultSha256);
  }

  // (3) A new job by the current client, with the ledger the old client left (its pin moved to this service's port):
  // the client asks for the consistency proof from the old checkpoint and refuses the job if it does not verify.
  const cache = temp('cache');
  const oldLedger = readFileSync(join(FIXTURE, store.ledger), 'utf8');
  const oldPins = Object.values((JSON.parse(oldLedger) as { recordCheckpoints: Record<string, RecordPin> }).recordCheckpoints);
  expect(oldPins.map((p) => p.checkpoint)).toEqual([readFileSync(oldCheckpoint, 'utf8')]);
  writeFileSync(join(cache, 'jobs.json'), oldLedger.replaceAll(new URL(store.baseUrl).origin, `http://127.0.0.1:${service.port}`), { mode: 0o600 });
  const signed = await runSigngate(sampleSignArgs(service.baseUrl, join(cache, 'signed')), { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: cache });
  expect(signed.code, `${signed.out}${signed.err}`).toBe(0);
  expect(`${signed.out}${signed.err}`).toContain(`were signed before in job ${store.jobs[0]!.id}`); // the old ledger was read
  const pins = Object.values(
    (JSON.parse(readFileSync(join(cache, 'jobs.json'), 'utf8')) as { recordCheckpoints: Record<string, RecordPin> }).recordCheckpoints,
  );
  expect(pins.map((p) => [p.publicKey, p.size])).toEqual([[oldPins[0]!.publicKey, oldSize + 1]]);

  const after = await verify();
  expect(after.code, `${after.out}${after.err}`).toBe(0);
  expect(after.out).toContain(`${entries(oldSize + 1)}, last entry ${oldSize + 1}`);
  expect(after.out).toContain(`continues the checkpoint ${shown}`);
}

describe.skipIf(STORE_UNDER_TEST === 'postgres')(`upgrading one node's data directory from ${manifest.commit.slice(0, 7)}`, () => {
  test('the record verifies against the old checkpoint, the old job downloads as it was, a new job continues the record', async () => {
    const store = manifest.stores['data-dir'];
    const dataDir = copyOfData(store);
    const { service, config } = await startUpgraded(dataDir, []);
    await checkUpgraded(store, service, config, dataDir, []);
  });
});

describe.skipIf(!requireDatabase())(`upgrading a PostgreSQL deployment from ${manifest.commit.slice(0, 7)}`, () => {
  test('migrations 5 and 6 are applied, the old record key becomes the deployment key, and the same three checks hold', async () => {
    const store = manifest.stores.postgres;
    const database = await freshDatabase();
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    try {
      await db.query(readFileSync(join(FIXTURE, store.dump!), 'utf8'));
      await db.query('SET search_path TO public'); // the dump cleared it for its session
      const versions = async () => (await db.query<{ version: number }>('SELECT version FROM signgate_migrations ORDER BY version')).rows.map((r) => r.version);
      const old = await versions();
      expect(old).not.toContain(5);
      expect((await db.query("SELECT to_regclass('signgate_record_key') AS t")).rows).toEqual([{ t: null }]);

      const dataDir = copyOfData(store);
      const storeArgs = ['--database', database];
      const { service, config } = await startUpgraded(dataDir, storeArgs);
      const now = await versions();
      expect(now).toEqual(MIGRATIONS.map((m) => m.version));
      expect(now.filter((v) => !old.includes(v))).toEqual(expect.arrayContaining([5, 6]));
      // The key the old node made (and its clients pinned) is recorded as the deployment's: no new key was made.
      const recorded = (await db.query<{ public_key: string }>('SELECT public_key FROM signgate_record_key')).rows;
      const pub = readFileSync(join(dataDir, 'record-key.pub'), 'utf8').trim();
      expect(recorded).toEqual([{ public_key: pub }]);
      expect(readFileSync(join(dataDir, 'record-key.pem'))).toEqual(readFileSync(join(FIXTURE, store.data, 'record-key.pem')));

      await checkUpgraded(store, service, config, dataDir, storeArgs);
    } finally {
      await db.end();
    }
  });
});
