// The archive path on the real service (127.0.0.1): a project ZIP in, every file back at its path with the
// assemblies signed and a log per file; hostile archives refused with their reason and nothing kept.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { readModule } from '../../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { ARCHIVE_RATIO_FLOOR_BYTES } from '../../../src/zip/archive-rules.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { encryptedArchive, sampleProjectArchive, zipEntries } from '../../helpers/archives.js';
import { fixture, repoRoot } from '../../helpers/fixtures.js';
import { buildZip } from '../../helpers/hostile-zip.js';
import { api, sandboxConfig, waitFinished, type TestServer } from '../../helpers/server.js';
import { sharedServer } from '../../helpers/shared-server.js';

const key = parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey;
const shared = sharedServer();
let server: TestServer;
let token: string;
beforeEach(() => {
  server = shared.server();
  token = shared.token();
});

const upload = (zip: Uint8Array, name = 'project.zip', comment?: string) => {
  const form = new FormData();
  form.append('archive', new Blob([zip]), name);
  if (comment) form.append('comment', comment);
  return api(server, '/archives', token, { method: 'POST', body: form });
};
const tmpLeft = () => readdirSync(join(server.dataDir, 'tmp')).filter((n) => !n.startsWith('deleted--'));

describe('the archive path', () => {
  test('signs the assemblies inside and returns every file at its path, the signing log and a log per file', async () => {
    const { zip, entries } = await sampleProjectArchive();
    const res = await upload(zip, 'SampleAddin-1.4.2.zip', 'release 1.4.2');
    expect(res.status).toBe(201);
    const job = await res.json();
    expect(job.links.download).toBe(`${server.baseUrl}/archives/${job.id}`);
    const status = await waitFinished(server, token, job.id);
    expect(status.processingFinished).toBe(true);
    // Only the assemblies are the job's files.
    expect(status.assemblies.map((a) => a.fileName).sort()).toEqual(
      entries
        .filter((e) => /\.(dll|exe)$/.test(e.name))
        .map((e) => e.name)
        .sort(),
    );
    const download = await api(server, `/archives/${job.id}`, token);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/zip');
    const back = new Map((await readZip(new Uint8Array(await download.arrayBuffer()))).map((e) => [e.name, e.bytes]));
    for (const e of entries) expect(back.has(e.name), e.name).toBe(true);
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'AddinTool.exe', 'de/SampleAddin.resources.dll']) {
      expect(verifyStrongName(readModule(back.get(name)!), { expectedKey: key }).valid, name).toBe(true);
      expect(back.get(`signing-logs/${name}.log`)!.toString()).toMatch(
        new RegExp(`^${name.replace(/[.]/g, '\\.')}: Signed\\r\\n.*Info: Signed with option 12345`, 's'),
      );
    }
    // What is not signed comes back byte for byte, with the reason in its log; the nested archive is not opened.
    for (const name of ['README.txt', 'config/settings.json', 'docs/source.zip', 'ThirdParty.Json.dll', 'Contoso.AddinApi.dll']) {
      expect(back.get(name)!.equals(entries.find((e) => e.name === name)!.bytes), name).toBe(true);
    }
    expect(back.get('signing-logs/README.txt.log')!.toString()).toContain('Not an assembly (.dll, .exe, .netmodule): returned as it was uploaded.');
    expect(back.get('signing-logs/ThirdParty.Json.dll.log')!.toString()).toMatch(
      /^ThirdParty\.Json\.dll: Error\r\n.*Not signed: not required: uses no vendor API/s,
    );
    expect(back.has('docs/source.zip/inner.txt')).toBe(false);
    expect(back.get('signing-log.txt')!.toString()).toContain('(release 1.4.2)');
    expect(back.size).toBe(entries.length * 2 + 1);
  });

  test('a job uploaded as files has no archive result; an archive job still answers on /assemblies/{id}', async () => {
    const { zip } = await sampleProjectArchive();
    const job = await (await upload(zip)).json();
    await waitFinished(server, token, job.id);
    expect((await api(server, `/assemblies/${job.id}`, token)).status).toBe(200);
    const other = await api(server, '/archives/00000000-0000-0000-0000-000000000000', token);
    expect(other.status).toBe(404);
    expect((await api(server, `/archives/${job.id}`, undefined)).status).toBe(401);
  });
});

