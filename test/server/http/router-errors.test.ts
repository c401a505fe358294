// The router's own refusals answer problem+json like every other error: a malformed percent-encoding (400) and a
// path segment longer than the router reads (414), without echoing the long address.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

test.each([
  ['a malformed percent-encoding', '/assemblies/%E0%A4%A', 400, 'malformed percent-encoding'],
  ['a 9,000-character path segment', `/assemblies/${'a'.repeat(9000)}`, 414, 'longer than the service reads'],
])('%s: problem+json', async (_what, path, status, detail) => {
  const r = await fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${server.token()}` } });
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toContain('application/problem+json');
  const body = (await r.json()) as { status: number; detail: string; instance: string };
  expect(body.status).toBe(status);
  expect(body.detail).toContain(detail);
  expect(body.instance.length).toBeLessThanOrEqual(200);
});
