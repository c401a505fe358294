// `signgate jobs download` verifies as `sign` does before it writes anything: the job's signature record (each
// returned file's SHA-256 its entry's signedSha256) and each file's verdict (signed with the option's key, the
// signature valid, and, when the job ledger knows the upload, changed in nothing else). A lying proxy in front of the
// real service on loopback changes the result package; each lie is refused and nothing is written.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { fixture, fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { startLyingProxy, type Lie } from '../helpers/proxy.js';
import { api, startServer, uploadForm, waitFinished, type TestServer } from '../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
let server: TestServer;
let work: string;
let proxy: Awaited<ReturnType<typeof startLyingProxy>>;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'signgate-jobs-download-'));
  server = await startServer({ dataDir: join(work, 'data') });
  proxy = await startLyingProxy(server.baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
  rmSync(work, { recursive: true, force: true });
});

/** The last byte of each DLL in the result package flipped: inside what the strong-name signature covers. */
const flipLie: Lie = (path, body) => {
  if (path.endsWith('/status')) return body;
  const files = unzipSync(body);
  for (const [name, bytes] of Object.entries(files)) if (/\.dll$/i.test(name)) bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x5a;
  return Buffer.from(zipSync(files));
};
/** The status without its signature record (a service that keeps none, to a client that pinned none). */
const noRecord: Lie = (path, body) => {
  if (!path.endsWith('/status')) return body;
  const status = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  delete status.signatureRecord;
  return Buffer.from(JSON.stringify(status));
};

function client(name: string) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const env = { SIGNGATE_ACCESS_TOKEN: server.token(), SIGNGATE_CACHE_DIR: join(dir, 'cache') };
  const out = join(dir, 'out');
  const download = (id: string, ...extra: string[]) =>
    runCliAsync(['jobs', 'download', id, '--base-url', proxy.baseUrl, '--destination-path', out, ...extra], { env, cwd: dir });
  return { dir, env, out, download, written: () => (existsSync(out) ? readdirSync(out) : []) };
}

/** A job uploaded through the API (so no job ledger knows it), finished. */
async function uploadedElsewhere(): Promise<string> {
  const token = server.token();
  const answer = await api(server, '/assemblies', token, {
    method: 'POST',
    body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]),
  });
  const { id } = (await answer.json()) as { id: string };
  await waitFinished(server, token, id);
  return id;
}

test('without a key file it refuses before any request, naming --key', async () => {
  const c = client('no-key');
  const r = await c.download(await uploadedElsewhere());
  expect(r.status, r.stderr).toBe(2);
  expect(r.stderr).toContain('Pass --key <optionId>_public.snk');
  expect(c.written()).toEqual([]);
});

test('a file whose signature does not verify, from a service without a record: exit 1, the file named, nothing written', async () => {
  const c = client('bad-signature');
  const id = await uploadedElsewhere();
  proxy.lie((path, body, res) => flipLie(path, noRecord(path, body, res), res));
  try {
    const r = await c.download(id, '--key', KEY);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL FindingAddin\.dll {2}the signature does not verify/);
    expect(r.stdout).toContain('nothing was written');
    expect(c.written()).toEqual([]);
  } finally {
    proxy.lie((_path, body) => body);
  }
});

test("a file whose SHA-256 is not its record entry's signedSha256: SG_ERR_RECORD_PROOF, nothing written", async () => {
  const c = client('bad-record');
  const id = await uploadedElsewhere();
  proxy.lie(flipLie);
  try {
    const r = await c.download(id, '--key', KEY);
    expect(r.status, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toContain('SG_ERR_RECORD_PROOF');
    expect(r.stderr).toMatch(/FindingAddin\.dll came back with SHA-256 [0-9a-f]{64}, but entry \d+ of the signature record says the service signed it as/);
    expect(c.written()).toEqual([]);
  } finally {
    proxy.lie((_path, body) => body);
  }
});

test('an honest job uploaded elsewhere: its record and signature checked, then written; another key is refused', async () => {
  const c = client('honest');
  const id = await uploadedElsewhere();
  const wrong = await c.download(id, '--key', fixturePath('test-keys/67890_public.snk'));
  expect(wrong.status, wrong.stdout + wrong.stderr).toBe(1);
  expect(wrong.stdout).toContain("FAIL FindingAddin.dll  the returned file is not signed with one of the organization's keys");
  expect(c.written()).toEqual([]);
  const r = await c.download(id, '--key', KEY);
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(r.stderr).toMatch(/signature record: 1 entry of job .* first contact/);
  expect(r.stdout).toContain('ok   FindingAddin.dll  signed and verified (its signature and key; the upload is not in the job ledger here');
  expect(r.stdout).toContain('2 file(s) verified and extracted into out');
  expect(c.written().sort()).toEqual(['FindingAddin.dll', 'signing-log.txt']);
});

test('a job sign left on the service: compared with the upload the job ledger knows, as sign compares it', async () => {
  const c = client('from-sign');
  const signed = await runCliAsync(
    [
      'sign',
      fixturePath('findings/passing/FindingAddin.dll'),
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--base-url',
      proxy.baseUrl,
      '--destination-path',
      'first',
      '--poll-interval',
      '20',
    ],
    { env: c.env, cwd: c.dir },
  );
  expect(signed.status, signed.stderr).toBe(0);
  expect(existsSync(join(c.dir, 'first', 'FindingAddin.dll'))).toBe(true);
  const ledger = JSON.parse(readFileSync(join(c.env.SIGNGATE_CACHE_DIR, 'jobs.json'), 'utf8')) as { jobs: { jobId: string }[] };
  const r = await runCliAsync(['jobs', 'download', ledger.jobs[0]!.jobId, '--base-url', proxy.baseUrl, '--destination-path', c.out, '--key', KEY, '--json'], {
    env: c.env,
    cwd: c.dir,
  });
  expect(r.status, r.stdout + r.stderr).toBe(0);
  const result = JSON.parse(r.stdout) as { written: boolean; files: { name: string; verified: boolean; comparedWithUpload: boolean }[] };
  expect(result.written).toBe(true);
  expect(result.files).toEqual([{ name: 'FindingAddin.dll', state: 'Signed', verified: true, reason: null, comparedWithUpload: true }]);
});
