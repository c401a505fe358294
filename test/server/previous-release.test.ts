// Side by side and rolling back (docs/deploy.md "Side by side and rolling back") with the real previous release: the
// one the newest upgrade fixture was made with, built from its commit by scripts/previous-release.sh (.ci/run does).
// - The configuration: that release refuses every key of server.json this one added, the docs' rollback table names
//   exactly those keys, and without them (the record key as the data directory's record-key.pem) it starts.
// - A data directory rolled back and forward again: each release serves the other's jobs byte for byte, and one
//   client's ledger (this release's `signgate sign`) accepts every checkpoint of the one record either release signs.
// - PostgreSQL, nodes of both releases on one database behind a balancer: new API nodes with an old worker, then a
//   new worker, then a rollback to the old release alone, then forward again; the same checks, and every job signed.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { freshDatabase, requireDatabase, STORE_UNDER_TEST } from '../helpers/database.js';
import { repoRoot } from '../helpers/fixtures.js';
import { previousRelease } from '../helpers/previous-release.js';
import { startBalancer } from '../helpers/proxy.js';
import {
  cliToken,
  runSigngate,
  sampleSignArgs,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.js';

const release = previousRelease();
const API = '/assembly-signing/v1.0';
const services: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(services.map((s) => stopServiceProcess(s)));
});
const temp = (what: string) => mkdtempSync(join(tmpdir(), `signgate-previous-${what}-`));
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** A node of this release (`cli` unset) or of the previous one, kept to be stopped after the tests. */
async function node(args: string[], cli?: string): Promise<ServiceProcess> {
  const service = await startServiceProcess(args, {}, undefined, cli);
  services.push(service);
  return service;
}
/** SIGTERM, as an operator stops a node (each release's graceful stop). */
const stop = (service: ServiceProcess) => stopServiceProcess(service, 'SIGTERM');

