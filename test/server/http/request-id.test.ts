// One request, one id: every answer carries X-Request-Id (the client's when well-formed, else a new UUID, never a
// per-process counter), a problem+json answer holds it as `requestId`, every log line of the request holds it as
// reqId, and the signgate client names it in the error it prints.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createServiceClient } from '../../../src/service-client/client.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const lines: Record<string, unknown>[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
    done();
  },
});

let server: TestServer;
let other: TestServer;
beforeAll(async () => {
  server = await startServer({ logger: { level: 'info', stream } });
  other = await startServer();
});
afterAll(async () => {
  await server?.close();
  await other?.close();
});

test("a well-formed X-Request-Id is the answer's, the problem's and every log line's of that request", async () => {
  const id = 'build-42:step_3.upload';
  const r = await fetch(`${server.baseUrl}/no-such-route`, { headers: { authorization: `Bearer ${server.token()}`, 'x-request-id': id } });
  expect(r.status).toBe(404);
  expect(r.headers.get('x-request-id')).toBe(id);
  expect(((await r.json()) as { requestId: string }).requestId).toBe(id);
  const ofRequest = lines.filter((l) => l.reqId === id);
  expect(ofRequest.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
  // A line that names this request's URL but another reqId would be a line not tied to the request.
  expect(lines.filter((l) => JSON.stringify(l).includes('/no-such-route') && l.reqId !== id)).toEqual([]);
});

test.each([
  ['empty', ''],
  ['with a space', 'a b'],
  ['129 characters', 'a'.repeat(129)],
  ['with a newline-like character', 'abc\u2028def'.replace('\u2028', '%0A')],
])('an X-Request-Id %s is not taken: the answer gets a new UUID', async (_what, given) => {
  const r = await fetch(`${server.baseUrl}/licenses`, { headers: { 'x-request-id': given } });
  expect(r.status).toBe(401);
  const id = r.headers.get('x-request-id')!;
  expect(id).toMatch(UUID);
  expect(((await r.json()) as { requestId: string }).requestId).toBe(id);
});

test('without one, every answer gets an id unique across requests and nodes (no per-process counter), successes included', async () => {
  const ids = [];
  for (const s of [server, other, server, other]) {
    const r = await fetch(`${s.baseUrl}/licenses`, { headers: { authorization: `Bearer ${s.token()}` } });
    expect(r.status).toBe(200);
    ids.push(r.headers.get('x-request-id'));
  }
  const health = await fetch(new URL('/healthz', server.baseUrl));
  ids.push(health.headers.get('x-request-id'));
  for (const id of ids) expect(id).toMatch(UUID);
  expect(new Set(ids).size).toBe(ids.length);
});

test("the router's own refusals carry the id too", async () => {
  const r = await fetch(`${server.baseUrl}/assemblies/%E0%A4%A`, { headers: { 'x-request-id': 'bad-url-1' } });
  expect(r.status).toBe(400);
  expect(r.headers.get('x-request-id')).toBe('bad-url-1');
  expect(((await r.json()) as { requestId: string }).requestId).toBe('bad-url-1');
});

test("the client's error names the request id the service gave, which is the reqId of the service's log lines", async () => {
  const client = createServiceClient({ baseUrl: server.baseUrl, accessToken: 'not-a-token', retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
  const error = (await client.licenses().catch((e: unknown) => e)) as Error;
  const id = /\(request id ([^)]+)\)$/.exec(error.message)?.[1];
  expect(id, error.message).toMatch(UUID);
  expect(lines.some((l) => l.reqId === id && l.msg === 'request completed')).toBe(true);
});
