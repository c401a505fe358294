// SG401 when the library without a strong name is not in the build output (a .NET class library copies no NuGet
// package to bin/): check says the file is not there, where the build resolved it from (the folder's deps.json, the
// NuGet cache) and the build-time cure; fix refuses to pass over it. Each command either of them prints leads to a
// cure or to a different message, never back to the same finding.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, runCli } from '../helpers/fixtures.js';

const OPTION_KEY = fixturePath('test-keys/12345_public.snk');
const OWN_KEY = fixturePath('test-keys/other_keypair.snk');
const ADDIN = 'WrongTurn.UnsignedReference';
const root = mkdtempSync(join(tmpdir(), 'signgate-missing-dependency-'));

/** The SG401 fixture's add-in without UnsignedLib.dll beside it; with `deps`, a deps.json that names it as a package. */
function buildOutput(name: string, deps: boolean): string {
  const folder = join(root, name, 'bin');
  cpSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference'), folder, { recursive: true });
  rmSync(join(folder, 'UnsignedLib.dll'));
  if (deps) {
    const target = {
      [`${ADDIN}/1.0.0`]: { dependencies: { UnsignedLib: '1.4.2' }, runtime: { [`${ADDIN}.dll`]: {} } },
      'UnsignedLib/1.4.2': { runtime: { 'lib/net8.0/UnsignedLib.dll': { assemblyVersion: '1.4.2.0', fileVersion: '1.4.2.0' } } },
    };
    const libraries = {
      [`${ADDIN}/1.0.0`]: { type: 'project', serviceable: false, sha512: '' },
      'UnsignedLib/1.4.2': { type: 'package', serviceable: true, sha512: 'sha512-0', path: 'unsignedlib/1.4.2', hashPath: 'unsignedlib.1.4.2.nupkg.sha512' },
    };
    const json = { runtimeTarget: { name: '.NETCoreApp,Version=v8.0', signature: '' }, targets: { '.NETCoreApp,Version=v8.0': target }, libraries };
    writeFileSync(join(folder, `${ADDIN}.deps.json`), JSON.stringify(json, null, 2));
  }
  return folder;
}

/** A NuGet package folder that holds UnsignedLib 1.4.2 as the deps.json names it. */
function packageCache(name: string): string {
  const cache = join(root, name, 'packages');
  mkdirSync(join(cache, 'unsignedlib', '1.4.2', 'lib', 'net8.0'), { recursive: true });
  copyFileSync(fixturePath('sdk/bin/unsigned-lib/net8.0/UnsignedLib.dll'), join(cache, 'unsignedlib', '1.4.2', 'lib', 'net8.0', 'UnsignedLib.dll'));
  return cache;
}

const check = (cwd: string, env: Record<string, string> = {}) => runCli(['check', 'bin', '--key', OPTION_KEY, '--vendor', 'Contoso'], { cwd, env });
const sg401 = (stdout: string) => {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.includes('SG401 unsigned-reference '));
  return at < 0 ? undefined : { message: lines[at]!, hint: lines[at + 1]! };
};
/** The `signgate fix …` command a hint prints, with the user's key pair in place of your-key.snk. */
const fixCommand = (hint: string) => /signgate (fix \S+ --key your-key\.snk --in-place)/.exec(hint)![1]!.replace('your-key.snk', OWN_KEY).split(' ');

describe('the library is not in the folder', () => {
  test('without a deps.json: check says so and names the project assets and the build-time cure; the fix it prints says what is missing', () => {
    const cwd = join(root, 'plain');
    buildOutput('plain', false);
    const before = check(cwd);
    expect(before.status).toBe(1);
    const finding = sg401(before.stdout)!;
    expect(finding.message).toContain('references UnsignedLib, Version=1.4.2.0, which has no public key token, and UnsignedLib.dll is not in bin');
    expect(finding.message).toContain("the project's assets (obj/project.assets.json in an SDK project) say where the build found it");
    expect(finding.hint).toContain('Get UnsignedLib.dll into bin');
    expect(finding.hint).toContain('<CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies>');
    expect(finding.hint).toContain('<SigngateFixReferences>true</SigngateFixReferences>');
    // Following the command it prints does not lead back to the same finding: fix names what is missing, exit 1.
    const fixed = runCli(fixCommand(finding.hint), { cwd });
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(1);
    expect(fixed.stdout).toContain(
      `error SG_ERR_FIX_REFERENCE_MISSING: bin/${ADDIN}.dll references UnsignedLib, Version=1.4.2.0, which has no strong name, ` +
        'and UnsignedLib.dll is not among the inputs (nor in bin)',
    );
    expect(fixed.stdout).toContain('<CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies>');
    expect(fixed.stdout).toMatch(/0 files written, 1 unchanged, 0 skipped, 1 missing reference left without a token/);
    const json = JSON.parse(runCli([...fixCommand(finding.hint), '--json'], { cwd }).stdout);
    const missing = { name: 'UnsignedLib', version: '1.4.2.0', referencedBy: [`bin/${ADDIN}.dll`], code: 'SG_ERR_FIX_REFERENCE_MISSING' };
    expect(json.missing).toEqual([expect.objectContaining(missing)]);
  });

  test('with a deps.json: check names the package, and the NuGet cache file when it is there; copying it and running the printed fix cures it', () => {
    const cwd = join(root, 'deps');
    const folder = buildOutput('deps', true);
    const away = check(cwd, { NUGET_PACKAGES: join(root, 'no-packages') });
    const named = `the build resolved it from the NuGet package UnsignedLib 1.4.2 (lib/net8.0/UnsignedLib.dll), as ${ADDIN}.deps.json says`;
    expect(sg401(away.stdout)!.message).toContain(named);
    expect(sg401(away.stdout)!.hint).toContain('(a .NET class library copies no NuGet package to its output)');

    const cache = packageCache('deps');
    const cached = join(cache, 'unsignedlib', '1.4.2', 'lib', 'net8.0', 'UnsignedLib.dll');
    const before = check(cwd, { NUGET_PACKAGES: cache });
    const finding = sg401(before.stdout)!;
    expect(finding.message).toContain(`the build resolved it from ${cached} (the NuGet package UnsignedLib 1.4.2, as ${ADDIN}.deps.json says)`);
    expect(finding.hint).toContain(`or copy ${cached} there; then signgate fix bin --key your-key.snk --in-place`);
    const missing = runCli(fixCommand(finding.hint), { cwd, env: { NUGET_PACKAGES: cache } });
    expect(missing.status).toBe(1);
    expect(missing.stdout).toContain(`the build resolved it from ${cached}`);
    // The copy the hint names, then the command it names: cured.
    copyFileSync(cached, join(folder, 'UnsignedLib.dll'));
    const fixed = runCli(fixCommand(finding.hint), { cwd, env: { NUGET_PACKAGES: cache } });
    expect(fixed.status, fixed.stdout).toBe(0);
    expect(fixed.stdout).toContain('bin/UnsignedLib.dll: strong-named');
    const after = check(cwd, { NUGET_PACKAGES: cache });
    expect(after.status, after.stdout).toBe(0);
    expect(after.stdout).not.toContain('SG401');
  });

  test('fix given the add-in alone, its library beside it: names the folder to give instead', () => {
    const cwd = join(root, 'alone');
    const folder = buildOutput('alone', false);
    copyFileSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll'), join(folder, 'UnsignedLib.dll'));
    const r = runCli(['fix', `bin/${ADDIN}.dll`, '--key', OWN_KEY, '--dry-run'], { cwd });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('and it is not among the inputs, though bin holds a UnsignedLib file: give fix the folder bin, or that file too');
  });
});
