// SigngateShip's folder, by MSBuild alone (no compile, no restore): the output with the signed files over it, and not
// what the signing left beside them in signed/ (the service's signing-log.txt, or one per job, and from-service/).
// The whole build, signing included, is test/sdk/msbuild.test.ts (the SDK leg).
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
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
