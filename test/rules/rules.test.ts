// Each rule fires on its own fixture and stays silent on the passing folders (one line per fixture).
import { describe, expect, test } from 'vitest';
import { rules } from '../../src/rules/index.js';
import { checkPaths, expectedKey, ruleNames } from '../helpers/check.js';

describe('the passing add-in folder', () => {
  test('fixtures/addin: every file that needs signing passes; only the vendor DLL is flagged, as a warning', async () => {
    const result = await checkPaths(['fixtures/addin']);
    expect(ruleNames(result)).toEqual(['vendor-assembly-included']);
    expect(result.summary).toMatchObject({ files: 8, needsSigning: 6, passed: 6, failed: 0, errors: 0, warnings: 1, upload: 6 });
  });

  test('roles and reasons: direct, indirect, companions, vendor, not required', async () => {
    const result = await checkPaths(['fixtures/addin']);
    const role = Object.fromEntries(result.files.map((f) => [f.path.replace('fixtures/addin/', ''), [f.role, f.reason]]));
    expect(role['SampleAddin.dll']).toEqual(['direct', 'uses the vendor API directly (Contoso.AddinBase from Contoso.AddinApi)']);
    expect(role['AddinTool.exe']![0]).toBe('direct');
    expect(role['SampleAddin.Helpers.dll']).toEqual(['indirect', 'uses the vendor API indirectly (via SampleAddin)']);
    expect(role['SampleAddin.XmlSerializers.dll']).toEqual(['companion', 'XmlSerializers companion of SampleAddin']);
    expect(role['Interop.SampleCom.dll']).toEqual(['companion', 'COM interop companion of SampleAddin']);
    expect(role['de/SampleAddin.resources.dll']).toEqual(['companion', 'satellite resource companion of SampleAddin']);
    expect(role['Contoso.AddinApi.dll']![0]).toBe('vendor');
    expect(role['ThirdParty.Json.dll']![0]).toBe('not-required');
    expect(result.uploadSet.files).not.toContain('fixtures/addin/Contoso.AddinApi.dll');
    expect(result.uploadSet.files).not.toContain('fixtures/addin/ThirdParty.Json.dll');
  });

  test('fixtures/findings/passing: no finding at all', async () => {
    expect(ruleNames(await checkPaths(['fixtures/findings/passing']))).toEqual([]);
  });
});

describe('each finding on its own fixture', () => {
  test.each([
    ['not-delay-signed', ['not-delay-signed']],
    ['public-signed', ['public-signed']],
    ['already-signed', ['already-signed']],
    ['signed-with-other-key', ['wrong-key']],
    ['invalid-signature', ['invalid-signature']],
    ['wrong-key', ['wrong-key']],
    ['wrong-key-hash-header', ['wrong-key']],
    ['signature-slot-size', ['signature-slot-size']],
    ['missing-vendor-attribute', ['missing-vendor-attribute']],
    ['vendor-attribute-false', ['vendor-attribute-false']],
    ['vendor-attribute-wrong-type', ['vendor-attribute-wrong-type']],
    ['vendor-attribute-look-alike', ['vendor-attribute-look-alike']],
    ['vendor-attribute-look-alike-third-party', ['vendor-attribute-look-alike']],
    ['unsigned-reference', ['unsigned-reference']],
    ['refused-by-net-framework', ['refused-by-net-framework']],
  ])('fixtures/findings/%s -> %j', async (folder, expected) => {
    expect(ruleNames(await checkPaths([`fixtures/findings/${folder}`]))).toEqual(expected);
  });

  test('malformed and not-managed: corrupt files, and native or netmodule files named explicitly', async () => {
    // Alone, such files also leave nothing to sign (nothing-to-sign.test.ts).
    expect(ruleNames(await checkPaths(['fixtures/corrupt/zero-byte.dll']))).toEqual(['malformed', 'nothing-to-sign']);
    // Native code named explicitly needs nothing: not required, no finding; the netmodule is not-managed.
    expect(ruleNames(await checkPaths(['fixtures/variants/native.dll', 'fixtures/assemblies/part.netmodule']))).toEqual(['not-managed', 'nothing-to-sign']);
    // Found in a folder, a native DLL is not required, not an error.
    const folder = await checkPaths(['fixtures/variants']);
    expect(folder.files.find((f) => f.path.endsWith('native.dll'))).toMatchObject({ role: 'not-required', outcome: 'not-required', findings: [] });
  });

  test('already-signed is a warning and the file is not uploaded; the others are errors', async () => {
    const signed = await checkPaths(['fixtures/findings/already-signed']);
    expect(signed.findings[0]!.severity).toBe('warning');
    expect(signed.uploadSet.files).toEqual([]);
    expect(signed.summary.errors).toBe(0);
  });

  test('wrong-key shows both tokens and says when only the hash-algorithm header differs', async () => {
    const header = await checkPaths(['fixtures/findings/wrong-key-hash-header']);
    expect(header.findings.find((f) => f.rule === 'wrong-key')!.message).toMatch(/key token [0-9a-f]{16}, expected 5d004f218731cd20/);
    expect(header.findings.find((f) => f.rule === 'wrong-key')!.message).toContain(
      'the RSA key is the same but the hash-algorithm header differs (sha256 in the assembly, sha1',
    );
    const other = await checkPaths(['fixtures/findings/wrong-key']);
    expect(other.findings.find((f) => f.rule === 'wrong-key')!.message).not.toContain('RSA key is the same');
  });

  test('with several keys, a file signed with any of them passes the key check', async () => {
    const result = await checkPaths(['fixtures/findings/wrong-key'], {
      keys: [expectedKey('test-keys/12345_public.snk'), expectedKey('test-keys/other_public.snk', null)],
    });
    expect(ruleNames(result)).toEqual([]);
  });

  test('every rule in the registry has a fixture above that makes it fire', () => {
    // netmodule-mismatch fires on fixtures/modules/changed-module (multi-module.test.ts), authenticode-before-strong-name
    // on an add-in Authenticode-signed by osslsigncode (test/authenticode/check-sign-verify.test.ts).
    const covered = new Set([
      'netmodule-mismatch',
      'authenticode-before-strong-name',
      'not-delay-signed',
      'public-signed',
      'already-signed',
      'wrong-key',
      'invalid-signature',
      'signature-slot-size',
      'missing-vendor-attribute',
      'vendor-attribute-false',
      'vendor-attribute-wrong-type',
      'vendor-attribute-look-alike',
      'unsigned-reference',
      'malformed',
      'not-managed',
      'vendor-assembly-included',
      'duplicate-name',
      'upload-too-large',
      'reserved-device-name',
      'nothing-to-sign',
      'option-not-licensed',
      'no-license',
      'refused-by-net-framework',
    ]);
    // loads-under-no-license fires on the delay-signed net48 build (load.test.ts); reserved-device-name on CON.dll
    // and aux/ (test/cli/input-identity.test.ts).
    covered.add('loads-under-no-license');
    expect(rules.map((r) => r.name).filter((n) => !covered.has(n))).toEqual([]);
  });
});

describe('severities from the configuration', () => {
  test('a rule can be turned off or demoted, by id or by name', async () => {
    const off = await checkPaths(['fixtures/addin'], {}, { severities: { SG501: 'off' } });
    expect(ruleNames(off)).toEqual([]);
    const demoted = await checkPaths(['fixtures/findings/missing-vendor-attribute'], {}, { severities: { 'missing-vendor-attribute': 'warning' } });
    expect(demoted.findings[0]!.severity).toBe('warning');
    expect(demoted.summary.errors).toBe(0);
  });
});
