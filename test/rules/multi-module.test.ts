// Assemblies of more than one module: netmodules belong to the assembly whose File table lists them.
import { describe, expect, test } from 'vitest';
import { checkPaths, ruleNames } from '../helpers/check.js';

const M = 'fixtures/modules';

describe('multi-module add-ins (fixtures/modules, built by build-module-fixtures.sh)', () => {
  test.each([
    ['passing', []],
    ['attribute-in-module', ['missing-vendor-attribute']],
    ['changed-module', ['netmodule-mismatch']],
  ])('%s -> %j', async (folder, expected) => {
    expect(ruleNames(await checkPaths([`${M}/${folder}`]))).toEqual(expected);
  });

  test('the netmodule is in the report as a module of its assembly, and in the upload set with it', async () => {
    const result = await checkPaths([`${M}/passing`]);
    const byPath = Object.fromEntries(result.files.map((f) => [f.path, f]));
    // The vendor API is used only in the netmodule; the manifest holds the attribute: the assembly is "direct".
    expect(byPath[`${M}/passing/ModuleAddin.dll`]).toMatchObject({
      role: 'direct',
      needsSigning: true,
      outcome: 'pass',
      upload: true,
      reason: 'uses the vendor API directly (Contoso.AddinBase from Contoso.AddinApi)',
    });
    expect(byPath[`${M}/passing/AddinCode.netmodule`]).toMatchObject({
      role: 'module',
      manifest: `${M}/passing/ModuleAddin.dll`,
      assemblyName: null,
      needsSigning: false,
      outcome: 'pass',
      upload: true,
      findings: [],
      reason: `a netmodule of ModuleAddin (listed in the File table of ${M}/passing/ModuleAddin.dll); uploaded with it, not signed itself`,
    });
    expect(result.uploadSet.files).toEqual([`${M}/passing/AddinCode.netmodule`, `${M}/passing/ModuleAddin.dll`]);
    expect(result.uploadSet.totalBytes).toBe(result.files.reduce((n, f) => n + f.size, 0));
    expect(result.summary).toMatchObject({ files: 2, needsSigning: 1, passed: 1, failed: 0, notRequired: 0, upload: 2 });
  });

  test('an assembly attribute only in the netmodule does not count, and the finding says why', async () => {
    const result = await checkPaths([`${M}/attribute-in-module`]);
    const [finding] = result.findings;
    expect(finding).toMatchObject({ ruleId: 'SG301', file: `${M}/attribute-in-module/ModuleAddin.dll` });
    expect(finding!.message).toBe(
      'no ContosoSignedAssemblyAttribute on the assembly: the attribute is declared in AddinCode.netmodule but not in the manifest; the runtime reads assembly attributes from the manifest module only',
    );
    // The assembly still needs signing (its netmodule uses the vendor API), and the netmodule fails with it.
    expect(result.files.map((f) => [f.path.split('/').pop(), f.role, f.outcome])).toEqual([
      ['AddinCode.netmodule', 'module', 'fail'],
      ['ModuleAddin.dll', 'direct', 'fail'],
    ]);
    expect(result.summary).toMatchObject({ needsSigning: 1, failed: 1, upload: 2 });
  });

  test('a netmodule changed after linking: the File-table hash names both digests', async () => {
    const finding = (await checkPaths([`${M}/changed-module`])).findings.find((f) => f.ruleId === 'SG207');
    expect(finding).toMatchObject({ ruleId: 'SG207', file: `${M}/changed-module/ModuleAddin.dll`, data: { cause: 'hash-mismatch', algorithm: 'sha1' } });
    expect(finding!.message).toMatch(
      /^fixtures\/modules\/changed-module\/AddinCode\.netmodule does not match the SHA1 hash File row 1 records for AddinCode\.netmodule \(recorded [0-9a-f]{40}, the file has [0-9a-f]{40}\)/,
    );
    expect(finding!.location!.fileOffset).toBeGreaterThan(0);
  });

  test('the assembly named without its netmodule: the netmodule is missing, and the use of the vendor API is not seen', async () => {
    const result = await checkPaths([`${M}/passing/ModuleAddin.dll`]);
    // The manifest alone references only the vendor attribute: it is "marked", and SG207 names the missing file.
    expect(result.files[0]).toMatchObject({ role: 'marked', upload: true });
    expect(ruleNames(result)).toEqual(['netmodule-mismatch']);
    expect(result.findings.find((f) => f.ruleId === 'SG207')).toMatchObject({ data: { cause: 'missing', netmodule: 'AddinCode.netmodule' } });
  });

  test('assembly and netmodule named explicitly: the netmodule is not "not-managed", it belongs to the assembly', async () => {
    const result = await checkPaths([`${M}/passing/ModuleAddin.dll`, `${M}/passing/AddinCode.netmodule`]);
    expect(ruleNames(result)).toEqual([]);
    expect(result.uploadSet.files).toHaveLength(2);
  });

  test('a netmodule whose assembly is not among the inputs is not required, with the reason', async () => {
    const result = await checkPaths([`${M}/passing/AddinCode.netmodule`, 'fixtures/findings/passing']);
    const module = result.files.find((f) => f.path.endsWith('.netmodule'))!;
    expect(module).toMatchObject({ role: 'not-required', upload: false });
    expect(module.reason).toBe(
      'not required: a netmodule (no assembly manifest), and no input assembly lists it in its File table; it belongs to the assembly that does',
    );
    // Named explicitly, it is also not-managed (SG002); the other add-in passes.
    expect(ruleNames(result)).toEqual(['not-managed']);
  });

  test('a folder with only a netmodule: not required, and nothing to sign (SG504), no not-managed', async () => {
    const result = await checkPaths(['fixtures/sdk/bin/wrong-turns/Netmodule']);
    expect(result.files.map((f) => [f.role, f.outcome])).toEqual([['not-required', 'not-required']]);
    expect(ruleNames(result)).toEqual(['nothing-to-sign']);
    expect(result.findings[0]!.message).toBe('nothing to sign: the one input file is not a .NET assembly (it is native code or a netmodule)');
  });

  test('al-linked fixtures/assemblies: part.netmodule is a module of al-delay, uploaded with it (al-delay carries the option key)', async () => {
    const result = await checkPaths(['fixtures/assemblies']);
    expect(result.files.find((f) => f.path === 'fixtures/assemblies/al-delay.dll')).toMatchObject({ role: 'option-key', upload: true });
    const part = result.files.find((f) => f.path === 'fixtures/assemblies/part.netmodule')!;
    expect(part).toMatchObject({ role: 'module', manifest: 'fixtures/assemblies/al-delay.dll', upload: true });
  });
});
