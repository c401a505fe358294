// `signgate sign`, `licenses` and `jobs` through the built CLI against `signgate serve` started in this
// process on 127.0.0.1 (port 0): no mocked fetch anywhere.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { existsSync, readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { schemaValidator } from '../helpers/schemas.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { fixture, fixturePath, runCliAsync, clientWorkdir } from '../helpers/fixtures.js';
import { buildZip } from '../helpers/hostile-zip.js';
import { startProxy } from '../helpers/proxy.js';
import { api, sandboxConfig, startServer, uploadForm, waitFinished, type TestServer } from '../helpers/server.js';

const workdir = () => clientWorkdir('signgate-sign-', token);

const KEY = fixturePath('test-keys/12345_public.snk');
const key12345 = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
const validateResult = schemaValidator('sign-result.schema.json');

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  token = server.token();
});
afterAll(() => server.close());

const signArgs = (baseUrl: string, out: string, ...extra: string[]) => [
  'sign',
  '--vendor',
  'Contoso',
  '--key',
  KEY,
  '--base-url',
  baseUrl,
  '--destination-path',
  out,
  '--poll-interval',
  '50',
  ...extra,
];
const jobsOnServer = async (s: TestServer, t = token) => (await (await api(s, '/assemblies', t)).json()) as { id: string }[];

describe('a check that stops the run', () => {
  test('sign --json prints the one document all the same: the check with its findings, nothing uploaded, exit 1', async () => {
    const w = workdir();
    const before = (await jobsOnServer(server)).length;
    const r = await runCliAsync([...signArgs(server.baseUrl, w.out, fixturePath('findings/missing-vendor-attribute'), '--json')], { env: w.env });
    expect(r.status, r.stderr).toBe(1);
    const result = JSON.parse(r.stdout);
    expect(validateResult(result), JSON.stringify(validateResult.errors)).toBe(true);
    expect(result.stoppedByCheck).toBe(true);
    expect(result.blocking).toBeGreaterThan(0);
    expect(result.check.summary.errors).toBe(result.blocking);
    expect(result.check.files.flatMap((f: { findings: { ruleId: string }[] }) => f.findings.map((x) => x.ruleId))).toContain('SG301');
    expect(result.jobs).toEqual([]);
    expect(r.stderr).toContain(`the pre-flight check found ${result.blocking} error(s); nothing was uploaded`);
    expect((await jobsOnServer(server)).length).toBe(before);
  });
});

describe('the happy path', () => {
  test('signs the sample add-in folder, verifies every file, deletes the job afterwards', async () => {
    const w = workdir();
    const before = (await jobsOnServer(server)).length;
    const r = await runCliAsync([...signArgs(server.baseUrl, w.out, fixturePath('addin'), '--root', fixturePath('addin'), '--delete-afterwards', '--json')], {
      env: w.env,
    });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(validateResult(result), JSON.stringify(validateResult.errors)).toBe(true);
    expect(result.summary).toEqual({ files: 8, uploaded: 6, signed: 6, verified: 6, failed: 0, notUploaded: 2 });
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'de/SampleAddin.resources.dll', 'AddinTool.exe']) {
      const bytes = readFileSync(join(w.out, name));
      expect(verifyStrongName(readModule(bytes), { expectedKey: key12345 }).valid, name).toBe(true);
    }
    expect(existsSync(join(w.out, 'signing-log.txt'))).toBe(true);
    expect(existsSync(join(w.out, 'ThirdParty.Json.dll'))).toBe(false);
    expect((await jobsOnServer(server)).length).toBe(before);
    const ledger = JSON.parse(readFileSync(join(w.env.SIGNGATE_CACHE_DIR, 'jobs.json'), 'utf8'));
    expect(ledger.jobs[0].state).toBe('deleted');
    expect(ledger.jobs[0].files.find((f: { name: string }) => f.name === 'de/SampleAddin.resources.dll').sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(ledger)).not.toContain(token);
    expect(r.stdout + r.stderr).not.toContain(token);
  });

  test("the vendor script's parameter names work too", async () => {
    const w = workdir();
    const a = fixturePath('addin/SampleAddin.dll');
    const b = fixturePath('addin/SampleAddin.Helpers.dll');
    const r = await runCliAsync(
      [
        'sign',
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--baseUrl',
        server.baseUrl,
        '--accessToken',
        token,
        '--assemblies',
        `${a},${b}`,
        '--destinationPath',
        w.out,
        '--rootDirectory',
        fixturePath('addin'),
        '--comment',
        'post-build',
        '--deleteAfterwards',
        '--poll-interval',
        '50',
      ],
      { env: { SIGNGATE_CACHE_DIR: w.env.SIGNGATE_CACHE_DIR } },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(w.out).sort()).toEqual(['SampleAddin.Helpers.dll', 'SampleAddin.dll', 'signing-log.txt']);
    expect(r.stdout).not.toContain(token);
  });
});

