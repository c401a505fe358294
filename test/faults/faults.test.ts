// Faults with real processes on 127.0.0.1: `signgate serve` and `signgate sign` as an operator and a CI job run
// them, a data folder on a small tmpfs that fills up, an HTTP proxy that loses the answer to an upload, kill -9
// of the service with a job in flight. Each case counts the jobs submitted, completed, lost and duplicated, and
// verifies every returned file (no corruption).
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { fixturePath, runCli, runCliAsync } from '../helpers/fixtures.js';
import { cliToken, editConfig, sandboxConfigCopy, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { waitUntil } from '../helpers/wait.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin/SampleAddin.dll');
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** `count` copies of the sample add-in under other names: a job of known size. */
function addinCopies(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-faults-in-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  for (let i = 0; i < count; i++) copyFileSync(ADDIN, join(dir, `Addin${String(i).padStart(4, '0')}.dll`));
  return dir;
}

/** The jobs the service keeps for the token's organization. */
async function jobsOf(baseUrl: string, token: string): Promise<number> {
  const response = await fetch(`${baseUrl}/assemblies`, { headers: { authorization: `Bearer ${token}` } });
  return ((await response.json()) as unknown[]).length;
}

/** Every returned file verifies with the option key (nothing corrupted). */
function verified(folder: string): number {
  const r = runCli(['verify', folder, '--key', KEY, '--json']);
  expect(r.status, r.stdout.slice(0, 2000) + r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as unknown[]).length;
}

/** A tmpfs of `mb` MiB (root may mount one; elsewhere undefined). */
function smallDisk(mb: number): Promise<string | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-tmpfs-'));
  const mount = spawn('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { stdio: 'ignore' });
  return new Promise((resolve) => {
    mount.on('error', () => resolve(undefined));
    mount.on('close', (code) => resolve(code === 0 ? dir : undefined));
  });
}

describe('faults', () => {
  test('the data disk fills up while the result package is written: the job is retried and finishes once there is room, without a restart; /readyz says 503 while full', async () => {
    const disk = await smallDisk(8);
    if (!disk) {
      if (process.env.CI) throw new Error('CI runs as root and must be able to mount a tmpfs for the full-disk case');
      console.warn('skipping the full-disk case: mounting a tmpfs needs root');
      return;
    }
    cleanups.push(() => new Promise((r) => spawn('umount', ['-l', disk]).on('close', r)));
    const config = sandboxConfigCopy();
    // Readiness asks for room for an upload and its result package: 2 × 1.5 MB on this 8 MB disk.
    editConfig(config, (raw) => (raw.limits = { ...raw.limits, maxUploadBytes: 1_500_000 }));
    const dataDir = join(disk, 'data');
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    const service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
    cleanups.push(() => stopServiceProcess(service));
    const input = addinCopies(300);
    // Room for the upload (300 pages and the job file) but not for the result package beside it.
    const free = () => {
      const s = statfsSync(disk);
      return Number(s.bavail) * Number(s.bsize);
    };
    const filler = join(disk, 'filler');
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - (300 * 4096 + 300 * 1024))));
    const out = mkdtempSync(join(tmpdir(), 'signgate-faults-out-'));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const signing = runCliAsync(
      [
        'sign',
        input,
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--base-url',
        service.baseUrl,
        '--destination-path',
        out,
        '--timeout',
        '90',
        '--poll-interval',
        '200',
      ],
      {
        env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(out, '..', `${out.split('/').pop()}-cache`) },
      },
    );
    await waitUntil(
      'the first failed attempt in the log',
      () => service.stdout().includes('job processing failed; it is queued again'),
      () => service.stdout(),
    );
    expect(service.stdout()).toContain('ENOSPC');
    const ready = await fetch(`http://127.0.0.1:${service.port}/readyz`);
    expect(ready.status).toBe(503);
    rmSync(filler);
    const r = await signing;
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(verified(out)).toBe(300);
    expect(await jobsOf(service.baseUrl, token)).toBe(1);
    expect((await fetch(`http://127.0.0.1:${service.port}/readyz`)).status).toBe(200);
  });

  test('the answer to the upload is lost (the connection cut after the job was stored): the client sends it again and gets the same job', async () => {
    const config = sandboxConfigCopy();
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-faults-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    const service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
    cleanups.push(() => stopServiceProcess(service));
    // A proxy that forwards everything, but cuts the connection of the first upload once the service answered it.
    let uploads = 0;
    const proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
      const isUpload = req.method === 'POST' && req.url?.endsWith('/assemblies');
      const first = isUpload && ++uploads === 1;
      const upstream = httpRequest({ host: '127.0.0.1', port: service.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        if (first) {
          answer.resume();
          answer.on('end', () => res.socket?.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => proxy.close(r)));
    const viaProxy = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/assembly-signing/v1.0`;
    const out = mkdtempSync(join(tmpdir(), 'signgate-faults-out-'));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const r = await runCliAsync(
      ['sign', addinCopies(3), '--vendor', 'Contoso', '--key', KEY, '--base-url', viaProxy, '--destination-path', out, '--poll-interval', '100'],
      {
        env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(dataDir, 'client-cache') },
      },
    );
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(uploads).toBe(2);
    expect(await jobsOf(service.baseUrl, token)).toBe(1); // not two: the second upload got the first job back
    expect(service.stdout()).toContain('upload repeated with its Idempotency-Key');
    expect(verified(out)).toBe(3);
  });

  test('kill -9 of the service with a job in flight, then a restart on the same data folder: the client resumes and gets every file', async () => {
    const config = sandboxConfigCopy();
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-faults-data-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    let service: ServiceProcess = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
    const port = service.port;
    const out = mkdtempSync(join(tmpdir(), 'signgate-faults-out-'));
    cleanups.push(() => rmSync(out, { recursive: true, force: true }));
    const cache = join(dataDir, 'client-cache');
    let client: ChildProcess | undefined;
    const signing = runCliAsync(
      [
        'sign',
        addinCopies(200),
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--base-url',
        service.baseUrl,
        '--destination-path',
        out,
        '--poll-interval',
        '100',
        '--timeout',
        '90',
      ],
      {
        env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: cache },
        started: (child) => (client = child),
      },
    );
    await waitUntil(
      'the upload accepted in the log',
      () => service.stdout().includes('job accepted'),
      () => service.stdout(),
    );
    // The client retries an unreachable service for about 7 s (its policy); a loaded machine may take longer to start
    // the service again. Paused from just before the kill to the restart, the client finds its connection dead and
    // retries against the restarted service, however long the restart took.
    client!.kill('SIGSTOP');
    try {
      await stopServiceProcess(service, 'SIGKILL');
      service = await startServiceProcess(['--config', config, '--data-dir', dataDir, '--port', String(port)]);
    } finally {
      client!.kill('SIGCONT');
    }
    cleanups.push(() => stopServiceProcess(service));
    const r = await signing;
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(await jobsOf(service.baseUrl, token)).toBe(1);
    expect(verified(out)).toBe(200);
    expect(existsSync(cache) ? readdirSync(cache).filter((n) => /download-/.test(n)) : []).toEqual([]);
  });
});
