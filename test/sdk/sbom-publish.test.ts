// The SBOM of a real `dotnet publish`: an add-in with two NuGet packages of different licences (Dapper, Apache-2.0;
// Newtonsoft.Json, MIT) and a German satellite assembly, restored from the machine's feed into the NuGet package
// folder. Every component carries every field BSI TR-03183-2 v2.1 requires, validated with the CycloneDX library's
// strict validator; the packages' files are the packages' bytes.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, runCli } from '../helpers/fixtures.js';
import { expectEveryRequiredField, expectValidSbom } from '../helpers/sbom.js';
import { requireDotnet, resx, run, runDotnetTests } from './dotnet.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <Version>2.3.1</Version>
    <Deterministic>true</Deterministic>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Dapper" Version="2.1.86" />
    <PackageReference Include="Newtonsoft.Json" Version="13.0.3" />
  </ItemGroup>
</Project>
`;
const SOURCE = `namespace Addin
{
    public static class Entry
    {
        private static readonly System.Resources.ResourceManager Strings = new("Addin.Strings", typeof(Entry).Assembly);
        public static string Name() => Newtonsoft.Json.JsonConvert.SerializeObject(typeof(Dapper.SqlMapper).Name) + Strings.GetString("Hello");
    }
}
`;
const prop = (c: Json, name: string): string[] => ((c.properties ?? []) as Json[]).filter((p) => p.name === name).map((p) => p.value as string);

describe.runIf(runDotnetTests)('audit --sbom of a dotnet publish output', () => {
  test('two NuGet packages of different licences and a satellite assembly: every required field on every component', async () => {
    requireDotnet();
    const dir = mkdtempSync(join(tmpdir(), 'signgate-sbom-publish-'));
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'Addin.csproj'), PROJECT);
    writeFileSync(join(dir, 'src', 'Entry.cs'), SOURCE);
    writeFileSync(join(dir, 'src', 'Strings.resx'), resx('Hello'));
    writeFileSync(join(dir, 'src', 'Strings.de.resx'), resx('Hallo'));
    const published = await run('dotnet', ['publish', '-c', 'Release', '-o', join(dir, 'out'), '-nologo'], { cwd: join(dir, 'src') });
    expect(published.status, published.output).toBe(0);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['Addin.deps.json', 'Addin.dll', 'Addin.pdb', 'Dapper.dll', 'Newtonsoft.Json.dll', 'de']);
    const sbomFile = join(dir, 'addin.cdx.json');
    const r = runCli([
      'audit',
      join(dir, 'out'),
      '--vendor',
      'Contoso',
      '--key',
      fixturePath('test-keys/12345_public.snk'),
      '--format',
      'json',
      '-o',
      join(dir, 'audit.json'),
      '--sbom',
      sbomFile,
      '--sbom-creator-email',
      'release@contoso.example',
      '--sbom-license',
      'LicenseRef-Contoso-EULA',
      '--sbom-source-uri',
      'https://git.contoso.example/addin',
      '--sbom-download-uri',
      'https://downloads.contoso.example/addin-2.3.1.zip',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('6 components, 2 from NuGet packages, 0 findings');
    const bom = await expectValidSbom(readFileSync(sbomFile, 'utf8'));
    expectEveryRequiredField(bom);
    const by = (ref: string) => (bom.components as Json[]).find((c) => c['bom-ref'] === ref)!;
    expect(bom.metadata.component).toMatchObject({ name: 'Addin', version: '2.3.1.0' });
    for (const [ref, purl, licence] of [
      ['file:Dapper.dll', 'pkg:nuget/Dapper@2.1.86', 'Apache-2.0'],
      ['file:Newtonsoft.Json.dll', 'pkg:nuget/Newtonsoft.Json@13.0.3', 'MIT'],
    ] as const) {
      const c = by(ref);
      expect(c.purl).toBe(purl);
      expect(c.licenses).toEqual([{ license: { id: licence, acknowledgement: 'declared' } }, { license: { id: licence, acknowledgement: 'concluded' } }]);
      expect(prop(c, 'signgate:nuget:sameBytes')).toEqual(['true']);
      expect((c.externalReferences as Json[]).find((x) => x.type === 'distribution').hashes[0].alg).toBe('SHA-512');
    }
    const satellite = by('file:de/Addin.resources.dll');
    expect(prop(satellite, 'signgate:assembly:culture')).toEqual(['de']);
    const graph = new Map((bom.dependencies as Json[]).map((d) => [d.ref, d.dependsOn ?? []]));
    expect(graph.get('file:Addin.dll')).toEqual(['file:Dapper.dll', 'file:de/Addin.resources.dll', 'file:Newtonsoft.Json.dll']);
    expect(graph.get('file:de/Addin.resources.dll')).toEqual([]);
    expect(prop(by('file:Addin.pdb'), 'bsi:component:executable')).toEqual(['non-executable']);
  });
});
