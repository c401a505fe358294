// GET /metrics of real `signgate serve` processes on loopback, read with a Prometheus text parser from npm: off by
// default, switched on by --metrics or server.json, on the service's port or a listener of its own; after a job that
// signs and one that fails the counters and histograms moved, requests are timed by route pattern (never a URL with
// an id), keys report their readiness, and no token shows. On PostgreSQL each process serves its own.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../../src/server/http/app.js';
import { parseServerConfig } from '../../../src/server/server-config.js';
import { freshDatabase, requireDatabase, STORE_UNDER_TEST } from '../../helpers/database.js';
import { fixture, fixturePath } from '../../helpers/fixtures.js';
import { readExposition, scrape, type Scrape } from '../../helpers/prometheus.js';
import { uploadForm } from '../../helpers/server.js';
import {
  cliToken,
  editConfig,
  refusal,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  waitJobFinished,
  type ServiceProcess,
} from '../../helpers/service-process.js';
import { waitFor } from '../../helpers/wait.js';

const API = '/assembly-signing/v1.0';
const addin = fixture('findings/passing/FindingAddin.dll');
/** A file the service cannot sign: it is no assembly. */
const broken = Buffer.from('this is not a .NET assembly');

/** Uploads one file to the service at `baseUrl`; the job's id. */
async function upload(baseUrl: string, token: string, name: string, bytes: Uint8Array): Promise<string> {
  const r = await fetch(`${baseUrl}/assemblies`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: uploadForm([{ name, bytes }]) });
  expect(r.status, await r.clone().text()).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

const metricsOf = (service: ServiceProcess) => `http://127.0.0.1:${service.port}/metrics`;

/** A sample's growth between two scrapes. */
const grew = (before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);

/** The processes below run on the data directory: the PostgreSQL leg (SIGNGATE_TEST_STORE=postgres) would repeat them. */
const dataDirDescribe = describe.skipIf(STORE_UNDER_TEST === 'postgres');

