// The service under requests that misbehave: stalled and oversized bodies, tokens in URLs, forged proxy
// headers, and what a crash leaves in the data directory. Each goes wrong alone; the service stays up.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { fixture } from '../../helpers/fixtures.js';
import { stalledRequest } from '../../helpers/raw-http.js';
import { api, sandboxConfig, startServer, uploadForm, waitFinished } from '../../helpers/server.js';
import { dataDirOnly } from '../../helpers/database.js';

const addin = () => [{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }];
const portOf = (baseUrl: string) => Number(new URL(baseUrl).port);

function logCapture(): { stream: Writable; lines: () => Record<string, unknown>[]; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _e, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const text = () => chunks.join('');
  return {
    stream,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

describe('stalled uploads', () => {
  test.each([
    ['/assemblies', 'files[0]', 'Stalled.dll'],
    ['/archives', 'archive', 'Stalled.zip'],
  ])('an upload to %s that stops sending is answered 408 and closed after the idle timeout, and frees its job slot', async (route, field, file) => {
    const server = await startServer({ config: sandboxConfig((c) => (c.limits = { maxJobsPerOrganization: 1 })), build: { timeouts: { idleMs: 400 } } });
    try {
      const token = server.token();
      const boundary = 'stallboundary';
      const head =
        `POST /assembly-signing/v1.0${route} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
        `Authorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n`;
      const part = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${file}"\r\n\r\n`),
        Buffer.alloc(20_000, 1),
      ]);
      const stalled = stalledRequest(portOf(server.baseUrl), head, part, 5000);
      const outcome = await stalled.outcome;
      stalled.destroy();
      expect(outcome.closed).toBe(true);
      expect(outcome.text).toMatch(/^HTTP\/1\.1 408 /);
      expect(outcome.elapsedMs).toBeLessThan(3000);
      await new Promise((r) => setTimeout(r, 100));
      expect(readdirSync(join(server.dataDir, 'tmp'))).toEqual([]);
      // The only slot is free again.
      const next = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) });
      expect(next.status).toBe(201);
    } finally {
      await server.close();
    }
  });
});

/** Streams `total` bytes of `head` + filler as a chunked body; stops when the answer arrives. */
function streamBody(
  url: string,
  token: string,
  boundary: string,
  head: Buffer,
  filler: Buffer,
  total: number,
  tail: Buffer,
): Promise<{ status: number; sentBytes: number }> {
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const req = request(
      url,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      },
      (res) => {
        answered = true;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, sentBytes }));
      },
    );
    req.on('error', (error) => (answered ? undefined : reject(error)));
    const pump = () => {
      while (!answered && sentBytes < total) {
        const chunk = sentBytes === 0 ? head : filler;
        sentBytes += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!answered) req.end(tail);
    };
    pump();
  });
}

describe('every byte of the body counts toward the upload limit', () => {
  const limitConfig = () => sandboxConfig((c) => (c.limits = { maxUploadBytes: 1_000_000 }));
  const filePart = (boundary: string) =>
    Buffer.concat([
      Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="FindingAddin.dll"\r\n\r\n`),
      Buffer.from(fixture('findings/passing/FindingAddin.dll')),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);

  test.each([
    ['a 40 MB comment field', '/assemblies', (b: string) => Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="comment"\r\n\r\n`)],
    ['a 40 MB preamble', '/assemblies', (_b: string) => Buffer.from('preamble ')],
    ['a 40 MB comment field', '/archives', (b: string) => Buffer.from(`--${b}\r\nContent-Disposition: form-data; name="comment"\r\n\r\n`)],
    ['a 40 MB preamble', '/archives', (_b: string) => Buffer.from('preamble ')],
  ])('%s to %s: 413 long before the end of the body', async (_what, route, head) => {
    const server = await startServer({ config: limitConfig() });
    try {
      const token = server.token();
      const boundary = 'limitboundary';
      const result = await streamBody(
        `${server.baseUrl}${route}`,
        token,
        boundary,
        head(boundary),
        Buffer.alloc(64 * 1024, 0x61),
        40_000_000,
        filePart(boundary),
      );
      expect(result.status).toBe(413);
      expect(result.sentBytes).toBeLessThan(20_000_000);
      expect(await (await api(server, '/assemblies', token)).json()).toEqual([]);
      expect((await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).status).toBe(201);
    } finally {
      await server.close();
    }
  });

  test('a Content-Length above the limit: 413 before the body is read', async () => {
    const server = await startServer({ config: limitConfig() });
    try {
      const token = server.token();
      const result = await new Promise<number>((resolve, reject) => {
        const req = request(
          `${server.baseUrl}/assemblies`,
          { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': 120_000_000 } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.write('--x\r\n'); // and nothing more: the answer must not wait for the rest
      });
      expect(result).toBe(413);
    } finally {
      await server.close();
    }
  });
});

