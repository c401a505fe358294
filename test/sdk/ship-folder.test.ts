// SigngateShip's folder, by MSBuild alone (no compile, no restore): the output with the signed files over it, and not
// what the signing left beside them in signed/ (the service's signing-log.txt, or one per job, and from-service/).
// The whole build, signing included, is test/sdk/msbuild.test.ts (the SDK leg).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';
import { expectValidSbom } from '../helpers/sbom.js';
import { requireDotnet, run, runDotnetTests } from './dotnet.js';

const PROJECT = `<Project>
  <PropertyGroup>
    <Configuration>Release</Configuration>
    <TargetFramework>net8.0</TargetFramework>
    <OutDir>out/</OutDir>
    <BaseOutputPath>bin/</BaseOutputPath>
    <IntermediateOutputPath>obj/</IntermediateOutputPath>
    <SigngateSign>true</SigngateSign>
    <SigngateShip>true</SigngateShip>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
  </PropertyGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

/** A project folder whose output holds a signed file and a deps.json, signed/ beside it as SigngateSign leaves it. */
function shipProject(project = PROJECT): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-ship-'));
  const signed = join(dir, 'out', 'signed');
  mkdirSync(join(signed, 'from-service'), { recursive: true });
  cpSync(fixturePath('addin/ThirdParty.Json.dll'), join(dir, 'out', 'ThirdParty.Json.dll'));
  cpSync(fixturePath('addin/ThirdParty.Json.dll'), join(signed, 'ThirdParty.Json.dll'));
  writeFileSync(join(signed, 'signing-log.txt'), 'the service log of the job\n');
  writeFileSync(join(signed, 'signing-log-2.txt'), 'the log of a second job\n');
  writeFileSync(join(signed, 'from-service', 'Extra.txt'), 'not uploaded\n');
  writeFileSync(join(dir, 'out', 'MyAddin.deps.json'), '{}\n');
  cpSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
  writeFileSync(join(dir, 'ship.proj'), project);
  return dir;
}

describe.skipIf(!runDotnetTests)('SigngateShip', () => {
  test('ships the output with the signed files over it, without the service log or from-service/', async () => {
    requireDotnet();
    const dir = shipProject();
    const signed = join(dir, 'out', 'signed');
    const r = await run('dotnet', ['msbuild', 'ship.proj', '-t:SigngateShipFolder', '-nologo', '-v:m'], { cwd: dir });
    expect(r.status, r.output).toBe(0);
    const ship = join(dir, 'bin', 'ship', 'Release', 'net8.0');
    expect(readdirSync(ship).sort()).toEqual(['MyAddin.deps.json', 'ThirdParty.Json.dll']);
    expect(existsSync(join(signed, 'signing-log.txt'))).toBe(true);
  });

  test('a signed copy left from an earlier build (a dropped satellite, a renamed assembly) is not shipped, and named; an extra file put in by hand fails the audit', async () => {
    requireDotnet();
    const dir = mkdtempSync(join(tmpdir(), 'signgate-ship-stale-'));
    const out = join(dir, 'out');
    const signed = join(out, 'signed');
    // This build: the add-in and its German satellite. The signed/ of the last release also holds its French satellite
    // (dropped since) and the add-in's old name (renamed since).
    mkdirSync(join(signed, 'de'), { recursive: true });
    mkdirSync(join(signed, 'fr'), { recursive: true });
    mkdirSync(join(out, 'de'), { recursive: true });
    for (const target of [out, signed]) {
      cpSync(fixturePath('addin/SampleAddin.dll'), join(target, 'SampleAddin.dll'));
      cpSync(fixturePath('addin/de/SampleAddin.resources.dll'), join(target, 'de', 'SampleAddin.resources.dll'));
    }
    cpSync(fixturePath('addin/de/SampleAddin.resources.dll'), join(signed, 'fr', 'SampleAddin.resources.dll'));
    cpSync(fixturePath('addin/SampleAddin.Helpers.dll'), join(signed, 'OldName.dll'));
    cpSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
    writeFileSync(join(dir, 'ship.proj'), PROJECT);
    const r = await run('dotnet', ['msbuild', 'ship.proj', '-t:SigngateShipFolder', '-nologo', '-v:m'], { cwd: dir });
    const ship = join(dir, 'bin', 'ship', 'Release', 'net8.0');
    const shipped = (folder: string): string[] =>
      readdirSync(folder, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? shipped(join(folder, e.name)).map((n) => `${e.name}/${n}`) : [e.name]));
    // 0 stale files in the ship folder: exactly this build's files.
    expect(shipped(ship).sort(), r.output).toEqual(['SampleAddin.dll', 'de/SampleAddin.resources.dll']);
    expect(r.output).toContain(`${join(signed, 'fr', 'SampleAddin.resources.dll')} is a signed copy from an earlier build`);
    expect(r.output).toContain(`${join(signed, 'OldName.dll')} is a signed copy from an earlier build`);
    // The build's list of what the ship folder must hold, which its audit compares the folder with.
    const manifest = join(dir, 'obj', 'signgate-ship-manifest.txt');
    expect(readFileSync(manifest, 'utf8').split(/\r?\n/).filter(Boolean).sort()).toEqual(['SampleAddin.dll', 'de/SampleAddin.resources.dll']);
    // A file put into the ship folder by hand: the ship audit exits 1 with SG703 naming it; one taken out: SG702.
    cpSync(fixturePath('addin/de/SampleAddin.resources.dll'), join(ship, 'fr', 'SampleAddin.resources.dll'), { recursive: true });
    const audit = (...extra: string[]) =>
      runCli(['audit', ship, '--key', join(dir, '12345_public.snk'), '--vendor', 'Contoso', '--manifest', manifest, '--format', 'json', ...extra], {
        cwd: dir,
      });
    const extra = audit();
    expect(extra.status).toBe(1);
    expect((JSON.parse(extra.stdout) as { manifest: { extra: string[] } }).manifest.extra).toEqual([
      join(ship, 'fr', 'SampleAddin.resources.dll').replace(`${dir}/`, ''),
    ]);
  });
});

describe.skipIf(!runDotnetTests)('SigngateSbom', () => {
  test("writes the ship folder's CycloneDX SBOM beside its audit, with the creator from the MSBuild properties", async () => {
    requireDotnet();
    const dir = shipProject(
      PROJECT.replace(
        '<SigngateShip>true</SigngateShip>',
        '<SigngateShip>true</SigngateShip>\n    <SigngateSbom>true</SigngateSbom>\n    <SigngateSbomCreatorUrl>https://contoso.example</SigngateSbomCreatorUrl>',
      ),
    );
    const r = await run('dotnet', ['msbuild', 'ship.proj', '-t:SigngateShipFolder', '-nologo', '-v:m'], { cwd: dir });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain(`signgate: its SBOM: ${join(dir, 'obj', 'ship.cdx.json')}`);
    const bom = await expectValidSbom(readFileSync(join(dir, 'obj', 'ship.cdx.json'), 'utf8'));
    expect(bom.metadata.manufacturer).toEqual({ name: 'Contoso', url: ['https://contoso.example'] });
    expect(bom.components.map((c: { 'bom-ref': string }) => c['bom-ref']).sort()).toEqual(['file:MyAddin.deps.json', 'file:ThirdParty.Json.dll']);
  });

  test('without a creator the build fails with SGB011, and signgate names the properties it takes', async () => {
    requireDotnet();
    const dir = shipProject(PROJECT.replace('<SigngateShip>true</SigngateShip>', '<SigngateShip>true</SigngateShip>\n    <SigngateSbom>true</SigngateSbom>'));
    const r = await run('dotnet', ['msbuild', 'ship.proj', '-t:SigngateShipFolder', '-nologo', '-v:m'], { cwd: dir });
    expect(r.status).not.toBe(0);
    expect(r.output).toContain('SGB011');
    expect(r.output).toContain('the SBOM needs its creator: --sbom-creator-url or --sbom-creator-email');
  });
});