describe('files already signed', () => {
  test('an already-signed file: skipped as "already signed (SG203)", and no output folder is named or made', async () => {
    const w = workdir();
    const folder = fixturePath('findings/already-signed');
    const r = await runCliAsync(signArgs(server.baseUrl, w.out, folder, '--root', folder), { env: w.env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/skip \S*FindingAddin\.dll {2}already signed \(SG203\) with key token [0-9a-f]{16}( \(option 12345\))?; nothing to upload/);
    expect(r.stdout).toContain('0 uploaded in 0 job(s): 0 signed and verified, 0 failed; 1 not uploaded (1 already signed). Nothing was written.');
    expect(r.stdout).not.toContain('Output in');
    expect(existsSync(w.out)).toBe(false);
  });
});

describe('a multi-module add-in', () => {
  test('the netmodule is uploaded with its assembly and comes back unchanged; the signed manifest still lists its hash', async () => {
    const w = workdir();
    const folder = fixturePath('modules/passing');
    const r = await runCliAsync([...signArgs(server.baseUrl, w.out, folder, '--root', folder, '--delete-afterwards', '--json')], { env: w.env });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).summary).toMatchObject({ files: 2, uploaded: 2, failed: 0 });
    const manifest = readModule(readFileSync(join(w.out, 'ModuleAddin.dll')));
    expect(verifyStrongName(manifest, { expectedKey: key12345 }).valid).toBe(true);
    const netmodule = readFileSync(join(w.out, 'AddinCode.netmodule'));
    expect(netmodule).toEqual(readFileSync(join(folder, 'AddinCode.netmodule')));
    expect(Buffer.from(manifest.files[0]!.hashValue).toString('hex')).toBe(createHash('sha1').update(netmodule).digest('hex'));
  });
});

describe('a destination inside the build output', () => {
  test('earlier results in the destination are not inputs on the next run', async () => {
    const w = workdir();
    const bin = join(w.dir, 'bin');
    mkdirSync(join(bin, 'de'), { recursive: true });
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'de/SampleAddin.resources.dll']) writeFileSync(join(bin, name), fixture(`addin/${name}`));
    const args = [
      'sign',
      bin,
      '--root',
      bin,
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--base-url',
      server.baseUrl,
      '--destination-path',
      join(bin, 'signed'),
      '--poll-interval',
      '50',
      '--json',
      '--delete-afterwards',
    ];
    const first = await runCliAsync(args, { env: w.env });
    expect(first.status, first.stderr).toBe(0);
    const second = await runCliAsync(args, { env: w.env });
    expect(second.status, second.stderr).toBe(0);
    const result = JSON.parse(second.stdout);
    expect(result.files.map((f: { uploadName: string }) => f.uploadName).sort()).toEqual([
      'SampleAddin.Helpers.dll',
      'SampleAddin.dll',
      'de/SampleAddin.resources.dll',
    ]);
  });
});

