// Several nodes on one PostgreSQL database and one data directory, as child processes the way an operator runs
// them: three API processes (--role api) and two signing workers (--role worker). The job limit holds across
// the API processes, every job is signed once, a worker killed mid-job is replaced by the other, an API process
// killed mid-upload leaves no job and no file, and tokens made or revoked through the CLI hold on every node.
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readZip } from '../../../src/zip/read-zip.js';
import { MIGRATIONS } from '../../../src/server/backends/postgres/migrations.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';
import { fixture, hasMono, runMono } from '../../helpers/fixtures.js';
import { uploadForm } from '../../helpers/server.js';
import { waitFor, waitUntil } from '../../helpers/wait.js';
import {
  cliToken,
  editConfig,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  waitJobFinished,
  type ServiceProcess,
} from '../../helpers/service-process.js';

const LEASE_S = 2;
const addin = fixture('findings/passing/FindingAddin.dll');

describe.skipIf(!requireDatabase())('three API and two worker processes on one database', () => {
  let database: string;
  let dataDir: string;
  let config: string;
  let db: pg.Pool;
  const apis: ServiceProcess[] = [];
  const workers: ServiceProcess[] = [];
  let token: string;
  const env = () => ({ SIGNGATE_DATABASE_URL: database });
  const nodeArgs = (role: string) => ['--config', config, '--data-dir', dataDir, '--role', role, '--lease-timeout', String(LEASE_S)];
  const call = (node: ServiceProcess, path: string, init: RequestInit = {}, t = token) =>
    fetch(`${node.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${t}` } });

  const waitAllFinished = () =>
    waitFor(
      'every job in the database to be finished',
      async () => {
        const rows = (await db.query(`SELECT id::text, state FROM signgate_jobs WHERE state <> 'finished'`)).rows;
        return rows.length === 0 ? { done: true, value: undefined } : { done: false, seen: rows };
      },
      { intervalMs: 100 },
    );

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'signgate-cluster-'));
    config = sandboxConfigCopy();
    editConfig(config, (raw) => (raw.limits = { maxJobsPerOrganization: 20 }));
    db = new pg.Pool({ connectionString: database, max: 2 });
    // Started together: the migrations run once, under their lock.
    apis.push(...(await Promise.all([0, 1, 2].map(() => startServiceProcess(nodeArgs('api'), env())))));
    workers.push(...(await Promise.all([0, 1].map(() => startServiceProcess(nodeArgs('worker'), env())))));
    token = await cliToken(['--config', config, '--data-dir', dataDir, '--database', database]);
  });

  afterAll(async () => {
    await Promise.all([...apis, ...workers].map((p) => stopServiceProcess(p)));
    await db?.end();
  });

  test('the schema was migrated once; every node is ready; a worker node serves no API, and the balancer check says so', async () => {
    expect((await db.query('SELECT version FROM signgate_migrations ORDER BY version')).rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    for (const node of [...apis, ...workers]) expect((await fetch(`http://127.0.0.1:${node.port}/readyz`)).status).toBe(200);
    // The balancer's check: 200 on the API nodes only.
    for (const node of apis) expect((await fetch(`http://127.0.0.1:${node.port}/readyz/api`)).status).toBe(200);
    for (const node of workers) {
      const check = await fetch(`http://127.0.0.1:${node.port}/readyz/api`);
      expect(check.status).toBe(503);
      expect(((await check.json()) as { reason: string }).reason).toBe('role');
    }
    expect((await (await fetch(`http://127.0.0.1:${workers[0]!.port}/healthz`)).json()).role).toBe('worker');
    expect((await call(workers[0]!, '/licenses')).status).toBe(404);
  });

  test('a token made through the CLI works on every API process at once; revoked, every one refuses it within 2 s', async () => {
    const fresh = await cliToken(['--config', config, '--data-dir', dataDir], 'other-org', 'alice').catch(() => '');
    expect(fresh).not.toBe(''); // the data directory's store is another store: this token is unknown to the database
    expect((await call(apis[0]!, '/licenses', {}, fresh)).status).toBe(401);
    const t = await cliToken(['--config', config, '--data-dir', dataDir, '--database', database], 'other-org', 'alice');
    for (const node of apis) expect((await call(node, '/licenses', {}, t)).status).toBe(200);
    const r = await runSigngate(['serve', 'token', 'revoke', '--data-dir', dataDir, '--token', t], env());
    expect(r.code, r.err).toBe(0);
    const start = Date.now();
    for (const node of apis) {
      while ((await call(node, '/licenses', {}, t)).status !== 401) {
        expect(Date.now() - start).toBeLessThan(2000);
        await new Promise((res) => setTimeout(res, 50));
      }
    }
    expect(
      (await db.query('SELECT hash FROM signgate_tokens')).rows.every((row: { hash: string }) => /^[0-9a-f]{64}$/.test(row.hash) && !t.includes(row.hash)),
    ).toBe(true);
  });

  test('50 concurrent uploads over the API processes against a limit of 20: exactly 20 jobs, 30 refusals; each signed once, sn -vf accepts it', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(apis[i % 3]!, '/assemblies', { method: 'POST', body: uploadForm([{ name: 'FindingAddin.dll', bytes: addin }]) }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBe(20);
    expect(statuses.filter((s) => s === 409).length).toBe(30);
    const ids: string[] = [];
    for (const r of responses) {
      const body = await r.json();
      if (r.status === 201) ids.push(body.id);
      else expect(body.detail).toContain('keeps 20 jobs');
    }
    expect((await (await call(apis[1]!, '/assemblies')).json()).length).toBe(20);
    // Every job finishes, seen from any API process.
    for (const [i, id] of ids.entries()) {
      const status = await waitJobFinished(apis[i % 3]!.baseUrl, token, id);
      expect(status.assemblies[0].fileProcessingState).toBe('Signed');
    }
    // Signed once: one lease taken per job, one "job processed" in the workers' logs, one result package.
    const rows = (await db.query(`SELECT id::text, attempts, state, result_file FROM signgate_jobs WHERE organization = 'sandbox'`)).rows;
    expect(rows.length).toBe(20);
    expect(rows.every((r) => r.attempts === 1 && r.state === 'finished')).toBe(true);
    const processed = workers.map((w) =>
      w
        .stdout()
        .split('\n')
        .filter((l) => l.includes('"job processed"'))
        .map((l) => JSON.parse(l).job as string),
    );
    expect(processed.flat().sort()).toEqual([...ids].sort());
    expect(
      processed.every((p) => p.length > 0),
      'both workers took jobs',
    ).toBe(true);
    for (const id of ids) expect(readdirSync(join(dataDir, 'jobs', 'sandbox', id)).filter((n) => n.endsWith('.zip')).length).toBe(1);
    const sample = await readZip(new Uint8Array(await (await call(apis[2]!, `/assemblies/${ids[0]}`)).arrayBuffer()));
    const signed = sample.find((e) => e.name === 'FindingAddin.dll')!;
    expect(Buffer.compare(signed.bytes, Buffer.from(addin))).not.toBe(0);
    if (hasMono) {
      const path = join(dataDir, 'check-FindingAddin.dll');
      writeFileSync(path, signed.bytes);
      expect(runMono('sn', ['-vf', path]).stdout).toContain('is strongnamed');
    }
    // Deleting through one API process frees a slot for another.
    expect((await call(apis[0]!, `/assemblies/${ids[0]}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(apis[1]!, `/assemblies/${ids[0]}/status`)).status).toBe(404);
    expect(existsSync(join(dataDir, 'jobs', 'sandbox', ids[0]!))).toBe(false);
    const again = await call(apis[2]!, '/assemblies', { method: 'POST', body: uploadForm([{ name: 'FindingAddin.dll', bytes: addin }]) });
    expect(again.status).toBe(201);
    // Room for the next tests: every job deleted, through the API processes in turn.
    await waitAllFinished();
    const left = (await (await call(apis[0]!, '/assemblies')).json()) as { id: string }[];
    for (const [i, j] of left.entries()) expect((await call(apis[i % 3]!, `/assemblies/${j.id}`, { method: 'DELETE' })).status).toBe(204);
  });

  test('kill -9 an API process during an upload: no visible job, and its files and row are gone after the lease', async () => {
    const victim = apis[2]!;
    const boundary = 'clusterboundary';
    const req = request({
      host: '127.0.0.1',
      port: victim.port,
      method: 'POST',
      path: '/assembly-signing/v1.0/assemblies',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': 10_000_000 },
    });
    req.on('error', () => {});
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="Half.dll"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    req.write(Buffer.alloc(512 * 1024, 7));
    const pending = () => readdirSync(join(dataDir, 'tmp')).filter((n) => n.startsWith('sandbox--'));
    await waitUntil(
      "the upload's temporary folder in tmp/",
      () => pending().length > 0,
      () => readdirSync(join(dataDir, 'tmp')),
    );
    expect((await db.query(`SELECT count(*)::int AS n FROM signgate_jobs WHERE state = 'uploading'`)).rows[0].n).toBe(1);
    await stopServiceProcess(victim);
    apis.pop();
    expect(await (await call(apis[0]!, '/assemblies')).json()).toEqual([]);
    // The other API processes sweep it once its lease has run out.
    const start = Date.now();
    while (pending().length || (await db.query(`SELECT count(*)::int AS n FROM signgate_jobs`)).rows[0].n !== 0) {
      expect(Date.now() - start).toBeLessThan(4 * LEASE_S * 1000);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(existsSync(join(dataDir, 'jobs', 'sandbox')) ? readdirSync(join(dataDir, 'jobs', 'sandbox')) : []).toEqual([]);
  });

  test('kill -9 the worker signing a job: the other worker takes it after the lease and finishes it, once', async () => {
    const files = Array.from({ length: 150 }, (_, i) => ({ name: `Addins/F${String(i).padStart(3, '0')}.dll`, bytes: addin }));
    const { id } = await (await call(apis[0]!, '/assemblies', { method: 'POST', body: uploadForm(files) })).json();
    // Wait until a worker is in the middle of it, then kill that worker.
    const owner: string = await waitFor(
      `5 files of job ${id} signed`,
      async () => {
        const status = await (await call(apis[1]!, `/assemblies/${id}/status`)).json();
        const signed = status.assemblies.filter((a: { fileProcessingState: string }) => a.fileProcessingState === 'Signed').length;
        expect(status.processingFinished).toBe(false);
        if (signed < 5) return { done: false, seen: `${signed} signed` };
        return { done: true, value: (await db.query('SELECT lease_owner FROM signgate_jobs WHERE id = $1', [id])).rows[0].lease_owner };
      },
      { intervalMs: 20 },
    );
    const victim = workers.find((w) => owner.startsWith(`worker-${w.child.pid}-`))!;
    expect(victim, owner).toBeDefined();
    await stopServiceProcess(victim);
    const survivor = workers.find((w) => w !== victim)!;
    const status = await waitJobFinished(apis[0]!.baseUrl, token, id);
    expect(status.assemblies.every((a: { fileProcessingState: string }) => a.fileProcessingState === 'Signed')).toBe(true);
    const row = (await db.query('SELECT attempts, state, result_file FROM signgate_jobs WHERE id = $1', [id])).rows[0];
    expect(row).toMatchObject({ attempts: 2, state: 'finished' });
    // The survivor's log of the job reaches its stdout pipe just after the database says finished: wait, bounded.
    await waitUntil(
      `the survivor's log of job ${id}`,
      () => survivor.stdout().includes(`"job":"${id}"`),
      () => survivor.stdout(),
    );
    // One result package, the survivor's, and every file in it verifies.
    expect(readdirSync(join(dataDir, 'jobs', 'sandbox', id)).filter((n) => n.endsWith('.zip'))).toEqual([row.result_file]);
    const entries = await readZip(new Uint8Array(await (await call(apis[1]!, `/assemblies/${id}`)).arrayBuffer()));
    expect(entries.length).toBe(151);
    if (hasMono) {
      const path = join(dataDir, 'check-takeover.dll');
      writeFileSync(path, entries.find((e) => e.name === 'Addins/F149.dll')!.bytes);
      expect(runMono('sn', ['-vf', path]).stdout).toContain('is strongnamed');
    }
  });

  test('SIGTERM to the worker signing a job: it exits 0 and gives the job back; another worker finishes it', async () => {
    workers.push(await startServiceProcess(nodeArgs('worker'), env()));
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    expect(live.length).toBe(2);
    const files = Array.from({ length: 150 }, (_, i) => ({ name: `Addins/G${String(i).padStart(3, '0')}.dll`, bytes: addin }));
    const { id } = await (await call(apis[1]!, '/assemblies', { method: 'POST', body: uploadForm(files) })).json();
    const owner: string = await waitFor(
      `5 files of job ${id} signed`,
      async () => {
        const row = (await db.query(`SELECT lease_owner, files FROM signgate_jobs WHERE id = $1`, [id])).rows[0];
        const signed = row.files.filter((f: { fileProcessingState: string }) => f.fileProcessingState === 'Signed').length;
        return signed >= 5 ? { done: true, value: row.lease_owner } : { done: false, seen: `${signed} signed` };
      },
      { intervalMs: 20 },
    );
    const stopping = live.find((w) => owner.startsWith(`worker-${w.child.pid}-`))!;
    const other = live.find((w) => w !== stopping)!;
    await stopServiceProcess(stopping, 'SIGTERM');
    expect(await stopping.exited).toBe(0);
    expect(stopping.stdout()).toContain('job processing stopped');
    await waitAllFinished();
    const row = (await db.query('SELECT attempts, state FROM signgate_jobs WHERE id = $1', [id])).rows[0];
    // Given back, not abandoned: the attempt of the stopped worker does not count.
    expect(row).toEqual({ attempts: 1, state: 'finished' });
    // The line may follow the row's state by a moment (the log is written after the job is saved).
    await waitUntil(
      `the other worker to log job ${id} processed`,
      () =>
        other
          .stdout()
          .split('\n')
          .some((l) => l.includes('"job processed"') && l.includes(id)),
      () =>
        `the stopped worker's lines of the job: ${stopping
          .stdout()
          .split('\n')
          .filter((l) => l.includes(id))
          .join('\n')}`,
      { ceilingMs: 30_000 },
    );
  });

  test("SIGTERM to a worker that waits for a lock on the record (an operator's session holds it): it stops within seconds and gives the job back uncounted", async () => {
    workers.push(await startServiceProcess(nodeArgs('worker'), env()));
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    expect(live.length).toBeGreaterThanOrEqual(2);
    // An operator's psql session holds the record's head row: every append waits for it.
    const session = new pg.Client({ connectionString: database });
    await session.connect();
    try {
      await session.query('BEGIN');
      await session.query('SELECT seq FROM signgate_signature_head WHERE id = 1 FOR UPDATE');
      const { id } = await (await call(apis[0]!, '/assemblies', { method: 'POST', body: uploadForm([{ name: 'Locked.dll', bytes: addin }]) })).json();
      // The worker has signed the file and waits for the lock to append its entry and finish the job.
      const owner: string = await waitFor(
        `a worker to wait for the record's lock with job ${id}`,
        async () => {
          const waiting = (
            await db.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%signgate_signature_head%FOR UPDATE%'`)
          ).rows[0].n;
          const row = (await db.query('SELECT lease_owner FROM signgate_jobs WHERE id = $1', [id])).rows[0];
          return Number(waiting) >= 1 && row?.lease_owner ? { done: true, value: row.lease_owner } : { done: false, seen: { waiting, row } };
        },
        { intervalMs: 50 },
      );
      const stopping = live.find((w) => owner.startsWith(`worker-${w.child.pid}-`))!;
      // Within 15 s, well within a 30 s stop timeout, while the lock is still held: the wait was cancelled.
      stopping.child.kill('SIGTERM');
      const ended = await Promise.race([stopping.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 15 s'), 15_000))]);
      if (ended !== 0) await stopServiceProcess(stopping);
      expect(ended).toBe(0);
      expect(stopping.stdout()).toContain('job processing stopped');
      await session.query('ROLLBACK');
      await waitAllFinished();
      // Given back, not abandoned: the stopped worker's attempt does not count, and the file is in the record once.
      expect((await db.query('SELECT attempts, state FROM signgate_jobs WHERE id = $1', [id])).rows[0]).toEqual({ attempts: 1, state: 'finished' });
      const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM signgate_signatures WHERE job = $1', [id]);
      expect(Number(rows[0]!.n)).toBe(1);
    } finally {
      await session.end().catch(() => {});
    }
  });

  test("the signature record: one chain over every worker's appends, without gaps or forks; each signed file of each finished job once; serve record verify accepts it", async () => {
    await waitAllFinished();
    const rows = (await db.query('SELECT seq::int, job, file_name, prev_hash, hash FROM signgate_signatures ORDER BY seq')).rows;
    // 21 jobs of one file, two of 150 (one taken over after kill -9, one given back on SIGTERM) and the one given
    // back while it waited for the record's lock: nothing twice.
    expect(rows.length).toBe(21 + 150 + 150 + 1);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
    expect(new Set(rows.map((r) => r.prev_hash)).size).toBe(rows.length);
    for (let i = 1; i < rows.length; i++) expect(rows[i].prev_hash).toBe(rows[i - 1].hash);
    expect(new Set(rows.map((r) => `${r.job}/${r.file_name}`)).size).toBe(rows.length);
    const verified = await runSigngate(['serve', 'record', 'verify'], env());
    expect(verified.code, verified.err).toBe(0);
    expect(verified.out).toContain(`: ${rows.length} entries, chain intact`);
    await db.query(`UPDATE signgate_signatures SET file_name = 'Forged.dll' WHERE seq = 7`);
    const broken = await runSigngate(['serve', 'record', 'verify', '--database', database]);
    expect(broken.code).toBe(1);
    expect(broken.out).toContain('entry 7 was changed');
  });
});
