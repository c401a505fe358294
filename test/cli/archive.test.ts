// `signgate pack` and `signgate sign --archive` through the built CLI against the real service on 127.0.0.1.
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { readZip } from '../../src/zip/read-zip.js';
import { folderEntries, zipEntries } from '../helpers/archives.js';
import { fixturePath, runCli, runCliAsync } from '../helpers/fixtures.js';
import { buildZip } from '../helpers/hostile-zip.js';
import { api } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { startProxy } from '../helpers/proxy.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const key = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
const shared = sharedServer();
const settings = ['--vendor', 'Contoso', '--key', KEY];

describe('signgate pack', () => {
  test('checks, then writes every file of the build output at its path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-pack-'));
    const out = join(dir, 'SampleAddin.zip');
    const r = runCli(['pack', fixturePath('addin'), '-o', out, ...settings]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('8 files in');
    const packed = await readZip(readFileSync(out));
    const expected = folderEntries('addin');
    expect(packed.map((e) => e.name).sort()).toEqual(expected.map((e) => e.name).sort());
    for (const e of expected) expect(packed.find((p) => p.name === e.name)!.bytes.equals(e.bytes), e.name).toBe(true);
  });

  test('the inputs and root of signgate.config.json are what is packed; a glob packs what it matches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-pack-config-'));
    cpSync(fixturePath('addin'), join(dir, 'build'), { recursive: true });
    writeFileSync(join(dir, 'signgate.config.json'), JSON.stringify({ vendor: 'Contoso', keys: [KEY], paths: ['build'], root: '.' }));
    const fromConfig = runCli(['pack', '-o', join(dir, 'out', 'all.zip')], { cwd: dir });
    expect(fromConfig.status, fromConfig.stderr).toBe(0);
    const expected = folderEntries('addin')
      .map((e) => `build/${e.name}`)
      .sort();
    expect((await readZip(readFileSync(join(dir, 'out', 'all.zip')))).map((e) => e.name).sort()).toEqual(expected);
    const globbed = runCli(['pack', 'build/*.dll', '-o', join(dir, 'out', 'dlls.zip'), ...settings], { cwd: dir });
    expect(globbed.status, globbed.stderr).toBe(0);
    const dlls = folderEntries('addin')
      .filter((e) => /^[^/]+\.dll$/.test(e.name))
      .map((e) => `build/${e.name}`)
      .sort();
    expect(dlls.length).toBeGreaterThan(2);
    expect((await readZip(readFileSync(join(dir, 'out', 'dlls.zip')))).map((e) => e.name).sort()).toEqual(dlls);
  });

  test('a failing pre-flight check writes nothing', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'signgate-pack-')), 'bad.zip');
    const r = runCli(['pack', fixturePath('findings/wrong-key'), '-o', out, ...settings]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('SG205');
    expect(r.stderr).toContain('bad.zip was not written');
    expect(existsSync(out)).toBe(false);
  });
});

