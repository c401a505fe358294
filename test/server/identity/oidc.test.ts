// OAuth 2.0 bearer tokens from a real OpenID Connect provider (oidc-provider) on 127.0.0.1, validated by the
// service with jose against the provider's published keys; personal access tokens keep working beside them.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AUDIENCE, startIssuer, type TestIssuer } from '../../helpers/oidc-provider.js';
import { api, sandboxConfig, startServer, type TestServer } from '../../helpers/server.js';

let issuer: TestIssuer;
let other: TestIssuer;
let server: TestServer;
beforeAll(async () => {
  issuer = await startIssuer();
  other = await startIssuer();
  server = await startServer({ config: sandboxConfig((c) => (c.oidc = { issuer: issuer.issuer, audience: AUDIENCE })) });
});
afterAll(async () => {
  await server?.close();
  await issuer?.close();
  await other?.close();
});

const licenses = (token: string) => api(server, '/licenses', token);

describe('bearer JWTs from the configured issuer', () => {
  test('a token with the organization and the role User lists the licenses', async () => {
    const token = await issuer.token('ci');
    expect(token.split('.')).toHaveLength(3);
    const res = await licenses(token);
    expect(res.status).toBe(200);
    expect((await res.json()).map((l: { optionId: number }) => l.optionId)).toContain(12345);
  });

  test('refused: expired, from another issuer, without the role, for another organization', async () => {
    const expired = await issuer.token('short');
    await new Promise((r) => setTimeout(r, 2100));
    const cases: [string, number, RegExp][] = [
      [expired, 401, /^The access token expired at \d{4}-\d\d-\d\dT/],
      [await other.token('ci'), 401, new RegExp(`^The access token was not issued by ${issuer.issuer.replace(/[.]/g, '\\.')} \\(ERR_JWKS_NO_MATCHING_KEY\\)`)],
      [await issuer.token('norole'), 403, /does not hold the role User/],
      [await issuer.token('otherorg'), 403, /organization "elsewhere" \(claim "org"\), which this service does not serve/],
    ];
    for (const [token, status, detail] of cases) {
      const res = await licenses(token);
      const body = await res.json();
      expect(res.status, body.detail).toBe(status);
      expect(body.detail).toMatch(detail);
      expect(JSON.stringify(body)).not.toContain(token);
    }
  });

  test('a token without exp, or valid for longer than maxTokenLifetime, is refused; a short one signed the same way is accepted', async () => {
    const base = { iss: issuer.issuer, aud: AUDIENCE, sub: 'ci', org: 'sandbox', roles: ['User'], iat: Math.floor(Date.now() / 1000) };
    const noExp = await licenses(await issuer.sign(base));
    expect(noExp.status).toBe(401);
    expect((await noExp.json()).detail).toBe('The access token has no "exp" claim; this service accepts only tokens that expire.');
    const long = await licenses(await issuer.sign({ ...base, exp: base.iat + 2 * 86_400 }));
    expect(long.status).toBe(401);
    expect((await long.json()).detail).toMatch(/^The access token is valid for \d+ s more; this service accepts tokens that expire within 86400 s/);
    expect((await licenses(await issuer.sign({ ...base, exp: base.iat + 600 }))).status).toBe(200);
  });

  test('a token for another audience is refused; personal access tokens still work', async () => {
    server.setConfig(sandboxConfig((c) => (c.oidc = { issuer: issuer.issuer, audience: 'https://another-api.test' })));
    try {
      const res = await licenses(await issuer.token('ci'));
      expect(res.status).toBe(401);
      expect((await res.json()).detail).toContain('"aud" claim');
    } finally {
      server.setConfig(sandboxConfig((c) => (c.oidc = { issuer: issuer.issuer, audience: AUDIENCE })));
    }
    expect((await licenses(server.token())).status).toBe(200);
  });
});

describe('an issuer whose discovery document fails', () => {
  test('30 junk tokens cause one discovery request, not 30, while the failure is remembered', async () => {
    const { createServer } = await import('node:http');
    let discoveries = 0;
    const broken = createServer((req, res) => {
      if (req.url?.includes('openid-configuration')) discoveries++;
      res.writeHead(500, { 'content-type': 'text/plain' }).end('down');
    });
    await new Promise<void>((r) => broken.listen(0, '127.0.0.1', r));
    const brokenIssuer = `http://127.0.0.1:${(broken.address() as { port: number }).port}`;
    const service = await startServer({ config: sandboxConfig((c) => (c.oidc = { issuer: brokenIssuer, audience: AUDIENCE })) });
    try {
      const junk = (i: number) => `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: `x${i}` })).toString('base64url')}.c2ln`;
      const answers = [];
      for (let i = 0; i < 30; i++) answers.push((await api(service, '/licenses', junk(i))).status);
      expect(answers.every((s) => s === 401)).toBe(true);
      expect(discoveries).toBe(1);
    } finally {
      await service.close();
      await new Promise<void>((r) => broken.close(() => r()));
    }
  });
});
