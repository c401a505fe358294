// nothing-to-sign: a check that found nothing to sign fails and says why, through the runner with real fixtures.
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { checkExitCode } from '../../src/rules/rule-runner.js';
import { closest, distance as editDistance } from '../../src/core/words.js';
import { checkPaths, ruleNames } from '../helpers/check.js';
import { fixturePath } from '../helpers/fixtures.js';

const nothing = async (paths: string[], settings: Parameters<typeof checkPaths>[1] = {}) => {
  const result = await checkPaths(paths, settings);
  const found = result.findings.filter((f) => f.rule === 'nothing-to-sign');
  expect(found).toHaveLength(1);
  expect(found[0]).toMatchObject({ ruleId: 'SG504', severity: 'error', file: null });
  expect(checkExitCode(result)).toBe(1);
  return found[0]!;
};

describe('nothing-to-sign', () => {
  test('an empty folder', async () => {
    const f = await nothing([mkdtempSync(join(tmpdir(), 'signgate-empty-'))]);
    expect(f.message).toBe('nothing to sign: the inputs hold no .dll or .exe file');
    expect(f.data).toMatchObject({ cause: 'no-inputs' });
  });

  test('a folder with only a .txt file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-txt-'));
    writeFileSync(join(dir, 'readme.txt'), 'not an assembly\n');
    expect((await nothing([dir])).data).toMatchObject({ cause: 'no-inputs' });
  });

  test('only files that are not .NET assemblies: unreadable, native, netmodule', async () => {
    const f = await nothing(['fixtures/corrupt/zero-byte.dll', 'fixtures/variants/native.dll', 'fixtures/assemblies/part.netmodule']);
    expect(f.message).toBe('nothing to sign: none of the 3 input files is a .NET assembly signgate can read (1 refused (SG001), 2 native code or netmodules)');
    expect(f.data).toMatchObject({ cause: 'no-assemblies' });
  });

  test('--vendor Contosso on fixtures/addin names the near misses and suggests Contoso', async () => {
    const f = await nothing(['fixtures/addin'], { vendor: 'Contosso', vendorApi: ['Contosso.*'], vendorNamespace: 'Contosso' });
    expect(f.message).toBe(
      'nothing to sign: none of the 8 assemblies references a vendor API assembly (Contosso.*); close to the vendor name: Contoso.AddinApi, Contoso.Core',
    );
    expect(f.hint).toBe('Is the vendor name right? Did you mean --vendor Contoso?');
    expect(f.data).toMatchObject({ cause: 'no-vendor-reference', nearMisses: ['Contoso.AddinApi', 'Contoso.Core'], suggestedVendors: ['Contoso'] });
  });

  test('the right vendor name with API patterns that miss its assemblies: suggest a pattern', async () => {
    const f = await nothing(['fixtures/addin'], { vendorApi: ['Contoso.Kernel'] });
    expect(f.hint).toContain('--vendor-api "Contoso.*"');
  });

  test('a vendor name far from every reference: no guess', async () => {
    const f = await nothing(['fixtures/addin'], { vendor: 'Fabrikam', vendorApi: ['Fabrikam.*'], vendorNamespace: 'Fabrikam' });
    expect(f.data).toMatchObject({ nearMisses: [], suggestedVendors: [] });
    expect(f.hint).toContain('Check --vendor and --vendor-api');
  });

  test("only the vendor's own assemblies", async () => {
    const f = await nothing(['fixtures/vendor']);
    expect(f.message).toBe("nothing to sign: the only assemblies are the vendor's own (Contoso.AddinApi, Contoso.Core)");
  });

  test('silent when something needs signing, also when it is already signed with the organization key', async () => {
    expect(ruleNames(await checkPaths(['fixtures/addin']))).not.toContain('nothing-to-sign');
    const signed = await checkPaths(['fixtures/findings/already-signed']);
    expect(signed.uploadSet.files).toEqual([]);
    expect(ruleNames(signed)).toEqual(['already-signed']);
  });

  test('can be lowered or turned off like any rule', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-empty-'));
    const lowered = await checkPaths([dir], {}, { severities: { 'nothing-to-sign': 'warning' } });
    expect(lowered.findings).toMatchObject([{ rule: 'nothing-to-sign', severity: 'warning' }]);
    expect(checkExitCode(lowered)).toBe(0);
    expect((await checkPaths([dir], {}, { severities: { SG504: 'off' } })).findings).toEqual([]);
  });

  test('a copy of the add-in in a folder of its own is not "nothing"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-one-'));
    copyFileSync(fixturePath('findings/passing/FindingAddin.dll'), join(dir, 'FindingAddin.dll'));
    expect(ruleNames(await checkPaths([dir]))).toEqual([]);
  });

  test('edit distance and the nearest word', () => {
    expect([editDistance('contoso', 'contosso'), editDistance('contoso', 'Contoso'), editDistance('', 'abc'), editDistance('kitten', 'sitting')]).toEqual([
      1, 0, 3, 3,
    ]);
    expect([closest('chek', ['check', 'sign']), closest('zzz', ['check', 'sign'])]).toEqual(['check', undefined]);
  });
});
