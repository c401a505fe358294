// SG205 in a real `dotnet build`, one message per way the assembly holds the wrong key, each with the whole fix for
// an SDK project (SignAssembly, DelaySign, AssemblyOriginatorKeyFile with the project's own path): the test writes
// the properties the finding proposes into the project, builds again, and the finding is gone. And a key pair where
// the option's public key file belongs (sn -k keys/12345_public.snk) fails a Debug build too, with the command that
// mends it, which the test runs. Needs the .NET SDK (fails in CI without it) and Mono's sn.
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, repoRoot, runMono } from '../helpers/fixtures.js';
import { addinSource, requireDotnet, run, runDotnetTests } from './dotnet.js';

const KEY_PROPERTIES = ['SignAssembly', 'DelaySign', 'AssemblyOriginatorKeyFile'] as const;
type KeyProperties = Record<(typeof KEY_PROPERTIES)[number], string>;

const project = (keys: KeyProperties) => `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
${KEY_PROPERTIES.map((p) => `    <${p}>${keys[p]}</${p}>`).join('\n')}
    <SigngateCheck>true</SigngateCheck>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>keys/12345_public.snk</SigngateKey>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

/** The SG205 lines of a build's output (the summary repeats each error once: the first of each). */
const sg205 = (output: string) => [
  ...new Set(
    output
      .split('\n')
      .filter((l) => / error SG205: /.test(l))
      .map((l) => l.trim()),
  ),
];

/** The properties a finding proposes, as it writes them. */
function proposed(line: string): KeyProperties {
  const found = Object.fromEntries([...line.matchAll(/<(SignAssembly|DelaySign|AssemblyOriginatorKeyFile)>([^<]*)<\/\1>/g)].map((m) => [m[1], m[2]]));
  expect(Object.keys(found).sort(), line).toEqual([...KEY_PROPERTIES].sort());
  return found as KeyProperties;
}

describe.runIf(runDotnetTests)('SG205 in dotnet build: each state says itself, and its proposed change mends it', () => {
  let dir: string;
  const build = (keys: KeyProperties) => {
    writeFileSync(join(dir, 'KeyAddin.csproj'), project(keys));
    return run('dotnet', ['build', '-c', 'Debug', '-nologo', '-tl:off', '--disable-build-servers'], { cwd: dir });
  };
  /** Builds with `keys`, expects one SG205 on the assembly matching `said`, applies its change and builds clean. */
  const mends = async (keys: KeyProperties, said: RegExp) => {
    const broken = await build(keys);
    expect(broken.status).toBe(1);
    const [line, ...more] = sg205(broken.output);
    expect(more, broken.output).toEqual([]);
    expect(line).toMatch(/obj\/Debug\/net8\.0\/KeyAddin\.dll : error SG205: /);
    expect(line).toMatch(said);
    expect(line).not.toMatch(/already signed|is delay-signed.*fully signed|fully signed.*is delay-signed/);
    const fix = proposed(line!);
    expect(fix).toEqual({ SignAssembly: 'true', DelaySign: 'true', AssemblyOriginatorKeyFile: 'keys/12345_public.snk' });
    const mended = await build(fix);
    expect(mended.status, mended.output.slice(-3000)).toBe(0);
    expect(sg205(mended.output)).toEqual([]);
  };

  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'signgate-msbuild-keys-')), 'KeyAddin');
    mkdirSync(join(dir, 'vendor'), { recursive: true });
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'Addin.cs'), addinSource('KeyAddin', 'keys'));
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, 'keys', '12345_public.snk'));
    copyFileSync(fixturePath('test-keys/67890_public.snk'), join(dir, 'keys', '67890_public.snk'));
    copyFileSync(fixturePath('test-keys/other_keypair.snk'), join(dir, 'keys', 'own.snk'));
  });

  test('delay-signed with another key', async () => {
    requireDotnet();
    await mends(
      { SignAssembly: 'true', DelaySign: 'true', AssemblyOriginatorKeyFile: 'keys/67890_public.snk' },
      /the assembly is delay-signed with another key: key token/,
    );
  });

  test('fully signed with a key pair of your own (DelaySign=false): the fix changes DelaySign too', async () => {
    requireDotnet();
    await mends(
      { SignAssembly: 'true', DelaySign: 'false', AssemblyOriginatorKeyFile: 'keys/own.snk' },
      /the assembly is fully signed \(not delay-signed\) with another key: key token .*DelaySign must change too/,
    );
  });

  test.runIf(hasMono || process.env.CI)(
    'a key pair at keys/12345_public.snk: an error on the key file in Debug, and, signed with it, on the assembly; the proposed command and properties mend both',
    async () => {
      requireDotnet();
      copyFileSync(fixturePath('test-keys/12345_keypair.snk'), join(dir, 'keys', '12345_public.snk'));
      // Delay-signed with the pair, as the docs say: the Debug build stops on the key file.
      const delay = await build({ SignAssembly: 'true', DelaySign: 'true', AssemblyOriginatorKeyFile: 'keys/12345_public.snk' });
      expect(delay.status).toBe(1);
      const [keyLine, ...others] = sg205(delay.output);
      expect(others, delay.output).toEqual([]);
      expect(keyLine).toMatch(/keys\/12345_public\.snk : error SG205: the key file keys\/12345_public\.snk holds a key pair/);
      // Fully signed with the pair: the assembly's finding says so (not "already signed"), beside the key file's.
      const full = await build({ SignAssembly: 'true', DelaySign: 'false', AssemblyOriginatorKeyFile: 'keys/12345_public.snk' });
      expect(full.status).toBe(1);
      expect(full.output).not.toContain('SG203');
      const assembly = sg205(full.output).find((l) => l.includes('KeyAddin.dll : error SG205'));
      expect(assembly).toMatch(/the assembly is fully signed with the key pair in keys\/12345_public\.snk .* the private key is in the build/);
      // The key file's command, as it says it: the pair moved out, its public key written in its place.
      const command = /`sn -p <the pair's new path> (\S+)`/.exec(keyLine!);
      expect(command?.[1]).toBe('keys/12345_public.snk');
      const away = join(dir, '..', '12345_keypair.snk');
      renameSync(join(dir, 'keys', '12345_public.snk'), away);
      expect(runMono('sn', ['-q', '-p', away, join(dir, command![1]!)]).status).toBe(0);
      const mended = await build(proposed(assembly!));
      expect(mended.status, mended.output.slice(-3000)).toBe(0);
      expect(sg205(mended.output)).toEqual([]);
    },
  );
});
