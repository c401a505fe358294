// What docs/check.md says of XmlSerializers companions, against MSBuild itself: an SDK-style project that targets .NET
// Framework with <GenerateSerializationAssemblies>On</GenerateSerializationAssemblies> names its companion
// <Assembly>.XmlSerializers.dll, and MSBuild's SGen task gets the project's key file and DelaySign (so the companion is
// delay-signed like the add-in); `dotnet build` stops at that task with MSB3474 (only Visual Studio's msbuild.exe runs
// sgen.exe); and the check lists such a companion as needing signing. Needs the .NET SDK (fails in CI without it).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';
import { requireDotnet, run, runDotnetTests } from './dotnet.js';

const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net48</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>keys/12345_public.snk</AssemblyOriginatorKeyFile>
    <GenerateSerializationAssemblies>On</GenerateSerializationAssemblies>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" />
  </ItemGroup>
</Project>
`;

/** The passage of docs/check.md on XmlSerializers, one line. */
const passage = () => {
  const text = readFileSync(join(repoRoot, 'docs', 'check.md'), 'utf8').replace(/\s+/g, ' ');
  const start = text.indexOf('XmlSerializers from sgen');
  return text.slice(start, text.indexOf('COM interop assemblies', start));
};

describe.runIf(runDotnetTests)('XmlSerializers companions, as docs/check.md describes them', () => {
  let dir: string;
  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'signgate-xmlserializers-')), 'SerialAddin');
    mkdirSync(join(dir, 'keys'), { recursive: true });
    writeFileSync(join(dir, 'SerialAddin.csproj'), PROJECT);
    writeFileSync(join(dir, 'Settings.cs'), 'namespace SerialAddin { public class Settings { public string Name { get; set; } } }\n');
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, 'keys', '12345_public.snk'));
  });

  test('the doc names the property, the file, the key properties SGen takes, and where sgen runs', () => {
    const p = passage();
    expect(p).toContain('<GenerateSerializationAssemblies>On</GenerateSerializationAssemblies>');
    expect(p).toContain('`<Assembly>.XmlSerializers.dll`');
    expect(p).toContain('`AssemblyOriginatorKeyFile` and `DelaySign`');
    expect(p).toContain('MSB3474');
    expect(p).toContain('msbuild.exe');
  });

  test("MSBuild's own targets: the companion's name, and SGen given the project's key file and DelaySign", async () => {
    requireDotnet();
    const evaluated = await run(
      'dotnet',
      [
        'msbuild',
        'SerialAddin.csproj',
        '-nologo',
        '-p:Configuration=Release',
        '-t:ResolveKeySource',
        '-getProperty:_SGenDllName',
        '-getProperty:_SGenGenerateSerializationAssembliesConfig',
        '-getProperty:KeyOriginatorFile',
        '-getProperty:DelaySign',
      ],
      { cwd: dir },
    );
    expect(evaluated.status, evaluated.output).toBe(0);
    const { Properties: properties } = JSON.parse(evaluated.output.slice(evaluated.output.indexOf('{'))) as { Properties: Record<string, string> };
    expect(properties).toEqual({
      _SGenDllName: 'SerialAddin.XmlSerializers.dll',
      _SGenGenerateSerializationAssembliesConfig: 'On',
      KeyOriginatorFile: 'keys/12345_public.snk',
      DelaySign: 'true',
    });
    // The target that runs SGen, in the project as MSBuild reads it (every import inlined).
    const preprocessed = join(dir, '..', 'preprocessed.xml');
    const pp = await run('dotnet', ['msbuild', 'SerialAddin.csproj', '-nologo', '-p:Configuration=Release', `-pp:${preprocessed}`], { cwd: dir });
    expect(pp.status, pp.output).toBe(0);
    const xml = readFileSync(preprocessed, 'utf8');
    const target = /<Target\s+Name="GenerateSerializationAssemblies"[\s\S]*?<\/Target>/.exec(xml)?.[0] ?? '';
    expect(target).toMatch(/DependsOnTargets="[^"]*ResolveKeySource/);
    const sgen = /<SGen\b[^>]*>/.exec(target)?.[0] ?? '';
    expect(sgen).toContain('KeyFile="$(KeyOriginatorFile)"');
    expect(sgen).toContain('DelaySign="$(DelaySign)"');
    expect(sgen).toContain('SerializationAssembly="$(IntermediateOutputPath)$(_SGenDllName)"');
  });

  test('dotnet build stops at the SGen task with MSB3474', async () => {
    requireDotnet();
    const r = await run('dotnet', ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers'], { cwd: dir });
    expect(r.status).toBe(1);
    expect(r.output).toMatch(/error MSB3474: The task "SGen" is not supported on the \.NET Core version of MSBuild/);
  });

  test('the check lists such a companion as needing signing, with its add-in named', () => {
    const r = runCli([
      'check',
      fixturePath('addin/SampleAddin.dll'),
      fixturePath('addin/SampleAddin.XmlSerializers.dll'),
      '--vendor',
      'Contoso',
      '--key',
      fixturePath('test-keys/12345_public.snk'),
      '--format',
      'json',
    ]);
    const files = (JSON.parse(r.stdout) as { files: { path: string; needsSigning: boolean; reason: string }[] }).files;
    expect(files.find((f) => f.path.endsWith('SampleAddin.XmlSerializers.dll'))).toMatchObject({
      needsSigning: true,
      reason: 'XmlSerializers companion of SampleAddin',
    });
  });
});
