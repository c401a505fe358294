// Authenticode through the commands: check warns before the upload, sign reports what came back, verify shows
// both signatures; every Authenticode verdict is compared with osslsigncode verify.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, osslVerify, removeTestPki, type TestPki } from '../helpers/authenticode.js';
import { checkPaths, ruleNames } from '../helpers/check.js';
import { fixture, fixturePath, repoRoot, runCli, runCliAsync } from '../helpers/fixtures.js';
import { sharedServer } from '../helpers/shared-server.js';
import { schemaValidator } from '../helpers/schemas.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));

describe.skipIf(!hasOsslsigncode)('Authenticode in check, sign and verify', () => {
  const service = sharedServer();
  let pki: TestPki;
  let addin: string;

  beforeAll(async () => {
    pki = await makeTestPki();
    // A build output whose add-in was Authenticode-signed before the upload (the wrong order).
    addin = join(pki.dir, 'addin');
    mkdirSync(addin);
    copyFileSync(fixturePath('addin/Contoso.AddinApi.dll'), join(addin, 'Contoso.AddinApi.dll'));
    await authenticodeSign(pki, fixturePath('addin/SampleAddin.dll'), join(addin, 'SampleAddin.dll'));
    copyFileSync(fixturePath('addin/SampleAddin.Helpers.dll'), join(addin, 'SampleAddin.Helpers.dll'));
    // A release: strong name first, then Authenticode (good.dll); Authenticode first (broken.dll); none (plain.dll).
    writeFileSync(join(pki.dir, 'sn.dll'), signAssembly(readModule(fixture('addin/SampleAddin.dll')), pair));
    await authenticodeSign(pki, join(pki.dir, 'sn.dll'), join(pki.dir, 'good.dll'));
    writeFileSync(join(pki.dir, 'broken.dll'), signAssembly(readModule(new Uint8Array(readFileSync(join(addin, 'SampleAddin.dll')))), pair));
  });
  afterAll(() => removeTestPki(pki));

  test('check warns (SG208) on the file Authenticode-signed before the upload, and only on it', async () => {
    expect((await osslVerify(pki, join(addin, 'SampleAddin.dll'))).ok).toBe(true);
    const result = await checkPaths([addin]);
    expect(ruleNames(result)).toEqual(['authenticode-before-strong-name', 'vendor-assembly-included']);
    const finding = result.findings.find((f) => f.ruleId === 'SG208')!;
    expect(finding.severity).toBe('warning');
    expect(finding.file).toMatch(/SampleAddin\.dll$/);
    expect(finding.message).toContain(`by ${pki.signerSubject} (valid now)`);
    expect(result.summary.errors).toBe(0);
    // What the check predicts: after strong-name signing the Authenticode signature is broken (oracle agrees).
    const signed = signAssembly(readModule(new Uint8Array(readFileSync(join(addin, 'SampleAddin.dll')))), pair);
    writeFileSync(join(pki.dir, 'after-service.dll'), signed);
    expect((await osslVerify(pki, join(pki.dir, 'after-service.dll'))).ok).toBe(false);
  });

  test('check is silent on the delay-signed add-in without Authenticode', async () => {
    expect(ruleNames(await checkPaths(['fixtures/addin']))).not.toContain('authenticode-before-strong-name');
  });

  test('verify --authenticode: both signatures per file, verdicts as osslsigncode says', async () => {
    const good = join(pki.dir, 'good.dll');
    const broken = join(pki.dir, 'broken.dll');
    const plain = join(pki.dir, 'sn.dll');
    expect((await osslVerify(pki, good)).ok).toBe(true);
    expect((await osslVerify(pki, broken)).ok).toBe(false);
    const r = runCli(['verify', good, broken, plain, '--authenticode', '--json']);
    expect(r.status, r.stderr).toBe(1);
    const records = JSON.parse(r.stdout) as Array<{
      path: string;
      valid: boolean;
      authenticode: { state: string; publisher: string | null; reason: string | null };
    }>;
    const byName = Object.fromEntries(records.map((x) => [x.path.split('/').pop(), x]));
    expect(byName['good.dll']).toMatchObject({ valid: true, authenticode: { state: 'valid', publisher: pki.signerSubject } });
    expect(byName['broken.dll']!.valid).toBe(true);
    expect(byName['broken.dll']!.authenticode.state).toBe('invalid');
    expect(byName['broken.dll']!.authenticode.reason).toMatch(/changed after Authenticode signing/);
    expect(byName['sn.dll']).toMatchObject({ valid: true, authenticode: { state: 'absent' } });
    // One good file alone passes; the text names the signer.
    const one = runCli(['verify', good, '--authenticode']);
    expect(one.status, one.stdout).toBe(0);
    expect(one.stdout).toContain(`authenticode: valid, signer ${pki.signerSubject}, sha256, no timestamp`);
    expect(one.stdout).toContain('1 of 1 files with a valid Authenticode signature');
    // Without --authenticode, verify is what it was: the strong name only.
    expect(runCli(['verify', broken]).status).toBe(0);
  });

  test('verify --trust-store: trust is reported apart and required when asked', () => {
    const good = join(pki.dir, 'good.dll');
    const trusted = runCli(['verify', good, '--trust-store', pki.caPem]);
    expect(trusted.status, trusted.stdout).toBe(0);
    expect(trusted.stdout).toContain(', trusted');
    const other = runCli(['verify', good, '--trust-store', pki.otherCaPem, '--json']);
    expect(other.status).toBe(1);
    const [record] = JSON.parse(other.stdout);
    expect(record.authenticode).toMatchObject({ state: 'valid', trusted: false });
    expect(record.authenticode.trustProblem).toMatch(/not in the trust store/);
    // In worker threads the trust store crosses as text and gives the same verdicts, in the same order.
    const threaded = runCli(['verify', good, join(pki.dir, 'broken.dll'), '--trust-store', pki.caPem, '--threads', '2', '--json']);
    expect(threaded.status, threaded.stdout.slice(0, 3000) + threaded.stderr).toBe(1);
    expect(
      (JSON.parse(threaded.stdout) as Array<{ path: string; authenticode: { state: string; trusted: boolean | null } }>).map((x) => [
        x.path.split('/').pop(),
        x.authenticode.state,
        x.authenticode.trusted,
      ]),
    ).toEqual([
      ['broken.dll', 'invalid', expect.anything()],
      ['good.dll', 'valid', true],
    ]);
    const bad = runCli(['verify', good, '--trust-store', join(pki.dir, 'ext.cnf')]);
    expect(bad.status).toBe(3); // unreadable input, as for a bad key file
    expect(bad.stderr).toMatch(/ext\.cnf holds no -----BEGIN CERTIFICATE----- block/);
  });

  test('the ASN.1 libraries load only for a file that carries a certificate table', () => {
    // A child process: which CommonJS modules did a check load? pkijs and asn1js come only through require.
    const loaded = (paths: string[]) => {
      const script = [
        "import { createRequire } from 'node:module';",
        `const { check } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'index.js')).href)});`,
        `await check({ paths: ${JSON.stringify(paths)}, keys: [${JSON.stringify(fixturePath('test-keys/12345_public.snk'))}], vendor: 'Contoso' });`,
        'const cache = Object.keys(createRequire(import.meta.url).cache);',
        "console.log(JSON.stringify(['pkijs', 'asn1js'].filter((name) => cache.some((k) => k.includes(`/node_modules/${name}/`)))));",
      ].join('\n');
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as string[];
    };
    expect(loaded([fixturePath('addin')])).toEqual([]);
    // asn1js reads the signature; pkijs only what is not of the usual shape (and RFC 3161 TSTInfo).
    expect(loaded([join(pki.dir, 'good.dll')])).toContain('asn1js');
  });

  test('inspect --json shows the parsed structure and validates against the schema', () => {
    const r = runCli(['inspect', join(pki.dir, 'good.dll'), join(pki.dir, 'broken.dll'), '--json']);
    expect(r.status, r.stderr).toBe(0);
    const infos = JSON.parse(r.stdout);
    const validate = schemaValidator('inspect.schema.json');
    expect(validate(infos), JSON.stringify(validate.errors)).toBe(true);
    const [broken, good] = infos; // in path order
    expect(good.pe.authenticode).toBe(true);
    expect(good.authenticode.state).toBe('valid');
    expect(good.authenticode.entries).toEqual([expect.objectContaining({ index: 0, revision: 0x200, certificateType: 2 })]);
    expect(good.authenticode.signatures[0]).toMatchObject({
      digestAlgorithm: 'sha256',
      imageHashMatches: true,
      signatureValid: true,
      signatureAlgorithm: 'rsa-sha256',
    });
    expect(good.authenticode.signatures[0].certificates).toHaveLength(2);
    expect(broken.authenticode.signatures[0].imageHashMatches).toBe(false);
    const text = runCli(['inspect', join(pki.dir, 'broken.dll')]);
    expect(text.stdout).toMatch(/authenticode +invalid: the file's sha256 image hash/);
    // --no-authenticode: the strong name only; the table is still seen (pe.authenticode), its signatures not read.
    const skipped = runCli(['inspect', join(pki.dir, 'good.dll'), '--json', '--no-authenticode']);
    const [plain] = JSON.parse(skipped.stdout);
    expect(validate([plain]), JSON.stringify(validate.errors)).toBe(true);
    expect(plain.pe.authenticode).toBe(true);
    expect(plain.authenticode).toBeNull();
    expect(plain.strongName).toEqual(good.strongName);
  });

  test('sign: check warned before the upload; the returned file is strong-name signed and its Authenticode is reported broken', async () => {
    const out = join(pki.dir, 'signed');
    const env = { SIGNGATE_CACHE_DIR: join(pki.dir, 'cache'), SIGNGATE_ACCESS_TOKEN: service.token() };
    const args = [
      'sign',
      addin,
      '--root',
      addin,
      '--vendor',
      'Contoso',
      '--key',
      fixturePath('test-keys/12345_public.snk'),
      '--base-url',
      service.server().baseUrl,
      '--destination-path',
      out,
      '--poll-interval',
      '50',
      '--delete-afterwards',
    ];
    const r = await runCliAsync([...args, '--json'], { env });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(schemaValidator('sign-result.schema.json')(result)).toBe(true);
    const byName = Object.fromEntries(result.files.map((f: { uploadName: string }) => [f.uploadName, f]));
    expect(byName['SampleAddin.dll']).toMatchObject({ verified: true, authenticode: { state: 'invalid', publisher: pki.signerSubject } });
    expect(byName['SampleAddin.Helpers.dll']).toMatchObject({ verified: true, authenticode: { state: 'absent' } });
    expect((await osslVerify(pki, join(out, 'SampleAddin.dll'))).ok).toBe(false);
    // The text says it per file and in the summary.
    const text = await runCliAsync(
      [
        'sign',
        addin,
        '--root',
        addin,
        '--vendor',
        'Contoso',
        '--key',
        fixturePath('test-keys/12345_public.snk'),
        '--base-url',
        service.server().baseUrl,
        '--destination-path',
        join(pki.dir, 'signed-2'),
        '--poll-interval',
        '50',
      ],
      { env },
    );
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/SG208 authenticode-before-strong-name/);
    expect(text.stdout).toMatch(
      /Authenticode: invalid: the file's sha256 image hash [0-9A-F]+ differs from the signed [0-9A-F]+: the file changed after Authenticode signing, signer CN=signgate TEST ONLY Code Signing, O=Contoso Test.*; sign with signtool after this step/,
    );
    expect(text.stdout).toContain('1 of 2 returned files carry an Authenticode signature');
    // And when the service returns a file that is then Authenticode-signed (the right order), both verify.
    await authenticodeSign(pki, join(out, 'SampleAddin.Helpers.dll'), join(pki.dir, 'helpers-final.dll'));
    expect((await osslVerify(pki, join(pki.dir, 'helpers-final.dll'))).ok).toBe(true);
    const both = runCli(['verify', join(pki.dir, 'helpers-final.dll'), '--authenticode', '--key', fixturePath('test-keys/12345_public.snk')]);
    expect(both.status, both.stdout).toBe(0);
  });
});
