// A multipart body that is not well-formed (no boundary, cut off inside a part) is the client's fault: 400 with
// the reason on both upload routes, nothing stored, the job slot free again. It was answered 500 before.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type TestServer } from '../../helpers/server.js';

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  token = server.token();
});
afterAll(() => server?.close());

function post(path: string, contentType: string, body: string): Promise<{ status: number; detail: string }> {
  const u = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: `${u.pathname}${path}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, detail: (JSON.parse(text) as { detail: string }).detail }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe.each([['/assemblies'], ['/archives']])('POST %s', (path) => {
  test('multipart/form-data without a boundary: 400', async () => {
    const r = await post(path, 'multipart/form-data', '--x\r\n');
    expect(r.status).toBe(400);
    expect(r.detail).toContain('Boundary not found');
  });

  test('a comment with a NUL character: 400 on every store alike (PostgreSQL cannot store it), nothing stored', async () => {
    const r = await post(
      path,
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="comment"\r\n\r\na\u0000b\r\n--x\r\nContent-Disposition: form-data; name="files[0]"; filename="a.dll"\r\n\r\nMZ\r\n--x--\r\n',
    );
    expect(r.status).toBe(400);
    expect(r.detail).toContain('NUL character');
  });

  test('a body cut off inside a part: 400, nothing stored', async () => {
    const r = await post(path, 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="files[0]"; filename="a.dll"\r\n\r\nMZ');
    expect(r.status).toBe(400);
    expect(r.detail).toContain('Unexpected end of multipart data');
    const jobs = await fetch(`${server.baseUrl}/assemblies`, { headers: { authorization: `Bearer ${token}` } });
    expect(await jobs.json()).toEqual([]);
  });
});