describe('failures', () => {
  test('a pre-flight error stops before any upload; --no-check uploads and the file comes back unsigned (exit 1)', async () => {
    const w = workdir();
    const before = (await jobsOnServer(server)).length;
    const bad = fixturePath('findings/vendor-attribute-false/FindingAddin.dll');
    const stopped = await runCliAsync(signArgs(server.baseUrl, w.out, bad), { env: w.env });
    expect(stopped.status).toBe(1);
    expect(stopped.stderr).toContain('nothing was uploaded');
    expect(stopped.stdout).toContain('SG302 vendor-attribute-false');
    expect((await jobsOnServer(server)).length).toBe(before);
    const forced = await runCliAsync(signArgs(server.baseUrl, w.out, bad, '--no-check'), { env: w.env });
    expect(forced.status).toBe(1);
    expect(forced.stdout).toContain('FAIL');
    expect(forced.stdout).toContain('vendor-attribute-false');
    expect(readFileSync(join(w.out, 'FindingAddin.dll')).equals(readFileSync(bad))).toBe(true); // extracted in every case
  });

  test('401: an expired token, with advice, exit 3', async () => {
    const w = workdir();
    const expired = server.token('sandbox', 'ci', 1, new Date(Date.now() - 3 * 86_400_000));
    const r = await runCliAsync(signArgs(server.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: expired } });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('401');
    expect(r.stderr).toContain('Tokens cannot be prolonged: create a new one');
    expect(r.stderr).not.toContain(expired);
  });

  test('403: a user without the role User', async () => {
    const w = workdir();
    const r = await runCliAsync(signArgs(server.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), {
      env: { ...w.env, SIGNGATE_ACCESS_TOKEN: server.token('sandbox', 'former-employee') },
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('403');
    expect(r.stderr).toContain('role User');
  });

  test('409: the job limit, with the advice to prune', async () => {
    const small = await startServer({ config: sandboxConfig((c) => (c.limits = { maxJobsPerOrganization: 1 })) });
    try {
      const t = small.token();
      await api(small, '/assemblies', t, { method: 'POST', body: uploadForm([{ name: 'X.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]) });
      const w = workdir();
      const r = await runCliAsync(signArgs(small.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: t } });
      expect(r.status).toBe(3);
      expect(r.stderr).toContain('409');
      expect(r.stderr).toContain('jobs prune');
      const pruneNoTty = await runCliAsync(['jobs', 'prune', '--keep', '0', '--base-url', small.baseUrl], { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: t } });
      expect(pruneNoTty.status).toBe(2);
      expect(pruneNoTty.stderr).toContain('--yes');
      const prune = await runCliAsync(['jobs', 'prune', '--keep', '0', '--yes', '--base-url', small.baseUrl], { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: t } });
      expect(prune.status).toBe(0);
      expect((await jobsOnServer(small, t)).length).toBe(0);
    } finally {
      await small.close();
    }
  });

  test('the service unreachable: exit 3 with a clear message', async () => {
    const w = workdir();
    const r = await runCliAsync(signArgs('http://127.0.0.1:1/assembly-signing/v1.0', w.out, fixturePath('addin/SampleAddin.dll')), { env: w.env });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('SG_ERR_HTTP_UNREACHABLE');
  });
});

describe('size and splitting', () => {
  const big = (dir: string, name: string) => {
    // A real delay-signed add-in with 25 MB of overlay: uploaded, signed (overlay is not hashed) and verified.
    const path = join(dir, name);
    writeFileSync(path, Buffer.concat([Buffer.from(fixture('findings/passing/FindingAddin.dll')), Buffer.alloc(25_000_000, 0x5a)]));
    return path;
  };

  test('one assembly larger than the limit on its own: check, sign and sign --split name it, its size and the limit, and never advise --split', async () => {
    const w = workdir();
    const dll = fixturePath('findings/passing/FindingAddin.dll');
    const size = readFileSync(dll).length;
    const limit = ['--max-upload-bytes', String(size - 100)];
    const said = `FindingAddin.dll (0.0 MB, ${size} bytes) is larger on its own than the upload limit of 0.0 MB (${size - 100} bytes): no split can upload it`;
    const check = await runCliAsync(['check', dll, '--vendor', 'Contoso', '--key', KEY, ...limit], { env: w.env });
    expect(check.status).toBe(1);
    expect(check.stdout).toContain(said);
    expect(check.stdout).toContain('maxUploadBytes');
    const before = (await jobsOnServer(server)).length;
    for (const extra of [[], ['--split'], ['--no-check'], ['--split', '--no-check']]) {
      const r = await runCliAsync([...signArgs(server.baseUrl, w.out, dll, ...limit, ...extra)], { env: w.env });
      expect(r.status, extra.join(' ')).not.toBe(0);
      expect(r.stdout + r.stderr, extra.join(' ')).toContain(said);
      expect(r.stdout + r.stderr, extra.join(' ')).not.toMatch(/Pass --split|sign --split/);
    }
    expect(check.stdout).not.toMatch(/--split/);
    expect((await jobsOnServer(server)).length).toBe(before);
  });

  test('two 25 MB assemblies: refused before upload without --split; two jobs with it', async () => {
    const w = workdir();
    const src = join(w.dir, 'src');
    mkdirSync(src);
    const a = big(src, 'AddinA.dll');
    const b = big(src, 'AddinB.dll');
    const before = (await jobsOnServer(server)).length;
    const refused = await runCliAsync(signArgs(server.baseUrl, w.out, a, b), { env: w.env });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toContain('upload-too-large');
    expect((await jobsOnServer(server)).length).toBe(before);
    const split = await runCliAsync([...signArgs(server.baseUrl, w.out, a, b, '--split', '--json', '--delete-afterwards')], { env: w.env });
    expect(split.status, split.stderr).toBe(0);
    const result = JSON.parse(split.stdout);
    expect(result.jobs.length).toBe(2);
    expect(result.summary.verified).toBe(2);
    expect(readdirSync(w.out).sort()).toEqual(['AddinA.dll', 'AddinB.dll', 'signing-log-1.txt', 'signing-log-2.txt']);
  });
});

describe('an unreliable network', () => {
  test('503 twice on the upload, then success: the upload is retried and lands once', async () => {
    const proxy = await startProxy(server.baseUrl, '/assembly-signing/v1.0', (req, res, count) => {
      if (req.method === 'POST' && count <= 2) {
        res
          .writeHead(503, { 'retry-after': '0', 'content-type': 'application/problem+json' })
          .end('{"type":"about:blank","title":"Unavailable","status":503,"detail":"Busy"}');
        return true;
      }
      return false;
    });
    try {
      const w = workdir();
      const before = (await jobsOnServer(server)).length;
      const r = await runCliAsync(signArgs(proxy.baseUrl, w.out, fixturePath('addin/SampleAddin.dll'), '--root', fixturePath('addin')), { env: w.env });
      expect(r.status, r.stderr).toBe(0);
      expect(proxy.seen.filter((s) => s.startsWith('POST')).length).toBe(3);
      expect(r.stderr).toContain('retrying POST');
      expect((await jobsOnServer(server)).length).toBe(before + 1);
    } finally {
      await proxy.close();
    }
  });

  test('a connection dropped during the download is resumed', async () => {
    const proxy = await startProxy(server.baseUrl, '/assembly-signing/v1.0', (req, _res, count) =>
      req.method === 'GET' && /\/assemblies\/[0-9a-f-]{36}$/.test(req.url!) && count === 1 ? 'drop-body' : false,
    );
    try {
      const w = workdir();
      const r = await runCliAsync(signArgs(proxy.baseUrl, w.out, fixturePath('bench/LargeAddin.dll')), { env: w.env });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/download broke off|retrying GET \S*\/assemblies\/[0-9a-f-]{36} /);
      expect(proxy.seen.filter((s) => /^GET \S+\/assemblies\/[0-9a-f-]{36}$/.test(s)).length).toBe(2);
      expect(verifyStrongName(readModule(readFileSync(join(w.out, 'LargeAddin.dll'))), { expectedKey: key12345 }).valid).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  test('interrupted by a timeout, the next run resumes the same job instead of uploading again', async () => {
    const paused = await startServer();
    const t = paused.token();
    const w = workdir();
    const env = { ...w.env, SIGNGATE_ACCESS_TOKEN: t };
    await paused.app.signgate.worker.stop();
    const first = await runCliAsync([...signArgs(paused.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), '--timeout', '1'], { env });
    expect(first.status).toBe(3);
    expect(first.stderr).toContain('run the same command again to resume');
    const port = Number(new URL(paused.baseUrl).port);
    await paused.close();
    const restarted = await startServer({ dataDir: paused.dataDir, port });
    try {
      const second = await runCliAsync(signArgs(restarted.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), { env });
      expect(second.status, second.stderr).toBe(0);
      expect(second.stderr).toContain('resuming job');
      expect(second.stderr).not.toContain('uploaded 1 file');
      expect((await jobsOnServer(restarted, t)).length).toBe(1);
      expect(verifyStrongName(readModule(readFileSync(join(w.out, 'SampleAddin.dll'))), { expectedKey: key12345 }).valid).toBe(true);
    } finally {
      await restarted.close();
    }
  });
});

describe('hostile result packages', () => {
  async function fakeService(zip: Buffer) {
    const s = createServer((req, res) => {
      const url = req.url ?? '';
      req.resume();
      if (url.endsWith('/licenses')) return res.writeHead(200, { 'content-type': 'application/json' }).end('[{"optionId":12345}]');
      if (req.method === 'POST') return res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":"11111111-1111-1111-1111-111111111111"}');
      if (url.endsWith('/status')) {
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify({ id: '1', processingFinished: true, assemblies: [{ fileName: 'SampleAddin.dll', fileProcessingState: 'Signed', messages: [] }] }),
          );
      }
      return res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
    });
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return {
      baseUrl: `http://127.0.0.1:${(s.address() as { port: number }).port}/assembly-signing/v1.0`,
      close: () => new Promise<void>((r) => s.close(() => r())),
    };
  }

  test.each([
    ['a ../ entry', [{ name: '../evil.dll', data: Buffer.from('x') }]],
    ['an absolute entry', [{ name: '/tmp/evil.dll', data: Buffer.from('x') }]],
    ['a symlink entry', [{ name: 'SampleAddin.dll', data: Buffer.from('/etc/passwd'), symlink: true }]],
  ])('%s: refused, nothing written inside or outside the destination', async (_name, entries) => {
    const fake = await fakeService(buildZip(entries));
    try {
      const w = workdir();
      const r = await runCliAsync(signArgs(fake.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), { env: w.env });
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(/nothing was extracted/);
      expect(existsSync(join(w.dir, 'evil.dll'))).toBe(false);
      expect(existsSync(w.out) ? readdirSync(w.out) : []).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  test('a package that is not a ZIP: clear error', async () => {
    const fake = await fakeService(Buffer.from('<html>login page</html>'));
    try {
      const w = workdir();
      const r = await runCliAsync(signArgs(fake.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), { env: w.env });
      expect(r.status).toBe(3);
      expect(r.stderr).toContain('not a ZIP');
    } finally {
      await fake.close();
    }
  });

  test('a file the user did not send is written apart under from-service/, never over a file of the destination', async () => {
    const fake = await fakeService(
      buildZip([
        { name: 'SampleAddin.dll', data: fixture('addin/SampleAddin.dll') },
        { name: 'Other.dll', data: Buffer.from('new') },
      ]),
    );
    try {
      const w = workdir();
      mkdirSync(w.out, { recursive: true });
      writeFileSync(join(w.out, 'Other.dll'), 'mine');
      const r = await runCliAsync([...signArgs(fake.baseUrl, w.out, fixturePath('addin/SampleAddin.dll')), '--json'], { env: w.env });
      expect(readFileSync(join(w.out, 'Other.dll'), 'utf8')).toBe('mine');
      expect(readFileSync(join(w.out, 'from-service', 'Other.dll'), 'utf8')).toBe('new');
      const result = JSON.parse(r.stdout);
      expect(result.extras).toEqual([expect.stringMatching(/from-service\/Other\.dll$/)]);
      expect(r.stderr).toContain('which was not uploaded');
      // The fake service returns the unsigned bytes: the verification catches it.
      expect(r.status).toBe(1);
      expect(result.files[0].verified).toBe(false);
    } finally {
      await fake.close();
    }
  });
});

describe('licenses and jobs', () => {
  test('jobs list says how a finished job ended: "finished: 0 of 3 signed, 3 failed", "finished: 1 of 1 signed"', async () => {
    const w = workdir();
    const bad = fixture('findings/missing-vendor-attribute/FindingAddin.dll');
    const post = async (files: { name: string; bytes: Uint8Array }[]) =>
      (await (await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) })).json()).id as string;
    const failed = await post(['A', 'B', 'C'].map((d) => ({ name: `${d}/FindingAddin.dll`, bytes: bad })));
    const signed = await post([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]);
    await waitFinished(server, token, failed);
    await waitFinished(server, token, signed);
    const list = await runCliAsync(['jobs', 'list', '--base-url', server.baseUrl], { env: w.env });
    expect(list.status, list.stderr).toBe(0);
    const line = (id: string) => list.stdout.split('\n').find((l) => l.startsWith(id));
    expect(line(failed)).toContain('finished: 0 of 3 signed, 3 failed');
    expect(line(signed)).toContain('finished: 1 of 1 signed');
    expect(line(signed)).not.toContain('failed');
  });

  test('licenses lists the options; jobs list, status and delete work on a real job', async () => {
    const w = workdir();
    const lic = await runCliAsync(['licenses', '--base-url', server.baseUrl], { env: w.env });
    expect(lic.stdout).toContain('option 12345: key file 12345_public.snk, key token 5d004f218731cd20');
    const { id } = await (
      await api(server, '/assemblies', token, {
        method: 'POST',
        body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]),
      })
    ).json();
    const list = await runCliAsync(['jobs', 'list', '--base-url', server.baseUrl], { env: w.env });
    expect(list.stdout).toContain(id);
    let status;
    for (let i = 0; i < 50; i++) {
      status = await runCliAsync(['jobs', 'status', id, '--base-url', server.baseUrl], { env: w.env });
      if (status.stdout.includes('finished')) break;
    }
    expect(status!.stdout).toContain('Signed');
    const dl = await runCliAsync(['jobs', 'download', id, '--destination-path', w.out, '--base-url', server.baseUrl, '--key', KEY], { env: w.env });
    expect(dl.status, dl.stderr).toBe(0);
    expect(readdirSync(w.out).sort()).toEqual(['FindingAddin.dll', 'signing-log.txt']);
    const del = await runCliAsync(['jobs', 'delete', id, '--base-url', server.baseUrl], { env: w.env });
    expect(del.status).toBe(0);
    expect((await api(server, `/assemblies/${id}/status`, token)).status).toBe(404);
  });
});
