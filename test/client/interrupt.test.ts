// Ctrl-C in every phase of `signgate sign` (the built CLI against `serve` on 127.0.0.1, through a loopback proxy
// that holds one request so that the run is surely in that phase): each says what is true, and the next run of the
// same command loses nothing and uploads nothing twice.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCliAsync } from '../helpers/fixtures.js';
import { api, startServer, type TestServer } from '../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin');

let server: TestServer;
let token: string;
let proxy: Server;
let proxyBase: string;
/** The request the proxy holds: before forwarding it, or (after) forwarding it and holding the answer. */
let hold: { match: (req: IncomingMessage) => boolean; after: boolean; seen: () => void } | undefined;

beforeAll(async () => {
  server = await startServer();
  token = server.token();
  const target = new URL(server.baseUrl);
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const h = hold && hold.match(req) ? hold : undefined;
    if (h && !h.after) return h.seen(); // never answered
    const upstream = await fetch(new URL(req.url!, target.origin), {
      method: req.method!,
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k)) as [string, string][],
      ),
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (h) return h.seen(); // the service did it; the client never hears
    res.writeHead(
      upstream.status,
      Object.fromEntries([...upstream.headers].filter(([k]) => !['content-encoding', 'transfer-encoding', 'content-length'].includes(k))),
    );
    res.end(body);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyBase = `http://127.0.0.1:${(proxy.address() as { port: number }).port}${new URL(server.baseUrl).pathname}`;
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await server.close();
});

const jobsOnServer = async () => (await (await api(server, '/assemblies', token)).json()) as { id: string; comment: string | null }[];

/** Runs sign through the proxy, holds the request `match` picks, sends SIGINT once it is held. */
async function interruptAt(
  match: (req: IncomingMessage) => boolean,
  after: boolean,
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; signal: string | null; stderr: string }> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1', ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout.resume();
  hold = { match, after, seen: () => child.kill('SIGINT') };
  const [status, signal] = await new Promise<[number | null, string | null]>((r) => child.on('close', (code, sig) => r([code, sig])));
  hold = undefined;
  return { status, signal, stderr };
}

function run(comment: string) {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-interrupt-'));
  const env = { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: token };
  // A comment of its own per test: the Idempotency-Key of each test's upload is its own.
  const args = [
    'sign',
    ADDIN,
    '--root',
    ADDIN,
    '--vendor',
    'Contoso',
    '--key',
    KEY,
    '--base-url',
    proxyBase,
    '--destination-path',
    join(dir, 'out'),
    '--poll-interval',
    '50',
    '--comment',
    comment,
  ];
  return { dir, env, args };
}

const isGet = (suffix: RegExp) => (req: IncomingMessage) => req.method === 'GET' && suffix.test(req.url!);

describe('Ctrl-C in every phase of sign says what is true and loses nothing', () => {
  test('before the upload (waiting for the licenses): nothing was sent; nothing is on the service', async () => {
    const w = run('interrupt before upload');
    const r = await interruptAt(isGet(/\/licenses$/), false, w.args, w.env);
    expect(r.status).toBe(130);
    expect(r.stderr).toContain('interrupted before any upload: nothing was sent to the service');
    expect((await jobsOnServer()).filter((j) => j.comment === 'interrupt before upload')).toEqual([]);
  });

  test('during the upload, after the service made the job: said it may be kept, and the next run gets that very job back', async () => {
    const w = run('interrupt during upload');
    const r = await interruptAt((req) => req.method === 'POST' && /\/assemblies$/.test(req.url!), true, w.args, w.env);
    expect(r.status).toBe(130);
    expect(r.stderr).not.toContain('nothing is kept');
    expect(r.stderr).toContain('interrupted during the upload of 6 file(s): the service may have made the job already');
    expect(r.stderr).toContain('same Idempotency-Key');
    expect(r.stderr).toContain("'signgate jobs list'");
    const made = (await jobsOnServer()).filter((j) => j.comment === 'interrupt during upload');
    expect(made).toHaveLength(1);
    const again = await runCliAsync(w.args, { env: w.env });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain(`as job ${made[0]!.id}`);
    expect((await jobsOnServer()).filter((j) => j.comment === 'interrupt during upload')).toHaveLength(1);
  });

  for (const [phase, match] of [
    ['while polling', isGet(/\/assemblies\/[^/]+\/status$/)],
    ['while downloading', isGet(/\/assemblies\/[^/]+$/)],
  ] as const) {
    test(`${phase}: the job id, that it is kept, how to resume or delete it; the next run resumes it`, async () => {
      const comment = `interrupt ${phase}`;
      const w = run(comment);
      const r = await interruptAt(match, false, w.args, w.env);
      expect(r.status).toBe(130);
      const made = (await jobsOnServer()).filter((j) => j.comment === comment);
      expect(made).toHaveLength(1);
      const id = made[0]!.id;
      expect(r.stderr).toContain(
        `interrupted: job ${id} is kept on the service and in the job ledger (${join(w.env.SIGNGATE_CACHE_DIR, 'jobs.json')}); run the same command again to resume it (nothing is uploaded again), or remove it with 'signgate jobs delete ${id}'`,
      );
      const again = await runCliAsync(w.args, { env: w.env });
      expect(again.status, again.stderr).toBe(0);
      expect(again.stderr).toContain(`resuming job ${id}`);
      expect(again.stdout).toContain('6 uploaded in 1 job(s): 6 signed and verified, 0 failed');
      expect((await jobsOnServer()).filter((j) => j.comment === comment)).toHaveLength(1);
    });
  }

  test('while deleting the job afterwards: the results are saved, the job may still be there and how to delete it', async () => {
    const w = run('interrupt while deleting');
    const r = await interruptAt((req) => req.method === 'DELETE', false, [...w.args, '--delete-afterwards'], w.env);
    expect(r.status).toBe(130);
    const id = (await jobsOnServer()).find((j) => j.comment === 'interrupt while deleting')!.id;
    expect(r.stderr).toContain(`interrupted while deleting job ${id}: its results are saved in `);
    expect(r.stderr).toContain(`'signgate jobs delete ${id}' removes it`);
  });
});
