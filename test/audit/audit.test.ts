// signgate audit: content, determinism, comparison with the previous release, manifest, schema.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schemaValidator } from '../helpers/schemas.js';
import { beforeAll, describe, expect, test } from 'vitest';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const validate = schemaValidator('audit.schema.json');

/** A release folder: the sample add-in's files that need signing, signed with the sandbox key. */
function release(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-release-'));
  for (const name of [
    'SampleAddin.dll',
    'SampleAddin.Helpers.dll',
    'SampleAddin.XmlSerializers.dll',
    'Interop.SampleCom.dll',
    'AddinTool.exe',
    'de/SampleAddin.resources.dll',
    'ThirdParty.Json.dll',
  ]) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    const bytes = fixture(`addin/${name}`);
    const signed = name === 'ThirdParty.Json.dll' ? bytes : signAssembly(readModule(bytes), pair);
    writeFileSync(join(dir, name), signed);
  }
  return dir;
}

const audit = (dir: string, ...extra: string[]) =>
  runCli(['audit', dir, '--key', KEY, '--vendor', 'Contoso', ...extra], { env: { SIGNGATE_CACHE_DIR: join(dir, '..', 'no-cache') } });

describe('audit of a signed release', () => {
  let dir: string;
  let report: {
    files: {
      path: string;
      outcome: string;
      sha256: string;
      strongName: { state: string; signedWithExpectedKey: boolean; optionId: number | null };
      vendorAttribute: string;
    }[];
    summary: { byOutcome: Record<string, number>; byState: Record<string, number> };
    generatedAt: string | null;
  };
  beforeAll(() => {
    dir = release();
    const r = audit(dir, '--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    report = JSON.parse(r.stdout);
  });

  test('the JSON validates against schemas/audit.schema.json', () => {
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
  });

  test('every file with hash, verified strong name, option and vendor attribute', () => {
    const addin = report.files.find((f) => f.path.endsWith('/SampleAddin.dll'))!;
    expect(addin.strongName).toMatchObject({ state: 'signed', signedWithExpectedKey: true, optionId: 12345 });
    expect(addin.vendorAttribute).toBe('present');
    expect(addin.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(report.summary.byOutcome).toEqual({ ok: 6, fail: 0, 'not-required': 1 });
    expect(report.generatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test('deterministic: with --no-timestamp the same inputs give the same bytes, in every format', () => {
    for (const format of ['json', 'html', 'markdown']) {
      const a = audit(dir, '--format', format, '--no-timestamp').stdout;
      const b = audit(dir, '--format', format, '--no-timestamp').stdout;
      expect(a.length).toBeGreaterThan(500);
      expect(a).toBe(b);
      // With the timestamp, exactly one line differs between runs.
      const withTime = audit(dir, '--format', format).stdout.split('\n');
      const without = a.split('\n');
      expect(withTime.filter((l) => !without.includes(l)).length).toBe(1);
    }
  }, 120_000);

  test('the delay-signed build output fails: not signed for release', () => {
    const r = audit(fixturePath('addin'), '--format', 'json', '--no-timestamp');
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.findings.filter((f: { rule: string }) => f.rule === 'not-signed-for-release').length).toBe(6);
  });

  test('--compare: added, removed, re-signed, key changed, identity changed, signature lost', () => {
    const previousJson = join(dir, '..', `prev-${Date.now()}.json`);
    writeFileSync(previousJson, audit(dir, '--format', 'json', '--no-timestamp').stdout);
    const next = release();
    // re-signed: same identity, new bytes (a new build of the same version)
    copyFileSync(fixturePath('findings/passing/FindingAddin.dll'), join(next, 'Added.dll'));
    writeFileSync(join(next, 'SampleAddin.Helpers.dll'), signAssembly(readModule(fixture('addin/SampleAddin.Helpers.dll')), pair)); // identical bytes: no change
    writeFileSync(join(next, 'AddinTool.exe'), fixture('findings/signed-with-other-key/FindingAddin.dll'));
    // identity changed: another assembly under the same file name, same key
    writeFileSync(join(next, 'Interop.SampleCom.dll'), signAssembly(readModule(fixture('findings/passing/FindingAddin.dll')), pair));
    rmSync(join(next, 'ThirdParty.Json.dll'));
    // re-signed: identity and key stay, the bytes change (signed again after a checksum-only difference).
    const resigned = Buffer.from(readFileSync(join(next, 'SampleAddin.dll')));
    resigned.writeUInt32LE(0x1234, 0xd8);
    writeFileSync(join(next, 'SampleAddin.dll'), resigned);
    const r = audit(next, '--format', 'json', '--no-timestamp', '--compare', previousJson);
    const changes = JSON.parse(r.stdout).changes;
    const names = (list: string[]) => list.map((p) => p.split('/').pop());
    expect(names(changes.added)).toEqual(['Added.dll']);
    expect(names(changes.removed)).toEqual(['ThirdParty.Json.dll']);
    expect(names(changes.keyChanged)).toEqual(['AddinTool.exe']);
    // Another assembly signed with another key: the key, the identity and the signature all changed.
    expect(names(changes.identityChanged)).toEqual(['AddinTool.exe', 'Interop.SampleCom.dll']);
    expect(names(changes.signatureLost)).toEqual(['AddinTool.exe']);
    expect(names(changes.resigned)).toEqual(['SampleAddin.dll']);
  });

  test('--manifest: a missing and an extra file are findings', () => {
    const manifest = join(dir, '..', `manifest-${Date.now()}.txt`);
    writeFileSync(
      manifest,
      [
        '# release 1.4.2',
        'SampleAddin.dll',
        'SampleAddin.Helpers.dll',
        'SampleAddin.XmlSerializers.dll',
        'Interop.SampleCom.dll',
        'AddinTool.exe',
        'de\\SampleAddin.resources.dll',
        'Missing.dll',
        '',
      ].join('\r\n'),
    );
    const r = audit(dir, '--format', 'json', '--no-timestamp', '--manifest', manifest);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.manifest.missing).toEqual(['Missing.dll']);
    expect(out.manifest.extra.map((p: string) => p.split('/').pop())).toEqual(['ThirdParty.Json.dll']);
    expect(out.findings.map((f: { rule: string }) => f.rule).sort()).toEqual(['manifest-extra-file', 'manifest-missing-file']);
  });

  test('--manifest of the whole folder (it names a file that is not an assembly): other files are compared too', () => {
    const folder = release();
    writeFileSync(join(folder, 'readme.txt'), 'the add-in\n');
    writeFileSync(join(folder, 'de', 'readme.de.txt'), 'left from the last release\n');
    const assemblies = [
      'SampleAddin.dll',
      'SampleAddin.Helpers.dll',
      'SampleAddin.XmlSerializers.dll',
      'Interop.SampleCom.dll',
      'AddinTool.exe',
      'ThirdParty.Json.dll',
      'de/SampleAddin.resources.dll',
    ];
    const manifest = join(folder, '..', 'whole-folder.txt');
    writeFileSync(manifest, [...assemblies, 'readme.txt', 'SampleAddin.dll.config', ''].join('\n'));
    const r = audit(folder, '--format', 'json', '--no-timestamp', '--manifest', manifest);
    expect(r.status).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.manifest.missing).toEqual(['SampleAddin.dll.config']);
    expect(out.manifest.extra.map((p: string) => p.split('/').slice(-2).join('/'))).toEqual(['de/readme.de.txt']);
    // A manifest of the assemblies alone compares the assemblies alone, as before.
    writeFileSync(manifest, assemblies.join('\n'));
    const only = audit(folder, '--format', 'json', '--no-timestamp', '--manifest', manifest);
    expect(only.status, only.stdout).toBe(0);
    expect(JSON.parse(only.stdout).manifest).toEqual({ missing: [], extra: [] });
  });
});

describe('the paths of the evidence, from where the report lies', () => {
  test('a key outside the working folder is named relative to the report, in every format written with -o, and the report folder moves with it', () => {
    const dir = release();
    // The working folder, the report folder below it and the key beside it: the key is outside the working folder.
    const work = mkdtempSync(join(tmpdir(), 'signgate-evidence-'));
    const reports = join(work, 'reports', 'v1.2.1');
    mkdirSync(join(work, 'keys'));
    mkdirSync(reports, { recursive: true });
    const key = join(work, 'keys', '12345_public.snk');
    copyFileSync(KEY, key);
    const run = (output: string) =>
      runCli(['audit', dir, '--key', key, '--vendor', 'Contoso', '--no-timestamp', '-o', output], {
        cwd: join(work, 'reports'),
        env: { SIGNGATE_CACHE_DIR: join(work, 'no-cache') },
      });
    for (const name of ['audit.json', 'audit.md', 'audit.html']) {
      const r = run(join('v1.2.1', name));
      expect(r.status, r.stderr).toBe(0);
      const text = readFileSync(join(reports, name), 'utf8');
      expect(text, name).toContain('../../keys/12345_public.snk');
      expect(text, name).not.toContain(key);
    }
    const stored = JSON.parse(readFileSync(join(reports, 'audit.json'), 'utf8')) as { settings: { keys: { source: string }[] } };
    expect(stored.settings.keys.map((k) => k.source)).toEqual(['../../keys/12345_public.snk']);
    // Printed rather than written, the report names it as the working folder sees it.
    const printed = runCli(['audit', dir, '--key', key, '--vendor', 'Contoso', '--format', 'markdown'], {
      cwd: join(work, 'reports'),
      env: { SIGNGATE_CACHE_DIR: join(work, 'no-cache') },
    });
    expect(printed.stdout).toContain(`Key ${key}:`);
    // The report still verifies against the release from anywhere.
    const verify = runCli(['audit', '--verify-report', join(reports, 'audit.json'), dir], { env: { SIGNGATE_CACHE_DIR: join(work, 'no-cache') } });
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
  });
});