describe('logs', () => {
  test('a token in the query string never reaches the log', async () => {
    const log = logCapture();
    const server = await startServer({ logger: { level: 'trace', stream: log.stream } });
    try {
      const secret = 'sgt_query-secret-4f9a2c';
      expect((await fetch(`${server.baseUrl}/licenses?access_token=${secret}`)).status).toBe(401);
      expect((await fetch(`${server.baseUrl}/assemblies/00000000-0000-0000-0000-000000000000?token=${secret}&x=1`)).status).toBe(401);
      expect((await fetch(`${server.baseUrl}/nowhere?token=${secret}`)).status).toBe(404);
      expect(log.text()).not.toContain(secret);
      expect(log.text()).toContain('/licenses');
    } finally {
      await server.close();
    }
  });

  test('a status poll answered 200 writes no line at info level; a refused one writes one line with request and answer', async () => {
    const log = logCapture();
    const server = await startServer({ logger: { level: 'info', stream: log.stream } });
    try {
      const token = server.token();
      const { id } = await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).json();
      await waitFinished(server, token, id);
      const before = log.lines().length;
      for (let i = 0; i < 5; i++) expect((await api(server, `/assemblies/${id}/status`, token)).status).toBe(200);
      expect(log.lines().slice(before)).toEqual([]);
      const unknown = '00000000-0000-0000-0000-000000000000';
      expect((await api(server, `/assemblies/${unknown}/status`, token)).status).toBe(404);
      const refused = log.lines().slice(before);
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({
        msg: 'request completed',
        req: { method: 'GET', url: `/assembly-signing/v1.0/assemblies/${unknown}/status` },
        res: { statusCode: 404 },
      });
      // Every other request keeps its two lines.
      expect((await api(server, `/assemblies/${id}`, token)).status).toBe(200);
      expect(
        log
          .lines()
          .slice(before + 1)
          .map((l) => l.msg),
      ).toEqual(['incoming request', 'request completed']);
    } finally {
      await server.close();
    }
  });
});

describe('proxy headers', () => {
  const forged = { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

  test('by default X-Forwarded-* from a direct client are ignored: links and log use the connection', async () => {
    const log = logCapture();
    const server = await startServer({ logger: { level: 'info', stream: log.stream } });
    try {
      const token = server.token();
      const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()), headers: forged });
      expect(r.status).toBe(201);
      const job = await r.json();
      expect(job.links.status).toBe(`${server.baseUrl}/assemblies/${job.id}/status`);
      expect(log.text()).not.toContain('203.0.113.9');
      expect(log.text()).not.toContain('evil.example');
      expect(log.lines().some((l) => (l.req as { remoteAddress?: string } | undefined)?.remoteAddress === '127.0.0.1')).toBe(true);
      await waitFinished(server, token, job.id);
    } finally {
      await server.close();
    }
  });

  test('with the proxy address trusted, links and log follow its headers', async () => {
    const log = logCapture();
    const server = await startServer({ logger: { level: 'info', stream: log.stream }, build: { trustProxy: '127.0.0.1' } });
    try {
      const token = server.token();
      const r = await api(server, '/assemblies', token, {
        method: 'POST',
        body: uploadForm(addin()),
        headers: { ...forged, 'x-forwarded-host': 'signing.example.com' },
      });
      const job = await r.json();
      expect(job.links.status).toBe(`https://signing.example.com/assembly-signing/v1.0/assemblies/${job.id}/status`);
      expect(log.lines().some((l) => (l.req as { remoteAddress?: string } | undefined)?.remoteAddress === '203.0.113.9')).toBe(true);
      await waitFinished(server, token, job.id);
    } finally {
      await server.close();
    }
  });
});

describe('after kill -9', () => {
  dataDirOnly('temporary files left in job folders are removed at the next start; the job itself is intact', async () => {
    const first = await startServer();
    const token = first.token();
    const { id } = await (await api(first, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).json();
    await waitFinished(first, token, id);
    await first.close();
    const dir = join(first.dataDir, 'jobs', 'sandbox', id);
    writeFileSync(join(dir, 'job.json.tmp-0badf00d'), '{"half":');
    writeFileSync(join(dir, '.result.zip.tmp-0badf00d'), 'PK\u0003\u0004');
    const second = await startServer({ dataDir: first.dataDir });
    try {
      expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
      expect(existsSync(join(dir, 'job.json'))).toBe(true);
      const download = await api(second, `/assemblies/${id}`, token);
      expect(download.status).toBe(200);
      await download.arrayBuffer(); // a response left unread would hold close() until the connection times out
    } finally {
      await second.close();
    }
  });
});