describe('signgate sign --archive', () => {
  test('uploads the archive, waits, downloads the result archive and verifies the signed files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-sign-archive-'));
    const zip = join(dir, 'SampleAddin.zip');
    expect(runCli(['pack', fixturePath('addin'), '-o', zip, ...settings]).status).toBe(0);
    const env = { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: shared.token() };
    const before = (await (await api(shared.server(), '/assemblies', shared.token())).json()).length;
    const r = await runCliAsync(
      [
        'sign',
        '--archive',
        zip,
        ...settings,
        '--base-url',
        shared.server().baseUrl,
        '--destination-path',
        join(dir, 'out'),
        '--poll-interval',
        '50',
        '--delete-afterwards',
        '--json',
      ],
      { env },
    );
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.summary).toEqual({ files: 8, assemblies: 8, signed: 6, verified: 6, failed: 0 });
    expect(result.deleted).toBe(true);
    expect(result.output).toBe(join(dir, 'out', 'SampleAddin-signed.zip'));
    const back = new Map((await readZip(readFileSync(result.output))).map((e) => [e.name, e.bytes]));
    for (const name of ['SampleAddin.dll', 'de/SampleAddin.resources.dll', 'AddinTool.exe'])
      expect(verifyStrongName(readModule(back.get(name)!), { expectedKey: key }).valid, name).toBe(true);
    expect(back.has('signing-logs/ThirdParty.Json.dll.log')).toBe(true);
    expect((await (await api(shared.server(), '/assemblies', shared.token())).json()).length).toBe(before);
    expect(r.stdout + r.stderr).not.toContain(shared.token());
  });

  test('an archive the service would refuse is refused before the upload, naming the file and the entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-sign-archive-'));
    const zip = join(dir, 'hostile.zip');
    writeFileSync(zip, buildZip([{ name: 'a/../../evil.dll', data: Buffer.from('MZ') }]));
    const before = (await (await api(shared.server(), '/assemblies', shared.token())).json()).length;
    const r = await runCliAsync(['sign', '--archive', zip, ...settings, '--base-url', shared.server().baseUrl, '--destination-path', join(dir, 'out')], {
      env: { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: shared.token() },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/hostile\.zip: the ZIP archive is damaged or unsafe \(invalid relative path: a\/\.\.\/\.\.\/evil\.dll\)/);
    expect((await (await api(shared.server(), '/assemblies', shared.token())).json()).length).toBe(before);
  });

  test('names and sizes the service refuses (a reserved folder, a Windows device name, an expansion past its limit) are refused before the upload', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-sign-archive-'));
    const env = { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: shared.token() };
    const before = (await (await api(shared.server(), '/assemblies', shared.token())).json()).length;
    const named = join(dir, 'named.zip');
    writeFileSync(
      named,
      buildZip([
        { name: 'signing-logs/x.dll.log', data: Buffer.from('log') },
        { name: 'bin/CON.dll', data: Buffer.from('MZ') },
      ]),
    );
    const r = await runCliAsync(['sign', '--archive', named, ...settings, '--base-url', shared.server().baseUrl, '--destination-path', join(dir, 'out')], {
      env,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('named.zip: 2 entry name(s) the service refuses');
    expect(r.stderr).toContain('signing-logs/x.dll.log (signing-logs/ is reserved');
    expect(r.stderr).toMatch(/bin\/CON\.dll \(the name/);
    // Twice the upload limit expanded is the most an archive may hold: with a limit of 1,000 bytes, 3,000 bytes are too many.
    const large = join(dir, 'large.zip');
    writeFileSync(large, buildZip([{ name: 'a.dll', data: Buffer.alloc(3000) }]));
    const big = await runCliAsync(
      ['sign', '--archive', large, ...settings, '--max-upload-bytes', '1000', '--base-url', shared.server().baseUrl, '--destination-path', join(dir, 'out')],
      { env },
    );
    expect(big.status).toBe(2);
    expect(big.stderr).toContain('large.zip:');
    expect((await (await api(shared.server(), '/assemblies', shared.token())).json()).length).toBe(before);
  });
});

