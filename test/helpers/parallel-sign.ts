// `signgate sign` runs at once on one job ledger (projects of a solution built in parallel, CI jobs on one agent),
// against one service or against two answering at one address (a fork: the same record key, another history, or
// another key), through a loopback proxy that routes each run's requests by its token and holds every download until
// each run has asked for its own: so every run has read the ledger's record pin before any run keeps a checkpoint.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { fixturePath, runCliAsync, type CliResult } from './fixtures.js';
import { forward } from './proxy.js';
import { startServer, type TestServer } from './server.js';
import { WAIT_CEILING_MS } from './wait.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin/SampleAddin.dll');

/** The 16 bytes of a GUID in registry format as the #GUID heap holds them (the first three fields little-endian). */
function guidBytes(text: string): Buffer {
  const h = text.replace(/-/g, '');
  const b = Buffer.from(h, 'hex');
  return Buffer.concat([
    Buffer.from(b.subarray(0, 4)).reverse(),
    Buffer.from(b.subarray(4, 6)).reverse(),
    Buffer.from(b.subarray(6, 8)).reverse(),
    b.subarray(8),
  ]);
}

/**
 * `n` copies of the sample add-in, each in a folder of its own and with a module version id of its own: n
 * projects' outputs, n jobs whose files the ledger tells apart (same name, other SHA-256).
 */
export function addinCopies(dir: string, n: number): string[] {
  const bytes = readFileSync(ADDIN);
  const mvid = inspectAssembly(bytes, ADDIN).module?.mvid;
  if (!mvid) throw new Error(`${ADDIN} has no module version id`);
  const at = bytes.indexOf(guidBytes(mvid));
  if (at < 0 || bytes.indexOf(guidBytes(mvid), at + 1) >= 0) throw new Error(`the module version id of ${ADDIN} is not found once in its bytes`);
  return Array.from({ length: n }, (_, i) => {
    const copy = Buffer.from(bytes);
    copy.writeUInt32LE(0x51600000 + i, at);
    const folder = join(dir, `project-${i + 1}`);
    mkdirSync(folder, { recursive: true });
    const path = join(folder, 'SampleAddin.dll');
    writeFileSync(path, copy);
    return path;
  });
}

/** Two services whose record keys are the same file (a fork of one deployment), or two keys when `sameKey` is false. */
export async function twoServices(dir: string, sameKey: boolean): Promise<[TestServer, TestServer]> {
  const a = await startServer({ dataDir: join(dir, 'data-a') });
  const bDir = join(dir, 'data-b');
  if (sameKey) {
    mkdirSync(bDir, { recursive: true, mode: 0o700 });
    for (const name of ['record-key.pem', 'record-key.pub']) copyFileSync(join(a.dataDir, name), join(bDir, name));
  }
  const b = await startServer({ dataDir: bDir });
  return [a, b];
}

export interface SplitProxy {
  readonly baseUrl: string;
  close(): Promise<void>;
}

/**
 * A proxy on loopback in front of `services`: a request goes to the service whose token it carries (the first when
 * none does). A download (GET /assemblies/<id>) waits until `downloads` of them were asked for, or the wait
 * ceiling passed (a run that failed before its download does not hold the others for good).
 */