describe('hostile archives are refused with their reason, and nothing is kept', () => {
  const refused = async (zip: Uint8Array, status: number, title: string, detail: RegExp) => {
    const before = (await (await api(server, '/assemblies', token)).json()).length;
    const res = await upload(zip, 'hostile.zip');
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(status);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(body.title).toBe(title);
    expect(`${body.detail} ${JSON.stringify(body.errors ?? [])}`).toMatch(detail);
    expect((await (await api(server, '/assemblies', token)).json()).length).toBe(before);
    expect(tmpLeft()).toEqual([]);
    return body;
  };
  const dll = fixture('addin/SampleAddin.dll');

  test('encrypted (password-protected): refused as such', async () => {
    await refused(
      encryptedArchive([{ name: 'readme.txt', data: Buffer.from('secret') }]),
      400,
      'Encrypted archive',
      /hostile\.zip: the ZIP entry "readme\.txt" is encrypted \(the archive is password-protected\).*without a password/,
    );
  });

  test('an entry outside the job, an absolute path, a symbolic link', async () => {
    await refused(
      buildZip([
        { name: 'ok.dll', data: dll },
        { name: '../evil.dll', data: dll },
      ]),
      400,
      'Unsafe archive',
      /invalid relative path: \.\.\/evil\.dll/,
    );
    await refused(buildZip([{ name: '/etc/evil.dll', data: dll }]), 400, 'Unsafe archive', /absolute path/);
    await refused(
      buildZip([
        { name: 'SampleAddin.dll', data: dll },
        { name: 'link.dll', data: Buffer.from('/etc/passwd'), symlink: true },
      ]),
      400,
      'Unsafe archive',
      /"link\.dll" is a symbolic link/,
    );
  });

  test('a zip bomb (ratio), names Windows cannot hold or that collide, the reserved log folder', async () => {
    await refused(
      await zipEntries([
        { name: 'SampleAddin.dll', bytes: dll },
        { name: 'zeros.bin', bytes: Buffer.alloc(4 * 1024 * 1024) },
      ]),
      413,
      'Archive refused',
      /"zeros\.bin" inflates \d+ times/,
    );
    const names = await refused(
      buildZip([
        { name: 'Addin.dll', data: dll },
        { name: 'addin.DLL', data: dll },
        { name: 'CON.txt', data: Buffer.from('x') },
        { name: 'signing-logs/a.log', data: Buffer.from('x') },
      ]),
      400,
      'Bad file names',
      /3 file name/,
    );
    expect(names.errors.map((e: { fileName: string }) => e.fileName)).toEqual(['addin.DLL', 'CON.txt', 'signing-logs/a.log']);
  });

  test('the ratio is checked from 64 KiB on, as the OpenAPI text, the docs and the comments say', async () => {
    expect(ARCHIVE_RATIO_FLOOR_BYTES).toBe(64 * 1024);
    // 100 KiB of zeros inflates about a thousandfold: under 1 MiB, and still refused.
    await refused(
      await zipEntries([
        { name: 'SampleAddin.dll', bytes: dll },
        { name: 'zeros.bin', bytes: Buffer.alloc(100 * 1024) },
      ]),
      413,
      'Archive refused',
      /"zeros\.bin" inflates \d+ times/,
    );
    const texts = {
      'schemas/openapi.json': readFileSync(join(repoRoot, 'schemas/openapi.json'), 'utf8'),
      'docs/compatibility.md': readFileSync(join(repoRoot, 'docs/compatibility.md'), 'utf8'),
      'docs/service-api.md': readFileSync(join(repoRoot, 'docs/service-api.md'), 'utf8').replace(/\s+/g, ' '),
      'src/zip/archive-rules.ts': readFileSync(join(repoRoot, 'src/zip/archive-rules.ts'), 'utf8').replace(/\s*\*\s*/g, ' '),
    };
    for (const [name, text] of Object.entries(texts)) {
      expect(text, name).toMatch(/ratio[^.;]*100[^.;]*for entries of 64 KiB/);
      expect(text, name).not.toMatch(/ratio[^.;]*for entries of 1 MiB/);
    }
  });

  test('16 archives at once, each of 79 entries of a million zero bytes: every one refused, and the memory stays bounded', async () => {
    // 85 KB each, 79 MB inflated: within the 80 MB expansion limit, but each entry inflates about a thousandfold.
    const bomb = await zipEntries([
      { name: 'SampleAddin.dll', bytes: dll },
      ...Array.from({ length: 79 }, (_, i) => ({ name: `data/zeros-${i}.bin`, bytes: Buffer.alloc(1_000_000) })),
    ]);
    expect(bomb.length).toBeLessThan(200_000);
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    try {
      const answers = await Promise.all(Array.from({ length: 16 }, () => upload(bomb, 'bomb.zip')));
      for (const a of answers) {
        expect(a.status).toBe(413);
        expect((await a.json()).detail).toMatch(/"data\/zeros-0\.bin" inflates \d+ times/);
      }
    } finally {
      clearInterval(sampler);
    }
    // The service, the test and all 16 uploads share this process; before the limits it grew by about 1.2 GB.
    expect(peak - before).toBeLessThan(200 * 1024 * 1024);
  });

  test('not a ZIP, or no assembly inside', async () => {
    await refused(new TextEncoder().encode('not a zip at all'), 400, 'Not a ZIP archive', /hostile\.zip: the package is not a ZIP file/);
    await refused(await zipEntries([{ name: 'README.txt', bytes: Buffer.from('hello') }]), 400, 'No assemblies', /no \.dll, \.exe or \.netmodule file/);
  });

  test('the assemblies inside over the upload limit', async () => {
    server.setConfig(sandboxConfig((c) => (c.limits = { maxUploadBytes: 10_000 })));
    try {
      await refused(
        await zipEntries([
          { name: 'a/SampleAddin.dll', bytes: dll },
          { name: 'b/SampleAddin.dll', bytes: dll },
          { name: 'c/SampleAddin.dll', bytes: dll },
        ]),
        413,
        'Archive too large',
        /exceeds 10000 bytes/,
      );
    } finally {
      server.setConfig(sandboxConfig());
    }
  });
});
