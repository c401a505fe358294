// Rate limits on the real service on 127.0.0.1: per token and per address, 429 with Retry-After, loopback exempt
// by default, and `signgate sign` waiting as Retry-After says and succeeding.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { parseRateLimit, rateLimitOverrides } from '../../../src/server/identity/rate-limit.js';
import { readModule } from '../../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { fixturePath, runCliAsync } from '../../helpers/fixtures.js';
import { api, sandboxConfig, startServer, type TestServer } from '../../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const statuses = async (s: TestServer, token: string | undefined, n: number) => {
  const out: Response[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api(s, '/licenses', token);
    await r.arrayBuffer();
    out.push(r);
  }
  return out;
};

describe('rate limits', () => {
  test('by default loopback clients are not counted, however tight the limit', async () => {
    server = await startServer({
      config: sandboxConfig((c) => (c.rateLimits = { perToken: { max: 2, windowSeconds: 60 }, perAddress: { max: 2, windowSeconds: 60 } })),
    });
    const all = await statuses(server, server.token(), 6);
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
  });

  test('per address: past the limit 429 problem+json with Retry-After; a changed configuration applies at once', async () => {
    server = await startServer({
      config: sandboxConfig((c) => (c.rateLimits = { perToken: false, perAddress: { max: 3, windowSeconds: 30 }, loopback: true })),
    });
    const token = server.token();
    const all = await statuses(server, token, 4);
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    const refused = await api(server, '/licenses', undefined); // no token: the address still counts
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    const body = await refused.json();
    expect(body).toMatchObject({ status: 429, title: 'Too Many Requests' });
    expect(body.detail).toContain('address');
    expect(body.detail).toContain(`${retryAfter} s`);
    server.setConfig(sandboxConfig((c) => (c.rateLimits = { perAddress: false, perToken: false, loopback: true })));
    expect((await api(server, '/licenses', token)).status).toBe(200);
  });

  test('per token: one token over its limit does not hold back another', async () => {
    server = await startServer({
      config: sandboxConfig((c) => (c.rateLimits = { perToken: { max: 2, windowSeconds: 30 }, perAddress: false, loopback: true })),
    });
    const a = server.token();
    const b = server.token();
    expect((await statuses(server, a, 3)).map((r) => r.status)).toEqual([200, 200, 429]);
    const refused = await api(server, '/licenses', a);
    expect(refused.status).toBe(429);
    expect((await refused.json()).detail).toContain('access token');
    expect((await statuses(server, b, 2)).map((r) => r.status)).toEqual([200, 200]);
  });

  test('junk tokens cannot crowd a real token out of the counters: after 5,200 of them it is still at its limit', async () => {
    server = await startServer({
      config: sandboxConfig((c) => (c.rateLimits = { perToken: { max: 2, windowSeconds: 60 }, perAddress: false, loopback: true })),
    });
    const real = server.token();
    expect((await statuses(server, real, 3)).map((r) => r.status)).toEqual([200, 200, 429]);
    // Each with a token of its own that authenticates as nothing: counted by address (off here), not per token.
    for (let i = 0; i < 5200; i++) {
      const r = await server.app.inject({
        method: 'GET',
        url: '/assembly-signing/v1.0/licenses',
        headers: { authorization: `Bearer sgt_junk${String(i).padStart(40, '0')}` },
        remoteAddress: '127.0.0.1',
      });
      expect(r.statusCode).toBe(401);
    }
    expect((await api(server, '/licenses', real)).status).toBe(429);
  });

  test('options to buildServer win over the configuration', async () => {
    server = await startServer({
      config: sandboxConfig((c) => (c.rateLimits = { perToken: false, perAddress: false })),
      build: { rateLimits: { perAddress: { max: 1, windowSeconds: 30 }, loopback: true } },
    });
    expect((await statuses(server, server.token(), 2)).map((r) => r.status)).toEqual([200, 429]);
  });

  test('signgate sign waits as Retry-After says and succeeds against a tight limit', async () => {
    const windowSeconds = 4;
    server = await startServer({ config: sandboxConfig((c) => (c.rateLimits = { perToken: { max: 3, windowSeconds }, perAddress: false, loopback: true })) });
    const token = server.token();
    // The token's window is used up before sign starts, so its first request is refused whatever the machine's speed.
    expect((await statuses(server, token, 3)).map((r) => r.status)).toEqual([200, 200, 200]);
    const refusals: number[] = [];
    server.app.server.on('request', (_req, res) => res.once('finish', () => res.statusCode === 429 && refusals.push(Date.now())));
    const dir = mkdtempSync(join(tmpdir(), 'signgate-ratelimit-'));
    const out = join(dir, 'out');
    const started = Date.now();
    const r = await runCliAsync(
      [
        'sign',
        fixturePath('addin'),
        '--root',
        fixturePath('addin'),
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--base-url',
        server.baseUrl,
        '--destination-path',
        out,
        '--poll-interval',
        '50',
        '--delete-afterwards',
      ],
      { env: { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: token } },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(refusals.length).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/retrying (GET|POST|DELETE) .*\(status 429\) in [1-4]000 ms/);
    // Waiting is what made it succeed: the run outlasted the window that was used up when it started.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const publicKey = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'AddinTool.exe']) {
      expect(verifyStrongName(readModule(readFileSync(join(out, name))), { expectedKey: publicKey }).valid, name).toBe(true);
    }
    expect(r.stdout + r.stderr).not.toContain(token);
  });
});

describe('parsing the serve options', () => {
  test('<max>/<seconds> or off', () => {
    expect(parseRateLimit('120/60')).toEqual({ max: 120, windowSeconds: 60 });
    expect(parseRateLimit('5 / 1.5s')).toEqual({ max: 5, windowSeconds: 1.5 });
    expect(parseRateLimit('off')).toBeNull();
    expect(parseRateLimit('fast')).toBeUndefined();
    expect(parseRateLimit('0/60')).toBeUndefined();
    expect(rateLimitOverrides({ perToken: '10/1', loopback: true })).toEqual({ perToken: { max: 10, windowSeconds: 1 }, loopback: true });
    expect(() => rateLimitOverrides({ perAddress: 'many' })).toThrow(/--rate-limit-per-address "many" is not <max>\/<seconds> or off/);
  });
});
