// Health a balancer can use, and readiness that names nothing to a stranger: /readyz/api answers 200 only on a node
// that serves the API and can take an upload; /readyz without an operator's token says ready or not and why in
// general terms, and gives the details (the failure's own words, each token key, the jobs waiting for a key) only to
// a personal access token of a user with the role Operator, or on the metrics listener.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listenForMetrics, ServiceMetrics } from '../../../src/server/http/metrics.js';
import { NotReady, readyAnswer, registerHealth } from '../../../src/server/http/routes/health-routes.js';
import { api, sandboxConfig, startServer, type TestServer } from '../../helpers/server.js';

/** The sandbox with an operator who may not use the API, and (`full`) an upload limit no disk has room for. */
function config(full: boolean) {
  return sandboxConfig((c) => {
    c.organizations[0]!.users.push({ id: 'ops', roles: ['Operator'] });
    if (full) c.limits = { ...c.limits, maxUploadBytes: 2 ** 52 };
  });
}

const origin = (server: TestServer) => server.baseUrl.replace(/\/assembly-signing\/v1\.0$/, '');
const get = (server: TestServer, path: string, token?: string) =>
  fetch(`${origin(server)}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('a ready node', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: config(false) });
  });
  afterAll(() => server?.close());

  test('/readyz without a token: ready and the role, nothing else; /readyz/api: 200', async () => {
    const ready = await get(server, '/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', role: 'all' });
    const check = await get(server, '/readyz/api');
    expect(check.status).toBe(200);
    expect(await check.json()).toEqual({ status: 'ready', role: 'all' });
  });

  test("an operator's token reads /readyz and nothing of the API; a user's token reads only what anyone reads", async () => {
    const ops = server.token('sandbox', 'ops');
    expect((await get(server, '/readyz', ops)).status).toBe(200);
    expect((await api(server, '/licenses', ops)).status).toBe(403);
    expect(await (await get(server, '/readyz', server.token())).json()).toEqual({ status: 'ready', role: 'all' });
  });
});

describe('a node whose data folder has no room for a job', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ config: config(true) });
  });
  afterAll(() => server?.close());

  test('without a token, or with a junk, expired or revoked one: 503 in general terms, no figures, no folder', async () => {
    const expired = server.token('sandbox', 'ops', 1, new Date(Date.now() - 3 * 86_400_000));
    const revoked = server.token('sandbox', 'ops');
    await server.app.signgate.tokens.revoke({ token: revoked });
    for (const token of [undefined, 'junk', `sgp_${'0'.repeat(40)}`, expired, server.token()]) {
      const ready = await get(server, '/readyz', token);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const body = (await ready.json()) as { detail: string; reason: string };
      expect(body.reason).toBe('disk');
      expect(body.detail).toContain('too little free space for a job');
      expect(body.detail).not.toMatch(/MB|\d{3}/);
      expect(body.detail).not.toContain(server.dataDir);
    }
  });

  test("the operator's token: the failure's own words", async () => {
    const ready = await get(server, '/readyz', server.token('sandbox', 'ops'));
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { detail: string; reason: string };
    expect(body.reason).toBe('disk');
    expect(body.detail).toMatch(/the data folder has [\d.]+ MB free; a job may need [\d.]+ MB/);
  });

  test('/readyz/api: 503, the node cannot take uploads now', async () => {
    const check = await get(server, '/readyz/api');
    expect(check.status).toBe(503);
    const body = (await check.json()) as { detail: string; reason: string };
    expect(body).toMatchObject({ status: 503, reason: 'disk' });
    expect(body.detail).toContain('cannot take uploads now');
  });
});

test('a signing worker: /readyz/api is 503 naming its role, /readyz is 200', async () => {
  const app = Fastify();
  registerHealth(app, { role: 'worker', ready: async () => {}, takesUploads: async () => {}, isOperator: async () => false });
  try {
    const check = await app.inject({ method: 'GET', url: '/readyz/api' });
    expect(check.statusCode).toBe(503);
    expect(check.json()).toMatchObject({ reason: 'role', detail: expect.stringContaining('--role worker') });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  } finally {
    await app.close();
  }
});

test("the metrics listener answers /readyz as the operator's, with each key's state", async () => {
  const tokenKeys = [{ organization: 'sandbox', optionId: 12345, pin: 'count-low', ready: false, code: 'SG_ERR_PKCS11_PIN' }];
  const readiness = {
    role: 'worker',
    ready: async () => {
      throw new NotReady('option 12345 of sandbox: the PIN was refused', 'keys', { tokenKeys });
    },
    takesUploads: async () => {},
  };
  const metrics = new ServiceMetrics({
    info: () => ({ version: '0', role: 'worker', store: 'fs' }),
    queueDepth: async () => 0,
    processing: () => 0,
    optionKeys: async () => [],
  });
  const { url, server } = await listenForMetrics(metrics, '127.0.0.1', 0, () => readyAnswer(readiness, true, '/readyz'));
  try {
    const ready = await fetch(url.replace(/\/metrics$/, '/readyz'));
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ reason: 'keys', tokenKeys, detail: expect.stringContaining('the PIN was refused') });
    expect((await fetch(url)).status).toBe(200);
    // Anyone else on the service's port: the reason alone.
    const general = await readyAnswer(readiness, false, '/readyz');
    expect(general.status).toBe(503);
    expect(JSON.stringify(general.body)).not.toMatch(/sandbox|12345|PIN|tokenKeys/);
  } finally {
    server.close();
  }
});
