// A client that goes away in the middle of its upload is not the service's fault: one info line, no error line, no
// "storage does not answer", nothing of the upload kept, and the node serves the next request.
import { request } from 'node:http';
import { readdirSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { api, startServer, type TestServer } from '../../helpers/server.js';
import { waitUntil } from '../../helpers/wait.js';

const lines: { level: number; msg: string; reqId?: string }[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
    done();
  },
});
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ logger: { level: 'info', stream } });
});
afterAll(() => server?.close());

test('a cancelled upload: one info line naming it, nothing at error level, nothing kept', async () => {
  const token = server.token();
  const url = new URL(`${server.baseUrl}/assemblies`);
  const before = readdirSync(server.dataDir, { recursive: true }).length;
  const id = 'cancelled-upload-1';
  await new Promise<void>((done) => {
    const req = request({
      host: '127.0.0.1',
      port: url.port,
      path: url.pathname,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'x-request-id': id, 'content-type': 'multipart/form-data; boundary=b0undary', 'content-length': '1000000' },
    });
    req.on('error', () => done());
    req.write(
      `--b0undary\r\nContent-Disposition: form-data; name="files"; filename="Addin.dll"\r\nContent-Type: application/octet-stream\r\n\r\n${'x'.repeat(50_000)}`,
    );
    setTimeout(() => {
      req.destroy();
      done();
    }, 300);
  });
  await waitUntil(
    'the line about the client',
    () => lines.some((l) => l.reqId === id && l.msg.startsWith('the client went away')),
    () => lines,
  );
  const ofRequest = lines.filter((l) => l.reqId === id);
  expect(ofRequest.filter((l) => l.level >= 40)).toEqual([]);
  expect(ofRequest.filter((l) => l.msg.startsWith('the client went away'))).toHaveLength(1);
  expect(JSON.stringify(ofRequest)).not.toContain('storage does not answer');
  // Nothing of it in the data folder (the job folder and its temporary files are gone), and the node serves on.
  await waitUntil(
    'the half upload to be removed',
    () => readdirSync(server.dataDir, { recursive: true }).length <= before,
    () => readdirSync(server.dataDir, { recursive: true }),
  );
  expect((await api(server, '/licenses', token)).status).toBe(200);
});