describe('sign --archive against a service that tampers with the result archive', () => {
  // Twice: from a service that offers no signature record (each file judged on its own), and from one that does (the
  // record refuses the swapped dependency, which it has no entry for, before the result archive is kept).
  test.each([false, true])(
    'a changed non-assembly file, a replaced dependency and files never sent fail the run; the extras leave the result (record offered: %s)',
    async (withRecord) => {
      const dir = mkdtempSync(join(tmpdir(), 'signgate-hostile-archive-'));
      const project = join(dir, 'project');
      cpSync(fixturePath('addin'), project, { recursive: true });
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(project, 'tools'));
      writeFileSync(join(project, 'tools', 'install.ps1'), 'Write-Host "install"\r\n');
      const zip = join(dir, 'Addin.zip');
      expect(runCli(['pack', project, '-o', zip, ...settings]).status).toBe(0);
      const server = shared.server();
      const origin = new URL(server.baseUrl).origin;
      // The result archive as a hostile service would send it: one script and one dependency swapped, two files added.
      const proxy = await startProxy(origin, new URL(server.baseUrl).pathname, (req, res) => {
        if (!withRecord && req.method === 'GET' && /\/assemblies\/[^/]+\/status$/.test(req.url ?? '')) {
          void (async () => {
            const real = await fetch(`${origin}${req.url}`, { headers: { authorization: String(req.headers.authorization) } });
            const status = (await real.json()) as Record<string, unknown>;
            delete status.signatureRecord;
            res.writeHead(real.status, { 'content-type': 'application/json' }).end(JSON.stringify(status));
          })();
          return true;
        }
        if (req.method !== 'GET' || !/\/archives\/[^/]+$/.test(req.url ?? '')) return false;
        void (async () => {
          const real = await fetch(`${origin}${req.url}`, { headers: { authorization: String(req.headers.authorization) } });
          const entries = await readZip(new Uint8Array(await real.arrayBuffer()));
          const swapped = entries.map((e) =>
            e.name === 'tools/install.ps1'
              ? { name: e.name, data: Buffer.from('Invoke-Evil\r\n') }
              : e.name === 'ThirdParty.Json.dll'
                ? { name: e.name, data: readFileSync(fixturePath('addin/Contoso.AddinApi.dll')) }
                : { name: e.name, data: e.bytes },
          );
          const body = buildZip([
            ...swapped,
            { name: 'Evil.dll', data: readFileSync(fixturePath('addin/SampleAddin.dll')) },
            { name: 'tools/autorun.ps1', data: Buffer.from('evil') },
          ]);
          res.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length }).end(body);
        })();
        return true;
      });
      try {
        const r = await runCliAsync(
          ['sign', '--archive', zip, ...settings, '--base-url', `${proxy.baseUrl}`, '--destination-path', join(dir, 'out'), '--poll-interval', '50', '--json'],
          {
            env: { SIGNGATE_CACHE_DIR: join(dir, 'cache'), SIGNGATE_ACCESS_TOKEN: shared.token() },
          },
        );
        if (withRecord) {
          expect(r.status, r.stderr).toBe(3);
          expect(r.stderr).toContain('SG_ERR_RECORD_PROOF');
          expect(r.stderr).toContain('ThirdParty.Json.dll came back changed');
          expect(r.stderr).toContain('the result archive is kept at');
          expect(existsSync(join(dir, 'out', 'Addin-signed.zip'))).toBe(false);
          return;
        }
        expect(r.stderr).toContain('offers no signature record');
        expect(r.status, r.stderr).toBe(1);
        const result = JSON.parse(r.stdout) as {
          files: { name: string; failed: boolean; reason: string | null }[];
          extras: string[];
          summary: { failed: number };
        };
        const failed = result.files
          .filter((f) => f.failed)
          .map((f) => f.name)
          .sort();
        expect(failed).toEqual(['ThirdParty.Json.dll', 'tools/install.ps1']);
        expect(result.files.find((f) => f.name === 'tools/install.ps1')!.reason).toContain('came back changed');
        expect(result.extras.sort()).toEqual(['Evil.dll', 'tools/autorun.ps1']);
        expect(result.summary.failed).toBe(4);
        const kept = (await readZip(readFileSync(join(dir, 'out', 'Addin-signed.zip')))).map((e) => e.name);
        expect(kept).not.toContain('Evil.dll');
        expect(kept).not.toContain('tools/autorun.ps1');
      } finally {
        await proxy.close();
      }
    },
  );

  test('a result archive that would inflate to 1 GB from about 1 MB is refused from its headers, before anything is inflated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-bomb-archive-'));
    const zip = join(dir, 'Addin.zip');
    expect(runCli(['pack', fixturePath('addin'), '-o', zip, ...settings]).status).toBe(0);
    // A thousand entries of a million zero bytes: each under 1 MiB, together 1 GB.
    const zeros = Buffer.alloc(1_000_000);
    const bomb = await zipEntries([
      { name: 'SampleAddin.dll', bytes: readFileSync(fixturePath('addin/SampleAddin.dll')) },
      ...Array.from({ length: 1000 }, (_, i) => ({ name: `zeros-${i}.bin`, bytes: zeros })),
    ]);
    expect(bomb.length).toBeLessThan(1_500_000);
    const server = shared.server();
    const proxy = await startProxy(new URL(server.baseUrl).origin, new URL(server.baseUrl).pathname, (req, res) => {
      if (req.method !== 'GET' || !/\/archives\/[^/]+$/.test(req.url ?? '')) return false;
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': bomb.length }).end(bomb);
      return true;
    });
    try {
      const cache = join(dir, 'cache');
      const r = await runCliAsync(
        ['sign', '--archive', zip, ...settings, '--base-url', proxy.baseUrl, '--destination-path', join(dir, 'out'), '--poll-interval', '50'],
        { env: { SIGNGATE_CACHE_DIR: cache, SIGNGATE_ACCESS_TOKEN: shared.token() } },
      );
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(/the result archive of job \S+ was refused: .*"zeros-0\.bin" inflates \d+ times/);
      expect(existsSync(join(dir, 'out', 'Addin-signed.zip'))).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  test('a result archive with an entry outside the job is refused and not left where a result belongs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-hostile-archive-'));
    const zip = join(dir, 'Addin.zip');
    expect(runCli(['pack', fixturePath('addin'), '-o', zip, ...settings]).status).toBe(0);
    const server = shared.server();
    const origin = new URL(server.baseUrl).origin;
    const proxy = await startProxy(origin, new URL(server.baseUrl).pathname, (req, res) => {
      if (req.method !== 'GET' || !/\/archives\/[^/]+$/.test(req.url ?? '')) return false;
      const body = buildZip([
        { name: 'SampleAddin.dll', data: readFileSync(fixturePath('addin/SampleAddin.dll')) },
        { name: '../outside.txt', data: Buffer.from('x') },
      ]);
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length }).end(body);
      return true;
    });
    try {
      const cache = join(dir, 'cache');
      const r = await runCliAsync(
        ['sign', '--archive', zip, ...settings, '--base-url', proxy.baseUrl, '--destination-path', join(dir, 'out'), '--poll-interval', '50'],
        { env: { SIGNGATE_CACHE_DIR: cache, SIGNGATE_ACCESS_TOKEN: shared.token() } },
      );
      expect(r.status).toBe(3);
      expect(r.stderr).toMatch(/the result archive of job \S+ was refused: .*; it is kept at .*refused-/);
      expect(existsSync(join(dir, 'out', 'Addin-signed.zip'))).toBe(false);
      const { readdirSync } = await import('node:fs');
      expect(readdirSync(cache).filter((n) => n.startsWith('refused-'))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });
});