dataDirDescribe('a service with --metrics, after a job that signs and a job that fails', () => {
  let service: ServiceProcess;
  let token: string;
  let before: Scrape;
  let after: Scrape;
  const ids: string[] = [];

  beforeAll(async () => {
    const config = sandboxConfigCopy();
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-metrics-'));
    token = await cliToken(['--config', config, '--data-dir', dataDir]);
    service = await startServiceProcess(['--config', config, '--data-dir', dataDir, '--metrics']);
    before = await scrape(metricsOf(service));
    ids.push(await upload(service.baseUrl, token, 'FindingAddin.dll', addin), await upload(service.baseUrl, token, 'Broken.dll', broken));
    const states = [];
    for (const id of ids) states.push((await waitJobFinished(service.baseUrl, token, id)).assemblies[0]!.fileProcessingState);
    expect(states).toEqual(['Signed', 'Error']);
    after = await scrape(metricsOf(service));
  });

  afterAll(async () => {
    if (service) await stopServiceProcess(service, 'SIGTERM');
  });

  test('served without a token in the Prometheus text format, with every family typed', () => {
    expect(after.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Object.fromEntries([...after.families].filter(([name]) => name.startsWith('signgate_')).map(([name, f]) => [name, f.type]))).toEqual({
      signgate_jobs_finished_total: 'COUNTER',
      signgate_files_finished_total: 'COUNTER',
      signgate_job_signing_seconds: 'HISTOGRAM',
      signgate_http_request_duration_seconds: 'HISTOGRAM',
      signgate_info: 'GAUGE',
      signgate_queue_depth: 'GAUGE',
      signgate_jobs_processing: 'GAUGE',
      signgate_record_entries: 'GAUGE',
      signgate_option_key_ready: 'GAUGE',
    });
    // prom-client's default process metrics.
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(after.families.has(name), name).toBe(true);
    }
    expect(after.value('signgate_info', { role: 'all', store: 'data-dir' })).toBe(1);
  });

  test('the jobs counted by outcome and their files by state; the signing histogram has both; the record one entry more', () => {
    expect(grew(before, after, 'signgate_jobs_finished_total', { outcome: 'signed' })).toBe(1);
    expect(grew(before, after, 'signgate_jobs_finished_total', { outcome: 'failed' })).toBe(1);
    expect(grew(before, after, 'signgate_jobs_finished_total', { outcome: 'partial' })).toBe(0);
    expect(grew(before, after, 'signgate_files_finished_total', { state: 'Signed' })).toBe(1);
    expect(grew(before, after, 'signgate_files_finished_total', { state: 'Error' })).toBe(1);
    expect(grew(before, after, 'signgate_job_signing_seconds_count')).toBe(2);
    expect(after.value('signgate_job_signing_seconds_sum')).toBeGreaterThan(0);
    expect(after.value('signgate_job_signing_seconds_bucket', { le: '+Inf' })).toBe(2);
    expect(grew(before, after, 'signgate_record_entries')).toBe(1);
    expect(after.value('signgate_queue_depth')).toBe(0);
    expect(after.value('signgate_jobs_processing')).toBe(0);
  });

  test('requests are timed by method, route pattern and status code: never by a URL with a job id', () => {
    const count = (method: string, route: string, status_code: string) =>
      after.value('signgate_http_request_duration_seconds_count', { method, route, status_code });
    expect(count('POST', `${API}/assemblies`, '201')).toBe(2);
    expect(count('GET', `${API}/assemblies/:id/status`, '200')).toBeGreaterThanOrEqual(2);
    expect(count('GET', '/metrics', '200')).toBe(1); // the scrape before; the one that read these is counted after
    const routes = new Set(after.samples('signgate_http_request_duration_seconds_count').map((s) => s.labels.route));
    for (const route of routes) expect(route === 'unmatched' || /^\/[\w/:.-]*$/.test(route!), route).toBe(true);
    for (const id of ids) expect(after.text).not.toContain(id);
  });

  test('each option key reports that it can sign, by organization and option id', () => {
    const keys = after.samples('signgate_option_key_ready').map((s) => `${s.labels.organization}/${s.labels.option}=${s.value}`);
    expect(keys.sort()).toEqual(['other-org/55555=1', 'sandbox/12345=1', 'sandbox/67890=1']);
  });

  test('no token, nor its id, nor an Authorization header in the exposition', () => {
    expect(after.text).not.toContain(token);
    expect(after.text).not.toContain(createHash('sha256').update(token).digest('hex').slice(0, 16));
    expect(after.text).not.toMatch(/sgt_|authorization|bearer/i);
  });

  test('a request for an unknown address is timed as "unmatched", not by its address', async () => {
    const probe = `no-such-route-${Date.now()}`;
    expect((await fetch(`http://127.0.0.1:${service.port}/${probe}`)).status).toBe(404);
    const now = await scrape(metricsOf(service));
    expect(now.value('signgate_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(now.text).not.toContain(probe);
  });
});

dataDirDescribe('where the metrics are served', () => {
  const services: ServiceProcess[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => stopServiceProcess(s)));
  });
  const start = async (args: string[], configEdit?: (raw: Record<string, unknown>) => void) => {
    const config = sandboxConfigCopy();
    if (configEdit) editConfig(config, configEdit as never);
    const service = await startServiceProcess(['--config', config, '--data-dir', mkdtempSync(join(tmpdir(), 'signgate-metrics-')), ...args]);
    services.push(service);
    return service;
  };

  test('off by default: /metrics is 404, as any unknown address', async () => {
    const service = await start([]);
    expect((await fetch(metricsOf(service))).status).toBe(404);
  });

  test("--metrics-listen 127.0.0.1:0: on a listener of its own, which the start line names; the service's port has none", async () => {
    const service = await start(['--metrics-listen', '127.0.0.1:0']);
    const line = service
      .stdout()
      .split('\n')
      .map((l) => (l ? JSON.parse(l) : {}))
      .find((l: { msg?: string }) => l.msg?.includes('API at'));
    expect(line.metrics).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(line.metrics).not.toBe(metricsOf(service));
    expect(line.msg).toContain(`metrics at ${line.metrics}`);
    const apart = await scrape(line.metrics);
    expect(apart.value('signgate_info', { role: 'all' })).toBe(1);
    expect((await fetch(metricsOf(service))).status).toBe(404);
    expect((await fetch(line.metrics.replace(/\/metrics$/, '/healthz'))).status).toBe(404);
  });

  test('server.json "metrics": { "enabled": true } switches them on; --no-metrics off again', async () => {
    const on = await start([], (raw) => (raw.metrics = { enabled: true }));
    expect((await scrape(metricsOf(on))).value('signgate_queue_depth')).toBe(0);
    const off = await start(['--no-metrics'], (raw) => (raw.metrics = { enabled: true }));
    expect((await fetch(metricsOf(off))).status).toBe(404);
  });

  test('a --metrics-listen that is not host:port, or a port in use: the start is refused, naming it', async () => {
    const taken = await start(['--metrics-listen', '127.0.0.1:0']);
    const line = taken
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l: { metrics?: string }) => l.metrics);
    const port = new URL(line.metrics).port;
    const config = sandboxConfigCopy();
    const refused = [
      ['9464', '--metrics-listen "9464" is not host:port'],
      [`127.0.0.1:${port}`, `port ${port} on 127.0.0.1 is in use by another program`],
    ] as const;
    for (const [listen, said] of refused) {
      const dataDir = mkdtempSync(join(tmpdir(), 'signgate-metrics-'));
      const r = await runSigngate(['serve', '--config', config, '--data-dir', dataDir, '--port', '0', '--metrics-listen', listen]);
      expect(r.code).toBe(2);
      expect(refusal(r.out)).toContain(`error SG_ERR_USAGE: ${said}`);
    }
  });
});