/**
 * The keys of a server configuration schema, as paths (`limits.jobRetention`, `organizations[].licenses[].keyPair`):
 * objects' own keys, array items' and what a `$ref` into the schema's `$defs` names, included.
 */
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  $ref?: string;
  $defs?: Record<string, SchemaNode>;
}
function schemaKeys(root: SchemaNode): string[] {
  const walk = (node: SchemaNode, prefix: string): string[] => {
    const target = node.$ref ? root.$defs![node.$ref.replace('#/$defs/', '')]! : node;
    if (target.items) return walk(target.items, `${prefix.replace(/\.$/, '')}[].`);
    return Object.entries(target.properties ?? {}).flatMap(([key, sub]) => [`${prefix}${key}`, ...walk(sub, `${prefix}${key}.`)]);
  };
  return walk(root, '');
}
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** One `signgate sign` of the sample add-in (this release's client) through `baseUrl`, with the ledger in `cache`. */
async function sign(baseUrl: string, token: string, cache: string, run: string): Promise<string> {
  const r = await runSigngate([...sampleSignArgs(baseUrl, join(cache, `signed-${run}`)), '--comment', run], {
    SIGNGATE_ACCESS_TOKEN: token,
    SIGNGATE_CACHE_DIR: cache,
  });
  expect(r.code, `sign ${run}:\n${r.out}${r.err}`).toBe(0);
  const job = /uploaded 1 file\(s\) as job ([0-9a-f-]{36})/.exec(r.out + r.err);
  expect(job, `${r.out}${r.err}`).not.toBeNull();
  return job![1]!;
}
/** The record pins of the ledger in `cache`: one per service address. */
const pins = (cache: string) =>
  Object.entries((readJson(join(cache, 'jobs.json')) as { recordCheckpoints: Record<string, { publicKey: string; size: number }> }).recordCheckpoints);

/** Each job's result package through `baseUrl`, by its SHA-256. */
async function packages(baseUrl: string, token: string, jobs: string[]): Promise<string[]> {
  return Promise.all(
    jobs.map(async (id) => {
      const r = await fetch(`${baseUrl}/assemblies/${id}`, { headers: { authorization: `Bearer ${token}` } });
      expect(r.status, `GET /assemblies/${id}`).toBe(200);
      return sha256(new Uint8Array(await r.arrayBuffer()));
    }),
  );
}

/** The record verified by this release's and by the previous release's `serve record verify`. */
async function recordVerifies(storeArgs: string[], size: number): Promise<void> {
  const intact = `${size} entries, chain intact`;
  const now = await runSigngate(['serve', 'record', 'verify', ...storeArgs]);
  expect(now.code, `${now.out}${now.err}`).toBe(0);
  expect(now.out).toContain(intact);
  const r = await runSigngate(['serve', 'record', 'verify', ...storeArgs], {}, undefined, release!.cli);
  expect(r.code, `${r.out}${r.err}`).toBe(0);
  expect(r.out).toContain(intact);
}

describe.skipIf(!release || STORE_UNDER_TEST === 'postgres')(`server.json for a rollback to ${release?.short}`, () => {
  test("the previous release refuses each key this one added, naming them all; docs/deploy.md's rollback table names exactly those; without them it starts", async () => {
    const added = schemaKeys(readJson(join(repoRoot, 'schemas/server-config.schema.json'))).filter(
      (k) => !schemaKeys(readJson(join(release!.dir, 'schemas/server-config.schema.json'))).includes(k),
    );
    // A valid value of each (a new key of the schema must be added here, and to the docs' table).
    const values: Record<string, unknown> = {
      recordKey: 'record-key.pem',
      logLevel: 'info',
      metrics: { enabled: false },
      'metrics.enabled': undefined,
      'metrics.listen': undefined,
      'limits.keyWaitSeconds': 60,
      'limits.jobRetention': '30d',
    };
    expect(added.sort()).toEqual(Object.keys(values).sort());
    const top = added.filter((k) => values[k] !== undefined);

    // The docs' table: its first column, under "Rolling back".
    const deploy = readFileSync(join(repoRoot, 'docs/deploy.md'), 'utf8');
    const section = deploy.slice(deploy.indexOf('**Rolling back:**'), deploy.indexOf('## Changing the configuration while it runs'));
    const table = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    expect(table.sort()).toEqual([...top].sort());
    expect(section).toContain(release!.short);

    const dir = temp('config');
    const config = sandboxConfigCopy();
    const raw = readJson(config);
    const keyFile = join(dir, 'record-key.pem');
    expect((await runSigngate(['serve', 'record', 'key', 'create', '--out', keyFile])).code).toBe(0);
    raw.recordKey = keyFile;
    raw.logLevel = 'info';
    raw.metrics = { enabled: false };
    raw.limits = { ...raw.limits, keyWaitSeconds: 60, jobRetention: '30d' };
    const full = join(dir, 'server.json');
    writeFileSync(full, JSON.stringify(raw, null, 2));

    // This release takes it; the previous one refuses it, naming every key it does not know.
    const now = await node(['--config', full, '--data-dir', join(dir, 'new-data')]);
    expect((await fetch(`http://127.0.0.1:${now.port}/readyz`)).status).toBe(200);
    await stop(now);
    const refused = await runSigngate(['serve', '--config', full, '--data-dir', join(dir, 'old-data'), '--port', '0'], {}, undefined, release!.cli);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain('SG_ERR_CONFIG');
    for (const key of top) {
      const [parent, own] = key.includes('.') ? key.split('.') : ['(top level)', key];
      expect(refused.err).toContain(`unknown key "${own}" in ${parent}`);
    }

    // As the table says: without them, and the record key as the data directory's record-key.pem (mode 0600).
    for (const key of top) {
      const [parent, own] = key.includes('.') ? key.split('.') : [undefined, key];
      delete (parent ? raw[parent] : raw)[own!];
    }
    writeFileSync(full, JSON.stringify(raw, null, 2));
    const oldData = join(dir, 'old-data');
    mkdirSync(oldData, { recursive: true });
    copyFileSync(keyFile, join(oldData, 'record-key.pem'));
    const old = await node(['--config', full, '--data-dir', oldData], release!.cli);
    expect((await fetch(`http://127.0.0.1:${old.port}/readyz`)).status).toBe(200);
    const publicKey = await runSigngate(['serve', 'record', 'public-key', '--data-dir', oldData], {}, undefined, release!.cli);
    expect(publicKey.out.trim()).toBe(readFileSync(`${keyFile.slice(0, -'.pem'.length)}.pub`, 'utf8').trim());
    await stop(old);
  });
});

describe.skipIf(!release || STORE_UNDER_TEST === 'postgres')(`a data directory rolled back to ${release?.short} and forward again`, () => {
  test("each release serves the other's jobs byte for byte; one client's ledger accepts every checkpoint of either", async () => {
    const data = join(temp('data'), 'data');
    const config = sandboxConfigCopy();
    const storeArgs = ['--data-dir', data];
    const cache = temp('cache');
    const token = await cliToken(['--config', config, ...storeArgs]);

    const origin = (s: ServiceProcess) => `http://127.0.0.1:${s.port}`;
    // One address for the client whichever release answers, as a service's name stays when its release changes.
    let now = await node(['--config', config, ...storeArgs]);
    const front = await startBalancer([origin(now)], API);
    try {
      // This release first: one job, the record key made in the data directory.
      const jobs = [await sign(front.baseUrl, token, cache, 'new-1')];
      const served = await packages(front.baseUrl, token, jobs);
      await stop(now);

      // Rolled back: the previous release serves that job as it was and signs on the same record with the same key.
      const old = await node(['--config', config, ...storeArgs], release!.cli);
      front.targets = [origin(old)];
      expect(await packages(front.baseUrl, token, jobs)).toEqual(served);
      jobs.push(await sign(front.baseUrl, token, cache, 'old-1'), await sign(front.baseUrl, token, cache, 'old-2'));
      served.push(...(await packages(front.baseUrl, token, jobs.slice(1))));
      await stop(old);

      // Forward again: this release reads on past the entries the old one appended (its stored tree was one leaf).
      now = await node(['--config', config, ...storeArgs]);
      front.targets = [origin(now)];
      expect(await packages(front.baseUrl, token, jobs)).toEqual(served);
      jobs.push(await sign(front.baseUrl, token, cache, 'new-2'));
      await stop(now);
      await recordVerifies(storeArgs, 4);
      // One address, one pin: each checkpoint, whichever release signed it, extended the one the client held.
      expect(pins(cache).map(([url, p]) => [url, p.size])).toEqual([[front.baseUrl, 4]]);
    } finally {
      await front.close();
    }
  });
});

describe.skipIf(!release || STORE_UNDER_TEST !== 'postgres' || !requireDatabase())(
  `nodes of ${release?.short} and of this release on one PostgreSQL database`,
  () => {
    test('side by side behind one balancer, rolled back to the old release alone, then forward again: every job signed, one ledger, one record', async () => {
      const database = await freshDatabase();
      const data = join(temp('data'), 'data'); // job files and the record key, shared by every node
      const config = sandboxConfigCopy();
      const storeArgs = ['--data-dir', data, '--database', database];
      const as = (role: string) => ['--config', config, ...storeArgs, '--role', role];
      const origin = (s: ServiceProcess) => `http://127.0.0.1:${s.port}`;
      const cache = temp('cache');

      // The upgrade under way: this release's API node first (it migrates and makes the deployment's record key), the
      // old release's API node and its worker beside it.
      const newApi = await node(as('api'));
      const token = await cliToken(['--config', config, ...storeArgs]);
      const oldApi = await node(as('api'), release!.cli);
      let oldWorker = await node(as('worker'), release!.cli);
      const balancer = await startBalancer([origin(newApi), origin(oldApi)], API);
      try {
        const jobs: string[] = [];
        for (const run of ['a', 'b', 'c']) jobs.push(await sign(balancer.baseUrl, token, cache, `side-by-side-old-worker-${run}`));
        expect(balancer.sent.get(origin(newApi))).toBeGreaterThan(0);
        expect(balancer.sent.get(origin(oldApi))).toBeGreaterThan(0);

        // The worker upgraded: this release's worker signs what either API node took.
        const newWorker = await node(as('worker'));
        await stop(oldWorker);
        for (const run of ['a', 'b']) jobs.push(await sign(balancer.baseUrl, token, cache, `side-by-side-new-worker-${run}`));
        const served = await packages(balancer.baseUrl, token, jobs);

        // Rolled back: this release's nodes stopped, the old release alone serves every job as it was and signs on.
        balancer.targets = [origin(oldApi)];
        await Promise.all([stop(newApi), stop(newWorker)]);
        oldWorker = await node(as('worker'), release!.cli);
        expect(await packages(balancer.baseUrl, token, jobs)).toEqual(served);
        jobs.push(await sign(balancer.baseUrl, token, cache, 'rolled-back'));
        served.push(...(await packages(balancer.baseUrl, token, jobs.slice(-1))));

        // Forward again, one node of each release behind the balancer.
        const again = await node(as('all'));
        balancer.targets = [origin(again), origin(oldApi)];
        jobs.push(await sign(balancer.baseUrl, token, cache, 'forward-again'));
        expect(await packages(balancer.baseUrl, token, jobs.slice(0, -1))).toEqual(served);
        await Promise.all([stop(again), stop(oldApi), stop(oldWorker)]);

        await recordVerifies(storeArgs, jobs.length);
        // One address, one pin: every checkpoint either release signed was a consistent extension of the one before.
        expect(pins(cache).map(([url, p]) => [url, p.size])).toEqual([[balancer.baseUrl, jobs.length]]);
      } finally {
        await balancer.close();
      }
    });
  },
);
