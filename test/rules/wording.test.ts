// Fix hints speak of what the user configured and the vendor's own spelling; messages are whole sentences.
import { describe, expect, test } from 'vitest';
import { keyFileElement, keyFileName } from '../../src/rules/key-match.js';
import { checkPaths, expectedKey } from '../helpers/check.js';

const hintOf = async (folder: string, rule: string, settings: Parameters<typeof checkPaths>[1] = {}) =>
  (await checkPaths([folder], settings)).findings.find((f) => f.rule === rule)!;

describe('key file names in hints', () => {
  const key = expectedKey('test-keys/12345_public.snk');

  test('the name the user gave wins, then the source path, then <optionId>_public.snk', () => {
    expect(keyFileName({ ...key, fileName: 'keys/Option12345.snk' })).toBe('keys/Option12345.snk');
    expect(keyFileName({ ...key, source: 'build/keys/mykey.snk' })).toBe('mykey.snk');
    expect(keyFileName({ ...key, source: 'option 67890', optionId: 67890 })).toBe('67890_public.snk');
    expect(keyFileName({ ...key, source: 'option ?', optionId: null })).toBe('<optionId>_public.snk');
    expect(keyFileElement([key, { ...key, source: 'k/67890_public.snk' }])).toBe(
      '<AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile> (or 67890_public.snk for another license option)',
    );
  });

  test.each([
    ['fixtures/findings/not-delay-signed', 'not-delay-signed'],
    ['fixtures/findings/wrong-key', 'wrong-key'],
  ])('%s: %s names the configured key file, not 12345_public.snk', async (folder, rule) => {
    const custom = { ...expectedKey('test-keys/12345_public.snk'), source: 'keys/contoso-option.snk' };
    const finding = await hintOf(folder, rule, { keys: [custom] });
    expect(finding.hint).toContain('<AssemblyOriginatorKeyFile>contoso-option.snk</AssemblyOriginatorKeyFile>');
    expect(finding.hint).not.toContain('12345');
  });
});

describe('the vendor name as the vendor spells it', () => {
  test('--vendor contoso: the correctly marked add-in passes (the attribute is matched ignoring case)', async () => {
    const result = await checkPaths(['fixtures/addin'], { vendor: 'contoso', vendorApi: ['contoso.*'], vendorNamespace: 'contoso' });
    expect(result.findings.filter((f) => f.severity !== 'note').map((f) => f.rule)).toEqual(['vendor-assembly-included']);
  });

  test('--vendor contoso: missing-vendor-attribute suggests Contoso.ContosoSignedAssembly', async () => {
    const finding = await hintOf('fixtures/findings/missing-vendor-attribute', 'missing-vendor-attribute', {
      vendor: 'contoso',
      vendorApi: ['contoso.*'],
      vendorNamespace: 'contoso',
    });
    expect(finding.message).toBe('no ContosoSignedAssemblyAttribute on the assembly');
    expect(finding.hint).toMatch(
      /^Add \[assembly: Contoso\.ContosoSignedAssembly\(true\)\] to the project, with the namespace the vendor declares the attribute in \(Contoso is a guess/,
    );
  });

  test('a local look-alike is still reported, and the message is a whole sentence', async () => {
    const finding = await hintOf('fixtures/findings/vendor-attribute-look-alike', 'vendor-attribute-look-alike', {
      vendor: 'contoso',
      vendorApi: ['contoso.*'],
      vendorNamespace: 'contoso',
    });
    expect(finding.message).toBe('Contoso.ContosoSignedAssemblyAttribute is declared in this assembly, not referenced from a vendor API assembly (contoso.*)');
  });
});
