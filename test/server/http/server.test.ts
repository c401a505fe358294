// The reference service over HTTP on loopback: every endpoint, every error status, organization isolation, whole numbers.
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ModuleMetadata } from '../../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../../src/pe/pe-image.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { compareIgnoringSignature, verifyStrongName } from '../../../src/strongname/strong-name.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { fixture, fixturePath, hasMono, runMono } from '../../helpers/fixtures.js';
import { api, folderFiles, sandboxConfig, startServer, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';
import { dataDirOnly } from '../../helpers/database.js';

const load = (bytes: Uint8Array) => new ModuleMetadata(parsePeImage(bytes));
const key12345 = parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey;

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startServer();
  token = server.token();
});
afterAll(() => server.close());

const problemOf = async (r: Response) => {
  expect(r.headers.get('content-type')).toContain('application/problem+json');
  return r.json() as Promise<{ title: string; status: number; detail: string; errors?: { fileName: string; detail: string }[] }>;
};

describe('authentication', () => {
  test("GET /licenses lists the organization's options", async () => {
    const r = await api(server, '/licenses', token);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual([
      { optionId: 12345, publicKeyToken: '5d004f218731cd20' },
      { optionId: 67890, publicKeyToken: expect.stringMatching(/^[0-9a-f]{16}$/) },
    ]);
  });

  test.each([
    ['no token', undefined],
    ['an unknown token', 'sgt_not-a-real-token'],
  ])('%s: 401 problem+json', async (_name, t) => {
    const r = await api(server, '/licenses', t);
    expect(r.status).toBe(401);
    expect((await problemOf(r)).status).toBe(401);
  });

  test('an expired token: 401 saying tokens cannot be prolonged', async () => {
    const expired = server.token('sandbox', 'ci', 1, new Date(Date.now() - 2 * 86_400_000));
    const r = await api(server, '/licenses', expired);
    expect(r.status).toBe(401);
    expect((await problemOf(r)).detail).toContain('cannot be prolonged');
  });

  test('a user without the role User: 403; removing the role invalidates a working token at once', async () => {
    expect((await api(server, '/licenses', server.token('sandbox', 'former-employee'))).status).toBe(403);
    const t = server.token('sandbox', 'ci');
    expect((await api(server, '/licenses', t)).status).toBe(200);
    server.setConfig(sandboxConfig((c) => (c.organizations[0]!.users[0]!.roles = [])));
    try {
      expect((await api(server, '/licenses', t)).status).toBe(403);
      expect((await api(server, '/assemblies', token)).status).toBe(403);
    } finally {
      server.setConfig(sandboxConfig());
    }
    expect((await api(server, '/licenses', t)).status).toBe(200);
  });

  dataDirOnly('tokens are stored as hashes only', async () => {
    const t = server.token();
    const { readFileSync } = await import('node:fs');
    const stored = readFileSync(join(server.dataDir, 'tokens.json'), 'utf8');
    expect(stored).not.toContain(t);
    expect(stored).not.toContain(t.slice(4, 20));
  });
});