export async function startSplitProxy(services: readonly { server: TestServer; token: string }[], downloads: number): Promise<SplitProxy> {
  const held: (() => void)[] = [];
  const release = () => {
    for (const go of held.splice(0)) go();
  };
  const ceiling = setTimeout(release, WAIT_CEILING_MS);
  let asked = 0;
  const server: Server = createServer((req, res) => {
    const auth = req.headers.authorization;
    const target = new URL((services.find((s) => auth === `Bearer ${s.token}`) ?? services[0]!).server.baseUrl).origin;
    const send = () => forward(req, res, target);
    if (req.method === 'GET' && /\/assemblies\/[^/?]+$/.test(req.url ?? '')) {
      held.push(send);
      if (++asked >= downloads) release();
    } else send();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const prefix = new URL(services[0]!.server.baseUrl).pathname;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    close: () => {
      clearTimeout(ceiling);
      release();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

export interface RunResult extends CliResult {
  /** The files the run wrote to its destination. */
  readonly written: string[];
}

/** `signgate sign <file>` through `baseUrl` with `token`, the job ledger in `cache`, the result in `out`. */
export async function signOnce(file: string, baseUrl: string, token: string, cache: string, out: string): Promise<RunResult> {
  const r = await runCliAsync(
    ['sign', file, '--vendor', 'Contoso', '--key', KEY, '--base-url', baseUrl, '--destination-path', out, '--poll-interval', '20', '--verbose'],
    { env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: cache } },
  );
  return { ...r, written: existsSync(out) ? readdirSync(out) : [] };
}

export interface LedgerDoc {
  jobs: { jobId: string; state: string }[];
  recordCheckpoints?: Record<string, { publicKey: string; size: number; root: string }>;
}

export const readLedgerDoc = (cache: string): LedgerDoc => JSON.parse(readFileSync(join(cache, 'jobs.json'), 'utf8')) as LedgerDoc;

/** The size and root (base64) of a service's latest checkpoint, as GET /record/checkpoint signs it. */
export async function currentCheckpoint(server: TestServer, token: string): Promise<{ size: number; root: string }> {
  const answer = (await (await fetch(`${server.baseUrl}/record/checkpoint`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    checkpoint: string;
  };
  const [, size, root] = answer.checkpoint.split('\n');
  return { size: Number(size), root: root! };
}

const cleanups: (() => unknown)[] = [];
// The folders, services and proxies of a test file's cases go after its tests.
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A folder of its own for one of the cases below. */
export function parallelWork(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-parallel-sign-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `runs` runs at once against a service through the proxy: each passes, each job is in the ledger, the pin is the service's latest checkpoint. */
export async function parallelAgainstHonest(dir: string, runs: number): Promise<void> {
  const server = await startServer({ dataDir: join(dir, 'data') });
  cleanups.push(() => server.close());
  const token = server.token();
  const proxy = await startSplitProxy([{ server, token }], runs);
  cleanups.push(() => proxy.close());
  const cache = join(dir, 'cache');
  const files = addinCopies(dir, runs);
  const results = await Promise.all(files.map((file, i) => signOnce(file, proxy.baseUrl, token, cache, join(dir, `out-${i + 1}`))));
  for (const r of results) {
    expect(r.status, r.stderr).toBe(0);
    expect(r.written).toContain('SampleAddin.dll');
  }
  const ledger = readLedgerDoc(cache);
  expect(ledger.jobs).toHaveLength(runs);
  expect(new Set(ledger.jobs.map((j) => j.jobId)).size).toBe(runs);
  expect(ledger.jobs.map((j) => j.state)).toEqual(Array(runs).fill('verified'));
  const pins = Object.values(ledger.recordCheckpoints ?? {});
  expect(pins).toHaveLength(1);
  expect(pins[0]).toMatchObject(await currentCheckpoint(server, token));
  expect(pins[0]!.size).toBe(runs);
}

/**
 * `perSide` runs against each of two services at one address (the same record key with `sameKey`, else two keys),
 * at once, on a ledger with no pin: the runs of one side pass, every run of the other is refused with a sequential
 * run's error and writes nothing, and the pin is the passing side's latest checkpoint.
 */
export async function parallelAgainstFork(dir: string, perSide: number, sameKey: boolean): Promise<void> {
  const servers = await twoServices(dir, sameKey);
  for (const s of servers) cleanups.push(() => s.close());
  const sides = servers.map((server) => ({ server, token: server.token() }));
  const proxy = await startSplitProxy(sides, 2 * perSide);
  cleanups.push(() => proxy.close());
  const cache = join(dir, 'cache');
  const files = addinCopies(dir, 2 * perSide);
  const results = await Promise.all(
    files.map((file, i) => signOnce(file, proxy.baseUrl, sides[i % 2]!.token, cache, join(dir, `out-${i + 1}`)).then((r) => ({ ...r, side: i % 2 }))),
  );
  const passed = (side: number) => results.filter((r) => r.side === side && r.status === 0).length;
  // One side won the pin (the first run to keep a checkpoint); every run of the other is refused.
  const winner = passed(0) > 0 ? 0 : 1;
  expect(
    results.map((r) => ({ side: r.side, status: r.status })),
    results.map((r) => r.stderr).join('\n----\n'),
  ).toEqual(results.map((r) => ({ side: r.side, status: r.side === winner ? 0 : 3 })));
  const sequential = sameKey
    ? /its record was rewritten|the service's record was rolled back/
    : /is not signed by the record key signgate-record-[0-9a-f]{8} \(key id [0-9a-f]{8}\), the key pinned for it on .*: the service changed its record key, or another service answers at this address/;
  for (const r of results.filter((x) => x.side !== winner)) {
    expect(r.stderr).toContain('SG_ERR_RECORD_PROOF');
    expect(r.stderr).toMatch(sequential);
    expect(r.stderr).toContain('nothing of job');
    expect(r.written).toEqual([]);
  }
  const pins = Object.values(readLedgerDoc(cache).recordCheckpoints ?? {});
  expect(pins).toHaveLength(1);
  expect(pins[0]).toMatchObject(await currentCheckpoint(sides[winner]!.server, sides[winner]!.token));
  expect(pins[0]!.publicKey).toBe(readFileSync(join(sides[winner]!.server.dataDir, 'record-key.pub'), 'utf8').trim());
}
