// Limits under concurrency, crashes and restarts, and what the logs may contain.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { fixture, fixturePath, repoRoot } from '../../helpers/fixtures.js';
import { api, sandboxConfig, startServer, uploadForm, waitFinished } from '../../helpers/server.js';
import { dataDirOnly } from '../../helpers/database.js';

const addin = () => [{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }];
const jobs = (dataDir: string, org = 'sandbox') => (existsSync(join(dataDir, 'jobs', org)) ? readdirSync(join(dataDir, 'jobs', org)) : []);

describe('the job limit', () => {
  test('50 concurrent uploads against a limit of 20: exactly 20 jobs and 30 clear refusals', async () => {
    const server = await startServer({ config: sandboxConfig((c) => (c.limits = { maxJobsPerOrganization: 20 })) });
    try {
      const token = server.token();
      const responses = await Promise.all(Array.from({ length: 50 }, () => api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })));
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 201).length).toBe(20);
      expect(statuses.filter((s) => s === 409).length).toBe(30);
      const refusal = await responses.find((r) => r.status === 409)!.json();
      expect(refusal.detail).toContain('keeps 20 jobs');
      expect(jobs(server.dataDir).length).toBe(20);
      expect((await (await api(server, '/assemblies', token)).json()).length).toBe(20);
      // Deleting one frees exactly one slot.
      const id = (await responses.find((r) => r.status === 201)!.json()).id;
      await waitFinished(server, token, id);
      expect((await api(server, `/assemblies/${id}`, token, { method: 'DELETE' })).status).toBe(204);
      expect((await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).status).toBe(201);
      expect((await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).status).toBe(409);
    } finally {
      await server.close();
    }
  });
});

describe('refusals reach the client', () => {
  test('a 3 MB upload refused for the job limit (or a bad token) gets its 409 (401), not a broken pipe', async () => {
    const server = await startServer({ config: sandboxConfig((c) => (c.limits = { maxJobsPerOrganization: 1 })) });
    try {
      const token = server.token();
      expect((await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).status).toBe(201);
      const big = [{ name: 'Big.dll', bytes: new Uint8Array(3 * 1024 * 1024) }];
      for (let i = 0; i < 5; i++) {
        expect((await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(big) })).status).toBe(409);
        expect((await api(server, '/assemblies', 'sgt_unknown', { method: 'POST', body: uploadForm(big) })).status).toBe(401);
      }
    } finally {
      await server.close();
    }
  });
});

describe('restarts', () => {
  test('a job acknowledged but not processed is processed after a restart', async () => {
    const first = await startServer();
    const token = first.token();
    await first.app.signgate.worker.stop();
    const { id } = await (await api(first, '/assemblies', token, { method: 'POST', body: uploadForm(addin()) })).json();
    await first.close();
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const status = await waitFinished(second, token, id);
      expect(status.processingFinished).toBe(true);
      expect(status.assemblies[0]!.fileProcessingState).toBe('Signed');
    } finally {
      await second.close();
    }
  });

  dataDirOnly('killed with SIGKILL during an upload, the restarted service shows no half job', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-kill-'));
    const config = fixturePath('server/sandbox.json');
    const token = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [
        join(repoRoot, 'bin/signgate.js'),
        'serve',
        'token',
        'create',
        '--config',
        config,
        '--data-dir',
        dataDir,
        '--org',
        'sandbox',
        '--user',
        'ci',
      ]);
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`token create exited ${code}`))));
    });
    const child = spawn(process.execPath, [join(repoRoot, 'bin/signgate.js'), 'serve', '--config', config, '--data-dir', dataDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The start line is a line of its JSON log, on stdout.
    const port = await new Promise<number>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        const m = /127\.0\.0\.1:(\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      });
    });
    // Start a multipart upload and send only part of it, then kill the service.
    const boundary = 'signgateboundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="Half.dll"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/assembly-signing/v1.0/assemblies',
      headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': 10_000_000 },
    });
    req.on('error', () => {});
    req.write(head);
    req.write(Buffer.alloc(512 * 1024, 7));
    await new Promise((r) => setTimeout(r, 300));
    const tmpEntries = readdirSync(join(dataDir, 'tmp'));
    expect(tmpEntries.length).toBe(1); // the upload was being written
    child.kill('SIGKILL');
    await new Promise((r) => child.on('close', r));
    expect(jobs(dataDir)).toEqual([]);
    const restarted = await startServer({ dataDir });
    try {
      expect(await (await api(restarted, '/assemblies', token)).json()).toEqual([]);
      await new Promise((r) => setTimeout(r, 100));
      expect(readdirSync(join(dataDir, 'tmp'))).toEqual([]);
    } finally {
      await restarted.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM during an upload lets it finish, acknowledges it, then exits 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-term-'));
    const config = fixturePath('server/sandbox.json');
    const token = await new Promise<string>((resolve) => {
      const p = spawn(process.execPath, [
        join(repoRoot, 'bin/signgate.js'),
        'serve',
        'token',
        'create',
        '--config',
        config,
        '--data-dir',
        dataDir,
        '--org',
        'sandbox',
        '--user',
        'ci',
      ]);
      let out = '';
      p.stdout.on('data', (d) => (out += d));
      p.on('close', () => resolve(out.trim()));
    });
    const child = spawn(process.execPath, [join(repoRoot, 'bin/signgate.js'), 'serve', '--config', config, '--data-dir', dataDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const port = await new Promise<number>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        const m = /127\.0\.0\.1:(\d+)/.exec(d.toString());
        if (m) resolve(Number(m[1]));
      }),
    );
    const boundary = 'signgateboundary';
    const dll = Buffer.from(fixture('findings/passing/FindingAddin.dll'));
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files[0]"; filename="FindingAddin.dll"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/assembly-signing/v1.0/assemblies',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': `multipart/form-data; boundary=${boundary}`,
            'content-length': head.length + dll.length + tail.length,
          },
        },
        (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write(head);
      req.write(dll.subarray(0, 1000));
      setTimeout(() => {
        child.kill('SIGTERM');
        setTimeout(() => {
          req.write(dll.subarray(1000));
          req.end(tail);
        }, 300);
      }, 200);
    });
    const result = await response;
    expect(result.status).toBe(201);
    const exitCode = await new Promise((r) => child.on('close', r));
    expect(exitCode).toBe(0);
    expect(jobs(dataDir).length).toBe(1);
  });
});

describe('logs', () => {
  test('request logs carry no token and no file contents', async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _e, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    const server = await startServer({ logger: { level: 'trace', stream } });
    try {
      const token = server.token();
      const marker = 'FILE-CONTENT-MARKER-7d1f';
      const bytes = Buffer.concat([Buffer.from(fixture('findings/passing/FindingAddin.dll')), Buffer.from(marker)]);
      const { id } = await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: 'FindingAddin.dll', bytes }]) })).json();
      await waitFinished(server, token, id);
      await api(server, '/licenses', 'sgt_wrong-token-value');
      const all = lines.join('');
      expect(lines.length).toBeGreaterThan(5);
      expect(all).not.toContain(token);
      expect(all).not.toContain('sgt_wrong-token-value');
      expect(all).not.toContain(marker);
      expect(all).toContain('job accepted');
    } finally {
      await server.close();
    }
  });
});