describe('the signing flow', () => {
  let jobId: string;
  const files = [...folderFiles('addin'), { name: 'Extra/FindingAddin.dll', bytes: fixture('findings/vendor-attribute-false/FindingAddin.dll') }];

  test('POST /assemblies: 201 with links; the job shows in the list', async () => {
    const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files, 'nightly 1.4.2') });
    expect(r.status).toBe(201);
    const job = await r.json();
    expect(job).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), comment: 'nightly 1.4.2' });
    expect(job.links.status).toBe(`${server.baseUrl}/assemblies/${job.id}/status`);
    jobId = job.id;
    const list = await (await api(server, '/assemblies', token)).json();
    expect(list.map((j: { id: string }) => j.id)).toContain(jobId);
    expect(list.find((j: { id: string }) => j.id === jobId).fileCount).toBe(files.length);
  });

  test('status: every file final, signed or with the reason it was not', async () => {
    const status = await waitFinished(server, token, jobId);
    expect(status.processingFinished).toBe(true);
    const state = Object.fromEntries(status.assemblies.map((a) => [a.fileName, a.fileProcessingState]));
    expect(state).toEqual({
      'AddinTool.exe': 'Signed',
      'Contoso.AddinApi.dll': 'Error',
      'Interop.SampleCom.dll': 'Signed',
      'SampleAddin.Helpers.dll': 'Signed',
      'SampleAddin.XmlSerializers.dll': 'Signed',
      'SampleAddin.dll': 'Signed',
      'ThirdParty.Json.dll': 'Error',
      'de/SampleAddin.resources.dll': 'Signed',
      'Extra/FindingAddin.dll': 'Error',
    });
    const bad = status.assemblies.find((a) => a.fileName === 'Extra/FindingAddin.dll')!;
    expect(bad.messages.map((m) => m.message).join(' ')).toContain('SG302 vendor-attribute-false');
  });

  test('download: every file at its path; signed files verify and differ only in signature, flag and checksum', async () => {
    const r = await api(server, `/assemblies/${jobId}`, token);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/zip');
    const entries = await readZip(new Uint8Array(await r.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual([...files.map((f) => f.name), 'signing-log.txt'].sort());
    const byName = new Map(entries.map((e) => [e.name, e.bytes]));
    for (const f of files) {
      const out = byName.get(f.name)!;
      const signed = [
        'AddinTool.exe',
        'Interop.SampleCom.dll',
        'SampleAddin.Helpers.dll',
        'SampleAddin.XmlSerializers.dll',
        'SampleAddin.dll',
        'de/SampleAddin.resources.dll',
      ].includes(f.name);
      if (signed) {
        expect(verifyStrongName(load(out), { expectedKey: key12345 }).valid, f.name).toBe(true);
        expect(compareIgnoringSignature(load(f.bytes), out).onlySignatureDiffers, f.name).toBe(true);
        if (hasMono) {
          const path = join(server.dataDir, `check-${f.name.replace(/\//g, '_')}`);
          writeFileSync(path, out);
          expect(runMono('sn', ['-vf', path]).stdout, f.name).toContain('is strongnamed');
        }
      } else {
        expect(Buffer.compare(out, Buffer.from(f.bytes)), `${f.name} comes back unchanged`).toBe(0);
      }
    }
    const log = byName.get('signing-log.txt')!.toString('utf8');
    expect(log).toContain('Extra/FindingAddin.dll: Error');
    expect(log).toContain('vendor-attribute-false');
    expect(log).toContain('SampleAddin.dll: Signed');
  });

  test('delete: 204, every byte removed; a second delete is 404', async () => {
    expect((await api(server, `/assemblies/${jobId}`, token, { method: 'DELETE' })).status).toBe(204);
    expect(existsSync(join(server.dataDir, 'jobs', 'sandbox', jobId))).toBe(false);
    expect(readdirSync(join(server.dataDir, 'tmp'))).toEqual([]);
    expect((await api(server, `/assemblies/${jobId}`, token, { method: 'DELETE' })).status).toBe(404);
    expect((await api(server, `/assemblies/${jobId}/status`, token)).status).toBe(404);
  });
});

