// The world our users build in: assemblies from `dotnet build` of an SDK-style solution (fixtures/sdk, built by
// fixtures/scripts/build-sdk-fixtures.sh). Every check rule the SDK can produce fires on one of them, the passing
// add-in passes, and sign (against the reference service), verify, audit and Mono's sn accept the results.
// These use the committed binaries; the rebuild with dotnet that reproduces them is test/sdk/sdk-rebuild.test.ts.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rules } from '../../src/rules/index.js';
import { fixturePath, hasMono, runCli, runCliAsync, runMono } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { listFiles, manifest, sha256 } from './sdk-manifest.js';

const KEY = 'fixtures/test-keys/12345_public.snk';
const BIN = 'fixtures/sdk/bin';
const check = (...args: string[]) => runCli(['check', '--vendor', 'Contoso', '--key', KEY, '--json', ...args]);

interface Report {
  files: { path: string; outcome: string; role: string; reason: string; findings: { ruleId: string; message: string }[] }[];
  uploadSet: { findings: { ruleId: string; message: string }[] };
}
const parse = (stdout: string): Report => JSON.parse(stdout);
// Without the SG801 note, which every delay-signed net48 file carries until it is signed (checked on its own below).
const ruleIds = (report: Report) =>
  [...new Set([...report.files.flatMap((f) => f.findings), ...report.uploadSet.findings].map((f) => f.ruleId))].filter((id) => id !== 'SG801').sort();

/**
 * Rules the .NET SDK cannot produce, and why: the compiler writes well-formed managed images (SG001), sizes the
 * signature slot from the key it signs or delay-signs with (SG206), and never changes a file after signing it
 * (SG204: that takes an obfuscator, ILMerge or a patcher after a full-key-pair build). Nor does it link
 * multi-module assemblies (SG207: OutputType Module makes a netmodule, but only al or -addmodule lists it in a
 * manifest; see fixtures/modules and test/rules/multi-module.test.ts).
 */
// SG208: an Authenticode signature comes from signtool after the build (test/authenticode makes one with osslsigncode).
// SG505 is a file name, not a build setting: test/cli/input-identity.test.ts makes it fire.
// SG802 needs a dependency delay-signed with a key that is no option's: test/cli/fix-journey.test.ts makes one with
// fix --delay-sign from the SDK-built UnsignedLib of each target (bin/unsigned-lib/<tfm>).
const NOT_FROM_THE_SDK = ['SG001', 'SG204', 'SG206', 'SG207', 'SG208', 'SG505', 'SG802'];
const fired = new Set<string>();

test('the committed binaries are the ones the manifest lists, byte for byte', () => {
  expect(listFiles(fixturePath('sdk/bin')).map((f) => `bin/${f}`)).toEqual(manifest.files.map((f) => f.file));
  for (const f of manifest.files) expect(sha256(fixturePath(`sdk/${f.file}`)), f.file).toBe(f.sha256);
  // The key the projects delay-sign with is option 12345's public key, copied beside the solution.
  expect(readFileSync(fixturePath('sdk/12345_public.snk'))).toEqual(readFileSync(fixturePath('test-keys/12345_public.snk')));
});

describe('the passing solution', () => {
  test.each(['net48', 'net8.0'])('%s: add-in, indirect helper and satellite need signing and pass', (tfm) => {
    const r = check(`${BIN}/${tfm}`);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const report = parse(r.stdout);
    expect(ruleIds(report)).toEqual([]);
    expect(report.files.flatMap((f) => f.findings)).toEqual([]);
    // Asked for: as built (delay-signed), the net48 files load under neither license: .NET Framework refuses them
    // without sn -Vr; .NET 8 validates no strong name, so the developer license loads them.
    const asked = parse(check(`${BIN}/${tfm}`, '--rule', 'loads-under-no-license=note').stdout);
    const notes = asked.files.flatMap((f) => f.findings).filter((f) => f.ruleId === 'SG801');
    expect(notes.length).toBe(tfm === 'net48' ? 3 : 0);
    if (notes.length) fired.add('SG801');
    const byName = Object.fromEntries(report.files.map((f) => [f.path.slice(`${BIN}/${tfm}/`.length), f]));
    expect(Object.keys(byName).sort()).toEqual(['SampleAddin.Helpers.dll', 'SampleAddin.dll', 'de/SampleAddin.resources.dll']);
    expect(byName['SampleAddin.dll']).toMatchObject({ outcome: 'pass', reason: expect.stringContaining('directly') });
    expect(byName['SampleAddin.Helpers.dll']).toMatchObject({ outcome: 'pass', reason: expect.stringContaining('indirectly (via SampleAddin)') });
    expect(byName['de/SampleAddin.resources.dll']).toMatchObject({ outcome: 'pass', reason: expect.stringContaining('satellite') });
  });
});