dataDirDescribe('the keys', () => {
  test('a key in a PKCS#11 token that cannot sign reports 0, the key pair file beside it 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-metrics-keys-'));
    writeFileSync(join(dir, 'token_public.snk'), fixture('test-keys/67890_public.snk'));
    const config = parseServerConfig(
      {
        vendor: 'Contoso',
        organizations: [
          {
            id: 'sandbox',
            licenses: [
              { optionId: 12345, keyPair: fixturePath('test-keys/12345_keypair.snk') },
              { optionId: 67890, keyPair: `pkcs11:token=away;object=option-key?module-path=${join(dir, 'missing-module.so')}`, publicKey: 'token_public.snk' },
            ],
            users: [{ id: 'ci', roles: ['User'] }],
          },
        ],
      },
      dir,
    );
    const app = await buildServer({ config, dataDir: join(dir, 'data'), metrics: 'route', signingWorkers: 0 });
    try {
      const answer = await app.inject({ method: 'GET', url: '/metrics' });
      expect(answer.statusCode).toBe(200);
      const metrics = readExposition(answer.body);
      expect(metrics.value('signgate_option_key_ready', { option: '12345' })).toBe(1);
      expect(metrics.value('signgate_option_key_ready', { option: '67890' })).toBe(0);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
      expect(answer.body).not.toContain(dir);
    } finally {
      await app.close();
    }
  });
});

describe.skipIf(!requireDatabase())('several processes on PostgreSQL: each serves its own metrics', () => {
  let database: string;
  let dataDir: string;
  let config: string;
  let apiNode: ServiceProcess;
  let worker: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await freshDatabase();
    dataDir = mkdtempSync(join(tmpdir(), 'signgate-metrics-pg-'));
    config = sandboxConfigCopy();
    apiNode = await startServiceProcess(['--config', config, '--data-dir', dataDir, '--role', 'api', '--metrics'], { SIGNGATE_DATABASE_URL: database });
  });
  afterAll(async () => {
    await Promise.all([apiNode, worker].filter((s): s is ServiceProcess => s !== undefined).map((s) => stopServiceProcess(s)));
  });

  test("the API node counts its requests and the deployment's queue; the worker counts the job it signed", async () => {
    const token = await cliToken(['--config', config, '--data-dir', dataDir, '--database', database]);
    const id = await upload(apiNode.baseUrl, token, 'FindingAddin.dll', addin);
    // No worker yet: the job waits in the database's queue, which the API node reports.
    const waiting = await scrape(metricsOf(apiNode));
    expect(waiting.value('signgate_queue_depth')).toBe(1);
    expect(waiting.value('signgate_info', { role: 'api', store: 'postgres' })).toBe(1);
    expect(waiting.samples('signgate_option_key_ready')).toEqual([]); // it signs nothing
    worker = await startServiceProcess(['--config', config, '--data-dir', dataDir, '--role', 'worker', '--metrics'], { SIGNGATE_DATABASE_URL: database });
    expect((await waitJobFinished(apiNode.baseUrl, token, id)).assemblies[0]!.fileProcessingState).toBe('Signed');
    const fromWorker = await waitFor('the worker to count the job', async () => {
      const m = await scrape(metricsOf(worker!));
      return m.value('signgate_jobs_finished_total', { outcome: 'signed' }) === 1 ? { done: true, value: m } : { done: false, seen: m.text.length };
    });
    expect(fromWorker.value('signgate_info', { role: 'worker', store: 'postgres' })).toBe(1);
    expect(fromWorker.value('signgate_job_signing_seconds_count')).toBe(1);
    expect(fromWorker.value('signgate_queue_depth')).toBe(0);
    // A worker signs no checkpoint and keeps no view of the record: the API nodes report its size.
    expect(fromWorker.text).not.toContain('signgate_record_entries');
    const fromApi = await scrape(metricsOf(apiNode));
    expect(fromApi.value('signgate_record_entries')).toBe(1);
    expect(fromApi.value('signgate_jobs_finished_total', { outcome: 'signed' })).toBe(0);
    expect(fromApi.value('signgate_queue_depth')).toBe(0);
    expect(fromApi.value('signgate_http_request_duration_seconds_count', { method: 'POST', route: `${API}/assemblies`, status_code: '201' })).toBe(1);
    expect(fromWorker.samples('signgate_http_request_duration_seconds_count').filter((s) => s.labels.route?.startsWith(API))).toEqual([]);
  });
});