describe('refused uploads store nothing', () => {
  const jobsOnDisk = () => (existsSync(join(server.dataDir, 'jobs', 'sandbox')) ? readdirSync(join(server.dataDir, 'jobs', 'sandbox')) : []);
  const good = fixture('findings/passing/FindingAddin.dll');

  test.each([
    ['an absolute path', '/etc/FindingAddin.dll'],
    ['a .. segment', '../FindingAddin.dll'],
    ['a drive letter', 'C:\\out\\FindingAddin.dll'],
    ['a backslash .. segment', 'a\\..\\..\\FindingAddin.dll'],
    ['the reserved log name', 'signing-log.txt'],
  ])('%s: 400 naming the file', async (_name, fileName) => {
    const before = jobsOnDisk();
    const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: fileName, bytes: good }]) });
    expect(r.status).toBe(400);
    const body = await problemOf(r);
    expect(body.errors?.[0]?.fileName).toBe(fileName);
    expect(jobsOnDisk()).toEqual(before);
    expect(readdirSync(join(server.dataDir, 'tmp'))).toEqual([]);
  });

  test('duplicate names at one folder level (case-insensitive): 400; backslashes are separators', async () => {
    const r = await api(server, '/assemblies', token, {
      method: 'POST',
      body: uploadForm([
        { name: 'Addins\\FindingAddin.dll', bytes: good },
        { name: 'addins/findingaddin.DLL', bytes: good },
        { name: 'Other/FindingAddin.dll', bytes: good },
      ]),
    });
    expect(r.status).toBe(400);
    const body = await problemOf(r);
    expect(body.errors).toEqual([{ fileName: 'addins/findingaddin.DLL', detail: expect.stringContaining('Addins/FindingAddin.dll') }]);
  });

  test('not multipart, or no file part: 400', async () => {
    expect((await api(server, '/assemblies', token, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    const form = new FormData();
    form.append('comment', 'nothing');
    expect((await api(server, '/assemblies', token, { method: 'POST', body: form })).status).toBe(400);
  });

  test('an organization without a license: GET /licenses is empty, POST is 403', async () => {
    const bob = server.token('unlicensed', 'bob');
    expect(await (await api(server, '/licenses', bob)).json()).toEqual([]);
    const r = await api(server, '/assemblies', bob, { method: 'POST', body: uploadForm([{ name: 'A.dll', bytes: good }]) });
    expect(r.status).toBe(403);
  });

  test('a 41 MB upload: 413 and nothing on disk', async () => {
    const before = jobsOnDisk();
    const big = new Uint8Array(41 * 1024 * 1024);
    let status: number;
    try {
      const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: 'Big.dll', bytes: big }]) });
      status = r.status;
      expect((await problemOf(r)).status).toBe(413);
    } catch (error) {
      // The service may close the connection while the client is still sending; that is a refusal too.
      status = 413;
      expect(String((error as Error).cause ?? error)).toMatch(/closed|reset|EPIPE|socket|terminated/i);
    }
    expect(status).toBe(413);
    await new Promise((r) => setTimeout(r, 200));
    expect(jobsOnDisk()).toEqual(before);
    expect(readdirSync(join(server.dataDir, 'tmp'))).toEqual([]);
  });
});

describe('organization isolation', () => {
  test("another organization's job is 404 on every endpoint and missing from its list", async () => {
    const r = await api(server, '/assemblies', token, {
      method: 'POST',
      body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]),
    });
    const { id } = await r.json();
    await waitFinished(server, token, id);
    const alice = server.token('other-org', 'alice');
    for (const [method, path] of [
      ['GET', `/assemblies/${id}/status`],
      ['GET', `/assemblies/${id}`],
      ['DELETE', `/assemblies/${id}`],
    ] as const) {
      const res = await api(server, path, alice, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await problemOf(res)).detail).toBe(`There is no job ${id}.`);
    }
    expect((await (await api(server, '/assemblies', alice)).json()).map((j: { id: string }) => j.id)).not.toContain(id);
    // Still there for its owner.
    expect((await api(server, `/assemblies/${id}/status`, token)).status).toBe(200);
  });

  test('an unknown id is 404 the same way', async () => {
    expect((await api(server, '/assemblies/00000000-0000-0000-0000-000000000000/status', token)).status).toBe(404);
    expect((await api(server, '/assemblies/not-a-uuid', token)).status).toBe(404);
  });
});

describe('results not ready', () => {
  test('download while processing is 409; status says processingFinished false', async () => {
    const paused = await startServer();
    try {
      const t = paused.token();
      await paused.app.signgate.worker.stop(); // nothing gets processed
      const r = await api(paused, '/assemblies', t, {
        method: 'POST',
        body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/passing/FindingAddin.dll') }]),
      });
      const { id } = await r.json();
      const status = await (await api(paused, `/assemblies/${id}/status`, t)).json();
      expect(status.processingFinished).toBe(false);
      expect(status.assemblies[0].fileProcessingState).toBe('Pending');
      const dl = await api(paused, `/assemblies/${id}`, t);
      expect(dl.status).toBe(409);
    } finally {
      await paused.close();
    }
  });
});