describe('the wrong turns users take, one SDK project each', () => {
  // project (fixtures/sdk/WrongTurns/<project>) → the rule ids `check` reports for its output folder
  test.each([
    ['NotSigned', ['SG201']],
    ['PublicSign', ['SG202']],
    ['FullKeyPair', ['SG203']],
    ['OtherOption', ['SG205']],
    ['Sha256Key', ['SG205']],
    ['NoAttribute', ['SG301']],
    ['AttributeFalse', ['SG302']],
    ['AttributeLegacyCtor', ['SG303']],
    ['LookAlike', ['SG304']],
    ['GenericLookAlike', ['SG304']],
    ['UnsignedReference', ['SG401']],
    ['VendorCopied', ['SG501']],
  ])('%s: %j', (project, expected) => {
    const r = check(`${BIN}/wrong-turns/${project}`);
    const report = parse(r.stdout);
    expect(ruleIds(report)).toEqual(expected);
    expect(r.status).toBe(expected.some((id) => id === 'SG203' || id === 'SG501') ? 0 : 1);
    expected.forEach((id) => fired.add(id));
  });

  test('the SHA-256 key header is named as the difference', () => {
    const report = parse(check(`${BIN}/wrong-turns/Sha256Key`).stdout);
    expect(report.files[0].findings.find((f: { rule: string }) => f.rule === 'wrong-key').message).toContain(
      'the RSA key is the same but the hash-algorithm header differs (sha256 in the assembly, sha1 in',
    );
  });

  test('a netmodule (OutputType Module) named for signing: SG002, and with nothing else there is nothing to sign (SG504)', () => {
    const r = check(`${BIN}/wrong-turns/Netmodule/WrongTurn.Netmodule.netmodule`);
    expect(r.status).toBe(1);
    expect(ruleIds(parse(r.stdout))).toEqual(['SG002', 'SG504']);
    fired.add('SG002');
    fired.add('SG504');
  });
});

describe('the upload set of SDK output', () => {
  test('both target frameworks in one upload without --root: the same names collide (SG502); with --root they do not', () => {
    const together = check(`${BIN}/net48`, `${BIN}/net8.0`);
    expect(together.status).toBe(1);
    expect(ruleIds(parse(together.stdout))).toEqual(['SG502']);
    fired.add('SG502');
    const rooted = check(`${BIN}/net48`, `${BIN}/net8.0`, '--root', BIN);
    expect(rooted.status).toBe(0);
  });

  test('over the size limit: SG503', () => {
    const r = check(`${BIN}/net48`, '--max-upload-bytes', '4096');
    expect(ruleIds(parse(r.stdout))).toEqual(['SG503']);
    fired.add('SG503');
  });
});

describe('against the reference service on loopback', () => {
  let server: TestServer;
  let work: string;
  beforeAll(async () => {
    server = await startServer();
    work = mkdtempSync(join(tmpdir(), 'signgate-sdk-'));
  });
  afterAll(() => server.close());

  const online = (token: string, ...args: string[]) =>
    runCliAsync(['check', '--vendor', 'Contoso', '--key', KEY, '--json', `${BIN}/net48`, '--base-url', server.baseUrl, ...args], {
      env: { SIGNGATE_ACCESS_TOKEN: token },
    });

  test('licenses: an organization without option 12345 (SG601), one with no license at all (SG602)', async () => {
    const other = await online(server.token('other-org', 'alice'));
    expect(ruleIds(parse(other.stdout))).toEqual(['SG601']);
    const none = await online(server.token('unlicensed', 'bob'));
    expect(ruleIds(parse(none.stdout))).toEqual(['SG602']);
    fired.add('SG601').add('SG602');
  });

  const signed = (tfm: string) => join(work, 'signed', tfm);

  test.each(['net48', 'net8.0'])('sign %s: every file uploaded, signed and verified', async (tfm) => {
    const r = await runCliAsync(
      [
        'sign',
        `${BIN}/${tfm}`,
        '--root',
        `${BIN}/${tfm}`,
        '--destination-path',
        signed(tfm),
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--base-url',
        server.baseUrl,
        '--poll-interval',
        '50',
        '--delete-afterwards',
        '--json',
      ],
      { env: { SIGNGATE_ACCESS_TOKEN: server.token(), SIGNGATE_CACHE_DIR: join(work, 'cache') } },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).summary).toEqual({ files: 3, uploaded: 3, signed: 3, verified: 3, failed: 0, notUploaded: 0 });
    expect(listFiles(signed(tfm)).filter((f) => f.endsWith('.dll'))).toEqual(['SampleAddin.Helpers.dll', 'SampleAddin.dll', 'de/SampleAddin.resources.dll']);
  });

  test('verify: the signed files are validly signed with the option key', () => {
    const r = runCli(['verify', signed('net48'), signed('net8.0'), '--key', KEY]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    const delay = runCli(['verify', `${BIN}/net48`]);
    expect(delay.status).toBe(1);
  });

  test('audit: the signed release passes; the delay-signed build output is not signed for release (SG701)', () => {
    const ok = runCli(['audit', signed('net48'), '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '--no-timestamp'], {
      env: { SIGNGATE_CACHE_DIR: join(work, 'cache') },
    });
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    const raw = runCli(['audit', `${BIN}/net48`, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '--no-timestamp']);
    expect(raw.status).toBe(1);
    expect(raw.stdout).toContain('SG701');
  });

  test.runIf(hasMono)("Mono's sn -vf accepts the signed net48 files", () => {
    for (const file of listFiles(signed('net48')).filter((f) => f.endsWith('.dll'))) {
      const r = runMono('sn', ['-q', '-vf', join(signed('net48'), file)]);
      expect(r.status, `${file}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });
});

test('every check rule the SDK can trigger fired on an SDK-built fixture', () => {
  const all = rules.map((r) => r.id).sort();
  expect([...fired, ...NOT_FROM_THE_SDK].sort()).toEqual(all);
});
