// SG301 names the vendor attribute as the vendor's API assembly declares it (namespace included), when that
// assembly is at hand: among the inputs, or named with --reference (as msbuild/Signgate.targets does from the
// build's references). Without it, the hint says the namespace is a guess and where to look. Built with Mono's mcs.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, has, runCli } from '../helpers/fixtures.js';

const hasMcs = has('mcs');
if (process.env.CI && !hasMcs) throw new Error('CI is set but mcs is not installed; .ci/run must apt-get install mono-devel');

const API = `namespace Acme.Starter {
  [System.AttributeUsage(System.AttributeTargets.Assembly)]
  public sealed class AcmeSignedAssemblyAttribute : System.Attribute { public AcmeSignedAssemblyAttribute(bool signed) { } }
}
namespace Acme.Addins { public abstract class AddinBase { public abstract string Name { get; } } }
`;
const ADDIN = `namespace Mine { public class Addin : Acme.Addins.AddinBase { public override string Name { get { return "mine"; } } } }
`;

describe.runIf(hasMcs || process.env.CI)('SG301 names the declared vendor attribute', () => {
  let dir: string;
  let api: string;
  let addin: string;
  const key = fixturePath('test-keys/12345_public.snk');
  const sg301 = (...args: string[]) => {
    const r = runCli(['check', ...args, '--vendor', 'Acme', '--key', key, '--format', 'json']);
    const report = JSON.parse(r.stdout) as { files: { findings: { ruleId: string; message: string; hint?: string }[] }[] };
    return report.files.flatMap((f) => f.findings).find((f) => f.ruleId === 'SG301');
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signgate-declared-'));
    mkdirSync(join(dir, 'vendor'));
    mkdirSync(join(dir, 'out'));
    writeFileSync(join(dir, 'Api.cs'), API);
    writeFileSync(join(dir, 'Addin.cs'), ADDIN);
    api = join(dir, 'vendor', 'Acme.AddinApi.dll');
    addin = join(dir, 'out', 'AcmeAddin.dll');
    execFileSync('mcs', ['-target:library', `-out:${api}`, `-keyfile:${fixturePath('test-keys/vendor_keypair.snk')}`, join(dir, 'Api.cs')]);
    copyFileSync(key, join(dir, '12345_public.snk'));
    execFileSync('mcs', ['-target:library', `-out:${addin}`, '-delaysign+', `-keyfile:${join(dir, '12345_public.snk')}`, `-r:${api}`, join(dir, 'Addin.cs')]);
  });

  test('with no vendor API assembly at hand: the namespace is called a guess, with where to look it up', () => {
    const f = sg301(addin);
    expect(f?.message).toBe('no AcmeSignedAssemblyAttribute on the assembly');
    expect(f?.hint).toContain('Acme is a guess');
    // Where to look is somewhere that lists declared types (inspect lists the attributes applied, not those declared).
    expect(f?.hint).toContain('with --reference <its .dll or folder>, and the check names the attribute as that assembly declares it');
    expect(f?.hint).not.toContain('signgate inspect');
  });

  test('with --reference (the file or its folder): the type as declared, with the using line', () => {
    for (const reference of [api, join(dir, 'vendor')]) {
      const f = sg301(addin, '--reference', reference);
      expect(f?.hint).toBe(
        'Add [assembly: Acme.Starter.AcmeSignedAssembly(true)] to the project (or using Acme.Starter; and [assembly: AcmeSignedAssembly(true)]): Acme.AddinApi declares Acme.Starter.AcmeSignedAssemblyAttribute.',
      );
    }
  });

  test('with the vendor API assembly among the inputs: the same', () => {
    expect(sg301(addin, api)?.hint).toContain('[assembly: Acme.Starter.AcmeSignedAssembly(true)]');
  });

  test('a reference that does not exist is a usage error naming it', () => {
    const r = runCli(['check', addin, '--vendor', 'Acme', '--key', key, '--reference', join(dir, 'missing.dll')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('missing.dll does not exist');
  });
});
