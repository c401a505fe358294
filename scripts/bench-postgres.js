// Service benchmark on PostgreSQL (issue: the service beyond one machine). Needs a PostgreSQL role that may
// create databases: SIGNGATE_BENCH_DATABASE_URL (or SIGNGATE_TEST_DATABASE_URL, as .ci/run exports); without
// one it says so and measures nothing.
//   throughput  jobs/s and p50 of upload -> finished -> download, 8 clients, of the typical add-in set (10
//               assemblies, 5 MB): the data-directory store (one process) beside PostgreSQL with one API
//               process and one, then two, worker processes (all on this machine, on loopback)
//   list        GET /assemblies with 9,999 kept jobs of one organization on PostgreSQL, beside a page and a status
// Usage: node scripts/bench-postgres.js [--jobs N] [--list-only]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = fileURLToPath(new URL('..', import.meta.url));
const argv = process.argv.slice(2);
const JOBS = Number(argv[argv.indexOf('--jobs') + 1] || 24);
const CLIENTS = 8;
const admin = process.env.SIGNGATE_BENCH_DATABASE_URL || process.env.SIGNGATE_TEST_DATABASE_URL;
const configPath = join(root, 'fixtures/server/sandbox.json');
const dll = readFileSync(join(root, 'fixtures/bench/LargeAddin.dll'));
const jobFiles = Array.from({ length: 10 }, (_, i) => ({ name: `Addins/LargeAddin${String(i + 1).padStart(2, '0')}.dll`, bytes: dll }));

if (!admin) {
  console.log('PostgreSQL figures: skipped (set SIGNGATE_BENCH_DATABASE_URL to a role that may create databases)');
  process.exit(0);
}

async function createDatabase() {
  const name = `signgate_bench_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE "${name}"`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** `signgate …` to its end; its stdout. */
function signgate(args, env = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [join(root, 'bin/signgate.js'), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`signgate ${args.slice(0, 3).join(' ')} exited ${code}`))));
  });
}

