// SigngateFixReferences in a real `dotnet build`: a strong-named (delay-signed) net48 add-in that references Dapper
// (a NuGet package without a strong name) and an in-house library without one (a plain Reference) builds with
// warnings as errors: the references are strong-named into obj/ before the compiler runs, the add-in's references
// carry their token, and the strong-named copies are what lands in bin/. Once with versions in the project, once
// with Central Package Management. The control: the same project without SigngateFixReferences fails on CS8002.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, verifyStrongName } from '../../src/strongname/strong-name.js';
import { publicKeyToken, referenceToken } from '../../src/strongname/key-token.js';
import { fixture, fixturePath, hasMono, repoRoot, runCli, runMono } from '../helpers/fixtures.js';
import { buildOnce, requireDotnet, run, runDotnetTests } from './dotnet.js';

const DAPPER_VERSION = '2.1.86';
const ownToken = publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk')).publicKey.blob);

function project(central: boolean, framework = 'net48'): string {
  return `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>${framework}</TargetFramework>
    <Deterministic>true</Deterministic>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
    <SigngateFixReferences Condition="'$(SigngateFixReferences)' == ''">true</SigngateFixReferences>
    <SigngateFixKey>own_keypair.snk</SigngateFixKey>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies"${central ? '' : ' Version="1.0.3"'} PrivateAssets="all" Condition="'$(TargetFramework)' == 'net48'" />
    <PackageReference Include="Dapper"${central ? '' : ` Version="${DAPPER_VERSION}"`} />
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
    <Reference Include="UnsignedLib" HintPath="lib/UnsignedLib.dll" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;
}

const CENTRAL = `<Project>
  <PropertyGroup>
    <ManagePackageVersionsCentrally>true</ManagePackageVersionsCentrally>
  </PropertyGroup>
  <ItemGroup>
    <PackageVersion Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" />
    <PackageVersion Include="Dapper" Version="${DAPPER_VERSION}" />
  </ItemGroup>
</Project>
`;

const SOURCE = `[assembly: Contoso.ContosoSignedAssembly(true)]
namespace FixedAddin
{
    public class Addin : Contoso.AddinBase
    {
        public override string Name => UnsignedLib.Names.Of(typeof(Dapper.SqlMapper).Name);
    }
}
`;

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

describe.runIf(runDotnetTests)('SigngateFixReferences in dotnet build', () => {
  const root = mkdtempSync(join(tmpdir(), 'signgate-msbuild-fix-'));
  const packageDapper = join(homedir(), '.nuget', 'packages', 'dapper', DAPPER_VERSION, 'lib', 'net461', 'Dapper.dll');

  /** A project folder: the add-in source, its keys, the vendor API and the unsigned in-house library. */
  function makeProject(name: string, central: boolean, framework?: string): string {
    const dir = join(root, name);
    mkdirSync(join(dir, 'vendor'), { recursive: true });
    mkdirSync(join(dir, 'lib'), { recursive: true });
    writeFileSync(join(dir, `${name}.csproj`), project(central, framework));
    if (central) writeFileSync(join(dir, 'Directory.Packages.props'), CENTRAL);
    writeFileSync(join(dir, 'Addin.cs'), SOURCE);
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll'), join(dir, 'lib', 'UnsignedLib.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
    copyFileSync(fixturePath('test-keys/other_keypair.snk'), join(dir, 'own_keypair.snk'));
    return dir;
  }
  const build = (dir: string, ...props: string[]) =>
    run('dotnet', ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', ...props], { cwd: dir });

  /** Checks a built output: fixed copies in bin/, the add-in's references with their token, the package untouched. */
  function expectFixedOutput(dir: string, name: string, framework = 'net48'): void {
    const bin = join(dir, 'bin', 'Release', framework);
    for (const dependency of ['Dapper.dll', 'UnsignedLib.dll']) {
      const module = readModule(readFileSync(join(bin, dependency)));
      const check = verifyStrongName(module);
      expect(check.valid, `${dependency}: ${check.reason}`).toBe(true);
      expect(check.status.publicKeyToken).toBe(ownToken);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', join(bin, dependency)]).status, dependency).toBe(0);
    }
    const addin = readModule(readFileSync(join(bin, `${name}.dll`)));
    expect(classifyStrongName(addin).state).toBe('delay-signed');
    const tokens = Object.fromEntries(addin.assemblyReferences.map((r) => [r.name, referenceToken(r.publicKeyOrToken, r.flags)]));
    expect(tokens.Dapper).toBe(ownToken);
    expect(tokens.UnsignedLib).toBe(ownToken);
    // The package in the NuGet cache and the project's lib/ keep their bytes: only copies were strong-named.
    if (framework === 'net48') expect(classifyStrongName(readModule(readFileSync(packageDapper))).state).toBe('unsigned');
    expect(classifyStrongName(readModule(readFileSync(join(dir, 'lib', 'UnsignedLib.dll')))).state).toBe('unsigned');
    // And the pre-flight check no longer reports SG401 for the add-in.
    const checked = runCli(['check', bin, '--key', join(dir, '12345_public.snk'), '--vendor', 'Contoso']);
    expect(checked.stdout).not.toContain('SG401');
    expect(checked.status, checked.stdout).toBe(0);
  }

  test('PackageReference and a plain Reference: the build passes with warnings as errors; the control fails on CS8002', async () => {
    requireDotnet();
    const dir = makeProject('FixedAddin', false);
    const control = await build(dir, '-p:SigngateFixReferences=false');
    expect(control.status, control.output).not.toBe(0);
    expect(control.output).toMatch(
      /error CS8002: Referenced assembly 'Dapper, Version=[\d.]+, Culture=neutral, PublicKeyToken=null' does not have a strong name/,
    );
    rmSync(join(dir, 'obj'), { recursive: true, force: true });
    const ok = await build(dir);
    expect(
      ok.status,
      ok.output
        .split('\n')
        .filter((l) => /error|warn|signgate/i.test(l))
        .join('\n'),
    ).toBe(0);
    expect(ok.output).toContain('signgate fix:');
    expectFixedOutput(dir, 'FixedAddin');

    // Deterministic and incremental: a second build does not run fix again; a clean build writes the same bytes.
    const first = sha(readFileSync(join(dir, 'bin', 'Release', 'net48', 'Dapper.dll')));
    const again = await build(dir);
    expect(again.status).toBe(0);
    expect(again.output).not.toContain('signgate fix:');
    rmSync(join(dir, 'obj'), { recursive: true, force: true });
    rmSync(join(dir, 'bin'), { recursive: true, force: true });
    const clean = await build(dir);
    expect(clean.status).toBe(0);
    expect(sha(readFileSync(join(dir, 'bin', 'Release', 'net48', 'Dapper.dll')))).toBe(first);
  });

  test('Central Package Management: the same result', async () => {
    requireDotnet();
    const dir = makeProject('CentralAddin', true);
    const ok = await build(dir);
    expect(
      ok.status,
      ok.output
        .split('\n')
        .filter((l) => /error|warn|signgate/i.test(l))
        .join('\n'),
    ).toBe(0);
    expectFixedOutput(dir, 'CentralAddin');
    expect(existsSync(join(dir, 'obj', 'Release', 'net48', 'signgate-fixed', 'Dapper.dll'))).toBe(true);
  });

  test('a net8.0 add-in with no copy-local property: the strong-named copies reach bin/, deps.json finds them there, and a plug-in host loads it with them', async () => {
    requireDotnet();
    const dir = makeProject('CoreAddin', false, 'net8.0');
    const ok = await build(dir);
    expect(
      ok.status,
      ok.output
        .split('\n')
        .filter((l) => /error|warn|signgate/i.test(l))
        .join('\n'),
    ).toBe(0);
    expectFixedOutput(dir, 'CoreAddin', 'net8.0');
    // deps.json names Dapper's runtime file by its package path; the runtime looks beside the add-in first, where
    // the strong-named copy is (a library's deps.json never points into the NuGet cache by a full path).
    const deps = JSON.parse(readFileSync(join(dir, 'bin', 'Release', 'net8.0', 'CoreAddin.deps.json'), 'utf8')) as {
      targets: Record<string, Record<string, { runtime?: Record<string, unknown> }>>;
    };
    const runtimeFiles = Object.entries(Object.values(deps.targets)[0]!)
      .filter(([library]) => library.startsWith('Dapper/'))
      .flatMap(([, entry]) => Object.keys(entry.runtime ?? {}));
    expect(runtimeFiles).toHaveLength(1);
    expect(runtimeFiles[0]).toMatch(/^lib\/[^/]+\/Dapper\.dll$/);
    // The package in the NuGet cache keeps its bytes: only the copy was strong-named.
    const original = join(homedir(), '.nuget', 'packages', 'dapper', DAPPER_VERSION, runtimeFiles[0]!);
    expect(classifyStrongName(readModule(readFileSync(original))).state).toBe('unsigned');

    // Loaded as a .NET host loads a plug-in (tools/fix-host --plugin: the add-in's deps.json through
    // AssemblyDependencyResolver, the vendor's API shared by the host, every reference bound by its full name),
    // the add-in runs against the strong-named copies in bin/.
    const hostBuild = await buildOnce(join(repoRoot, 'tools', 'fix-host'));
    expect(hostBuild.status, hostBuild.output).toBe(0);
    const bin = join(dir, 'bin', 'Release', 'net8.0');
    const host = (folder: string) =>
      spawnSync(
        'dotnet',
        [
          join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'),
          '--plugin',
          join(folder, 'CoreAddin.dll'),
          'FixedAddin.Addin',
          'Name',
          join(dir, 'vendor'),
        ],
        { encoding: 'utf8' },
      );
    const loaded = host(bin);
    expect(loaded.status, loaded.stderr).toBe(0);
    const dapper = loaded.stdout.split('\n').find((line) => line.startsWith('bound Dapper, '));
    expect(dapper, loaded.stdout).toMatch(new RegExp(`PublicKeyToken=${ownToken} from `));
    expect(dapper?.endsWith(` from ${join(bin, 'Dapper.dll')}`), dapper).toBe(true);
    expect(loaded.stdout).toContain(`bound UnsignedLib, Version=`);
    expect(loaded.stdout).toContain('Name = ');
    // The control: with the package's unsigned Dapper.dll in bin/ instead, the reference no longer binds.
    const control = join(root, 'CoreAddinControl');
    cpSync(bin, control, { recursive: true });
    copyFileSync(original, join(control, 'Dapper.dll'));
    const refused = host(control);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /Dapper, Version=[\d.]+, Culture=neutral, PublicKeyToken=[0-9a-f]{16} was asked for, .*Dapper\.dll is Dapper, Version=[\d.]+, Culture=neutral, PublicKeyToken=null/,
    );
  });

  test('without SigngateFixKey the build stops with SGB006 and says what to set', async () => {
    requireDotnet();
    const dir = makeProject('NoKeyAddin', false);
    const r = await build(dir, '-p:SigngateFixKey=');
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('error SGB006: signgate: SigngateFixReferences is true but SigngateFixKey is not set');
  });
});