describe('documents', () => {
  test('openapi.json is OpenAPI 3.1 with every endpoint, and equals schemas/openapi.json', async () => {
    const doc = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
    expect(doc.openapi).toBe('3.1.0');
    const paths = Object.keys(doc.paths).sort();
    expect(paths).toEqual([
      '/assembly-signing/v1.0/archives',
      '/assembly-signing/v1.0/archives/{id}',
      '/assembly-signing/v1.0/assemblies',
      '/assembly-signing/v1.0/assemblies/{id}',
      '/assembly-signing/v1.0/assemblies/{id}/status',
      '/assembly-signing/v1.0/licenses',
      '/assembly-signing/v1.0/licenses/{optionId}/public-key',
      '/assembly-signing/v1.0/record/checkpoint',
      '/assembly-signing/v1.0/record/consistency',
      '/assembly-signing/v1.0/record/public-key',
    ]);
    expect(Object.keys(doc.paths['/assembly-signing/v1.0/assemblies/{id}']).sort()).toEqual(['delete', 'get']);
    const { readFileSync } = await import('node:fs');
    expect(doc).toEqual(JSON.parse(readFileSync(fixturePath('../schemas/openapi.json'), 'utf8')));
  });

  test('/docs serves the Swagger UI page', async () => {
    const r = await fetch(server.baseUrl.replace('/assembly-signing/v1.0', '/docs/'));
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('swagger-ui');
  });
});

// The contract's 400 for an id that is not a whole number: the schemas' type coercion alone would read "12345.0",
// "+12345", " 12345", "0x3039" and "1.2345e4" as option 12345. Every whole number of a path or query is taken only
// in decimal digits, no sign, point, exponent, spaces or leading zeros.
describe('whole numbers in paths and queries', () => {
  const NOT_WHOLE = ['12345.0', '+12345', ' 12345', '0x3039', '1.2345e4', '012345', '12345 ', '-0', '9007199254740993', '99999999999999999', '１２３４５'];
  const refusal = async (path: string) => {
    const r = await api(server, path, token);
    expect(r.status, path).toBe(400);
    const body = await problemOf(r);
    expect(body).toMatchObject({ status: 400, title: 'Bad Request' });
    return body.detail;
  };

  test('GET /licenses/{optionId}/public-key: 12345 answers the key; any other writing of it is 400, naming what was given', async () => {
    const ok = await api(server, '/licenses/12345/public-key', token);
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer()).equals(Buffer.from(key12345.blob))).toBe(true);
    for (const id of NOT_WHOLE) {
      const detail = await refusal(`/licenses/${encodeURIComponent(id)}/public-key`);
      expect(detail).toContain(`The path parameter optionId is ${JSON.stringify(id)}: not a whole number written in decimal digits`);
    }
    // A whole number the organization does not hold: 404, as before.
    for (const id of ['0', '9007199254740991']) expect((await api(server, `/licenses/${id}/public-key`, token)).status).toBe(404);
  });

  test('GET /assemblies?offset=&limit= and GET /record/consistency?from=&to=: the same rule', async () => {
    expect((await api(server, '/assemblies?offset=0&limit=5', token)).status).toBe(200);
    expect((await api(server, '/record/consistency?from=0&to=0', token)).status).toBe(200);
    const refused: [string, string, string][] = [
      ['/assemblies?offset=1e1', 'offset', '1e1'],
      ['/assemblies?limit=%2B5', 'limit', '+5'],
      ['/assemblies?limit=05', 'limit', '05'],
      ['/record/consistency?from=0x0&to=0', 'from', '0x0'],
      ['/record/consistency?from=0&to=0.0', 'to', '0.0'],
      ['/record/consistency?from=%200&to=0', 'from', ' 0'],
    ];
    for (const [path, name, value] of refused) {
      expect(await refusal(path)).toContain(`The query parameter ${name} is ${JSON.stringify(value)}: not a whole number written in decimal digits`);
    }
  });
});