/** A `signgate serve` process; resolves with its origin once it listens. */
function node(args, env = {}) {
  const child = spawn(process.execPath, [join(root, 'bin/signgate.js'), 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let log = '';
  const origin = new Promise((resolve, reject) => {
    // The start line is a line of the service's JSON log (stdout); the rest of the log is read and dropped.
    const read = (d) => {
      log += d;
      const m = /API at (http:\/\/127\.0\.0\.1:\d+)|worker, health at (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
      if (!m) return;
      child.stdout.off('data', read);
      child.stdout.resume();
      resolve(m[1] ?? m[2]);
    };
    child.stdout.on('data', read);
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${log.slice(-2000)}`)));
  });
  return { child, origin, stop: () => new Promise((r) => (child.exitCode !== null ? r() : (child.on('exit', r), child.kill('SIGTERM')))) };
}

/** JOBS jobs through CLIENTS clients: jobs/s and the median job's milliseconds. */
async function throughput(api, token) {
  const headers = { authorization: `Bearer ${token}` };
  const job = async () => {
    const t0 = performance.now();
    const form = new FormData();
    jobFiles.forEach((f, i) => form.append(`files[${i}]`, new Blob([f.bytes]), f.name));
    const created = await fetch(`${api}/assemblies`, { method: 'POST', headers, body: form });
    if (created.status !== 201) throw new Error(`upload: ${created.status} ${await created.text()}`);
    const { id } = await created.json();
    while (!(await (await fetch(`${api}/assemblies/${id}/status`, { headers })).json()).processingFinished) await new Promise((r) => setTimeout(r, 10));
    const zip = await (await fetch(`${api}/assemblies/${id}`, { headers })).arrayBuffer();
    if (zip.byteLength < dll.length) throw new Error('result package too small');
    await fetch(`${api}/assemblies/${id}`, { method: 'DELETE', headers });
    return performance.now() - t0;
  };
  await job(); // warm-up
  const times = [];
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (started++ < JOBS) times.push(await job());
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  return { jobsPerSecond: JOBS / seconds, p50: times[Math.floor(times.length / 2)] };
}

const API = '/assembly-signing/v1.0';

async function dataDirRun() {
  const dataDir = mkdtempSync(join(tmpdir(), 'signgate-bench-dd-'));
  const token = await signgate(['serve', 'token', 'create', '--config', configPath, '--data-dir', dataDir, '--org', 'sandbox', '--user', 'ci']);
  const all = node(['--config', configPath, '--data-dir', dataDir]);
  try {
    return await throughput(`${await all.origin}${API}`, token);
  } finally {
    await all.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresRun(workers) {
  const db = await createDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'signgate-bench-pg-'));
  const env = { SIGNGATE_DATABASE_URL: db.url };
  const common = ['--config', configPath, '--data-dir', dataDir];
  const nodes = [node([...common, '--role', 'api'], env)];
  try {
    const api = `${await nodes[0].origin}${API}`;
    for (let i = 0; i < workers; i++) nodes.push(node([...common, '--role', 'worker'], env));
    await Promise.all(nodes.map((n) => n.origin));
    const token = await signgate(['serve', 'token', 'create', '--config', configPath, '--org', 'sandbox', '--user', 'ci'], env);
    return await throughput(api, token);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
    rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
}

/** GET /assemblies with `count` kept jobs in PostgreSQL (rows written in one statement), in-process on loopback. */
async function listRun(count = 9999) {
  const { buildServer } = await import('../dist/server/http/app.js');
  const { parseServerConfig } = await import('../dist/server/server-config.js');
  const db = await createDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'signgate-bench-list-'));
  const config = parseServerConfig(
    { ...JSON.parse(readFileSync(configPath, 'utf8')), limits: { maxJobsPerOrganization: count } },
    join(root, 'fixtures/server'),
  );
  const app = await buildServer({ config: () => config, dataDir, database: db.url, role: 'api', logger: false });
  try {
    const files = jobFiles.map((f) => ({
      fileName: f.name,
      size: f.bytes.length,
      sha256: '0'.repeat(64),
      fileProcessingState: 'Signed',
      messages: [{ dateTime: '2026-01-01T00:00:00.000Z', messageType: 'Info', message: 'Signed with option 12345.' }],
    }));
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    await pool.query(`INSERT INTO signgate_organizations (id) VALUES ('sandbox') ON CONFLICT DO NOTHING`);
    await pool.query(
      `INSERT INTO signgate_jobs (organization, id, state, created_at, comment, files, file_count, result_file)
       SELECT 'sandbox', gen_random_uuid(), 'finished', timestamptz '2026-01-01' + i * interval '1 second', 'build ' || i, $1::jsonb, ${files.length}, 'result.zip'
       FROM generate_series(1, $2) AS i`,
      [JSON.stringify(files), count],
    );
    const someId = (await pool.query(`SELECT id::text FROM signgate_jobs LIMIT 1`)).rows[0].id;
    await pool.query('ANALYZE signgate_jobs');
    await pool.end();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${app.server.address().port}${API}`;
    const made = app.signgate.tokens.create('sandbox', 'ci', 1);
    await made.stored;
    const headers = { authorization: `Bearer ${made.token}` };
    const median = async (path) => {
      const runs = [];
      for (let i = 0; i < 21; i++) {
        const t = performance.now();
        const body = await (await fetch(`${base}${path}`, { headers })).arrayBuffer();
        runs.push({ ms: performance.now() - t, bytes: body.byteLength });
      }
      return runs.sort((a, b) => a.ms - b.ms)[10];
    };
    return {
      count,
      list: await median('/assemblies'),
      page: await median('/assemblies?offset=9000&limit=100'),
      status: await median(`/assemblies/${someId}/status`),
    };
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
    await db.drop();
  }
}

if (!argv.includes('--list-only')) {
  const rows = [
    ['data directory, 1 process', await dataDirRun()],
    ['PostgreSQL, 1 API + 1 worker', await postgresRun(1)],
    ['PostgreSQL, 1 API + 2 workers', await postgresRun(2)],
  ];
  console.log(
    `service on PostgreSQL: ${jobFiles.length} assemblies, ${((jobFiles.length * dll.length) / 1e6).toFixed(1)} MB per job, ${JOBS} jobs, ${CLIENTS} clients, processes on loopback`,
  );
  console.log(`${'store and processes'.padEnd(32)} ${'jobs/s'.padStart(8)} ${'p50 ms'.padStart(8)}`);
  for (const [name, r] of rows) console.log(`${name.padEnd(32)} ${r.jobsPerSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(8)}`);
  console.log('');
}
const l = await listRun();
console.log(`GET /assemblies with ${l.count} kept jobs on PostgreSQL (in-process API node on loopback, median of 21)`);
console.log(`list                                      ${l.list.ms.toFixed(1)} ms, ${(l.list.bytes / 1e6).toFixed(2)} MB`);
console.log(`one page of 100 (?offset=9000&limit=100)  ${l.page.ms.toFixed(1)} ms`);
console.log(`a status call (anchor)                    ${l.status.ms.toFixed(1)} ms`);
