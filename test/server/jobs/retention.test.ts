// Retention: limits.jobRetention deletes finished jobs older than it with their files, swept by the node that serves
// the API (a reload switches it on), so an organization at maxJobsPerOrganization can upload again; a job that waits
// or is being signed is never deleted. `serve jobs list|prune` do the same for an operator, on the data directory
// (refused while a service runs there) and on PostgreSQL beside running nodes.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { expiredJobs, pruneJobs } from '../../../src/server/jobs/retention.js';
import { JobStore } from '../../../src/server/backends/data-dir/job-store.js';
import type { JobRecord } from '../../../src/server/domain/job.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';
import { fixture } from '../../helpers/fixtures.js';
import { api, sandboxConfig, startServer, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';
import {
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  waitJobFinished,
  type ServiceProcess,
} from '../../helpers/service-process.js';
import { waitUntil } from '../../helpers/wait.js';

const addin = fixture('findings/passing/FindingAddin.dll');
const upload = (server: { baseUrl: string }, token: string) =>
  fetch(`${server.baseUrl}/assemblies`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: uploadForm([{ name: 'FindingAddin.dll', bytes: addin }]),
  });

test('in the store: a finished job past the age goes with its folder; an unfinished one, or a younger one, stays', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-retention-'));
  const store = new JobStore(dir);
  const job = async (finished: boolean) => {
    const pending = (await store.reserve('sandbox', 10))!;
    const record: JobRecord = {
      id: pending.id,
      organization: 'sandbox',
      comment: null,
      createdAt: new Date().toISOString(),
      processingFinished: false,
      assemblies: [],
    };
    await store.commit(pending, record);
    if (finished) await store.save({ ...record, processingFinished: true });
    return record.id;
  };
  const [done, waiting] = [await job(true), await job(false)];
  const later = new Date(Date.now() + 3_600_000);
  expect((await store.get('sandbox', done))!.finishedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  // An hour on: the finished job is past 30 minutes, the waiting one never is.
  expect((await expiredJobs(store, 30 * 60_000, { now: later })).map((j) => j.id)).toEqual([done]);
  expect(await pruneJobs(store, 2 * 3_600_000, { now: later })).toEqual([]);
  expect((await pruneJobs(store, 30 * 60_000, { now: later })).map((j) => j.id)).toEqual([done]);
  expect(readdirSync(join(dir, 'jobs', 'sandbox'))).toEqual([waiting]);
  // The delete itself refuses a job that is not finished, whatever the caller thought.
  expect(await store.delete('sandbox', waiting, later)).toBe(false);
  expect(await store.get('sandbox', waiting)).toBeDefined();
});

describe('a service with limits.jobRetention', () => {
  let server: TestServer;
  afterAll(() => server?.close());

  test('at maxJobsPerOrganization an upload is 409 until the finished job is past the retention; switched on by a reload', async () => {
    const lines: string[] = [];
    const limited = (retention?: string) =>
      sandboxConfig((c) => {
        c.limits = { maxJobsPerOrganization: 1, ...(retention ? { jobRetention: retention } : {}) };
      });
    server = await startServer({ config: limited(), logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } as never });
    const token = server.token();
    const first = await upload(server, token);
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    await waitFinished(server, token, id);
    expect((await upload(server, token)).status).toBe(409);
    server.setConfig(limited('2s'));
    // The sweep's line is written once its turn has deleted the job: waited for, as the 404 may come first.
    await waitUntil(
      'the retention to delete the finished job and say so',
      () => lines.join('').includes('job retention: deleted 1 finished job older than 2s (limits.jobRetention)'),
      () => lines.slice(-3),
    );
    expect((await api(server, `/assemblies/${id}/status`, token)).status).toBe(404);
    expect((await upload(server, token)).status).toBe(201);
  });
});

describe('serve jobs list and prune on a data directory', () => {
  let service: ServiceProcess | undefined;
  afterAll(() => (service ? stopServiceProcess(service) : undefined));

  test('list shows the job; prune is refused while the service runs there, dry-run deletes nothing, then prune deletes it', async () => {
    const config = sandboxConfigCopy();
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-prune-'));
    service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
    const token = (await runSigngate(['serve', 'token', 'create', '--config', config, '--data-dir', dataDir, '--org', 'sandbox', '--user', 'ci'])).out.trim();
    const created = await upload(service, token);
    const { id } = (await created.json()) as { id: string };
    await waitJobFinished(service.baseUrl, token, id);
    const list = await runSigngate(['serve', 'jobs', 'list', '--data-dir', dataDir, '--format', 'json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.out) as { jobs: { id: string; organization: string; finishedAt: string | null; fileCount: number }[] }).jobs).toEqual([
      expect.objectContaining({ id, organization: 'sandbox', fileCount: 1, finishedAt: expect.any(String) }),
    ]);
    await new Promise((r) => setTimeout(r, 1100));
    const refused = await runSigngate(['serve', 'jobs', 'prune', '--data-dir', dataDir, '--older-than', '1s']);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`a service (process ${service.child.pid}`);
    expect(refused.err).toContain('nothing was deleted');
    const dry = await runSigngate(['serve', 'jobs', 'prune', '--data-dir', dataDir, '--older-than', '1s', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.out).toContain(id);
    expect(dry.err).toContain('1 job(s) finished more than 1s ago would be deleted (--dry-run)');
    await stopServiceProcess(service, 'SIGTERM');
    service = undefined;
    const pruned = await runSigngate(['serve', 'jobs', 'prune', '--data-dir', dataDir, '--older-than', '1s']);
    expect(pruned.code, pruned.err).toBe(0);
    expect(pruned.err).toContain('1 job(s) finished more than 1s ago deleted, with their files');
    expect(readdirSync(join(dataDir, 'jobs', 'sandbox'))).toEqual([]);
    const mistyped = await runSigngate(['serve', 'jobs', 'list', '--data-dir', `${dataDir}-typo`]);
    expect(mistyped.code).toBe(2);
    expect(mistyped.err).toContain('holds no jobs folder');
    expect(existsSync(`${dataDir}-typo`)).toBe(false);
    const none = await runSigngate(['serve', 'jobs', 'prune', '--data-dir', dataDir]);
    expect(none.code).toBe(2);
    expect(none.err).toContain('needs --older-than, or --config with limits.jobRetention');
  });
});

describe.skipIf(!requireDatabase())('serve jobs prune on PostgreSQL, beside a running node', () => {
  let node: ServiceProcess | undefined;
  afterAll(() => (node ? stopServiceProcess(node) : undefined));

  test('the finished job goes; the node answers 404 for it at once', async () => {
    const database = await freshDatabase();
    const config = sandboxConfigCopy();
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-prune-pg-'));
    node = await startServiceProcess(['--config', config, '--data-dir', dataDir, '--database', database]);
    const token = (await runSigngate(['serve', 'token', 'create', '--config', config, '--database', database, '--org', 'sandbox', '--user', 'ci'])).out.trim();
    const { id } = (await (await upload(node, token)).json()) as { id: string };
    await waitJobFinished(node.baseUrl, token, id);
    await new Promise((r) => setTimeout(r, 1100));
    const pruned = await runSigngate(['serve', 'jobs', 'prune', '--data-dir', dataDir, '--database', database, '--older-than', '1s', '--format', 'json']);
    expect(pruned.code, pruned.err).toBe(0);
    expect((JSON.parse(pruned.out) as { jobs: { id: string }[] }).jobs.map((j) => j.id)).toEqual([id]);
    expect((await fetch(`${node.baseUrl}/assemblies/${id}/status`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
  });
});
