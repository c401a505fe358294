// The ship folder holds exactly this build, in real `dotnet build`s signed through the reference service on loopback:
// release 1.2.0 has a French satellite and a French readme, 1.2.1 drops both; 1.3.0 renames the add-in; a signing step that fails
// halfway (the service signs the satellite and refuses the add-in). The ship audit compares every file of the folder
// with the build's list, a readme as well as an assembly. The MSBuild-only cases (a renamed assembly, a
// file put into the ship folder by hand) are test/sdk/ship-folder.test.ts. Needs the .NET SDK (fails in CI without it).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addinSource, requireDotnet, resx, run, runDotnetTests } from './dotnet.js';

const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <DefineConstants Condition="'$(Broken)' == 'true'">$(DefineConstants);BROKEN</DefineConstants>
    <SigngateSign>true</SigngateSign>
    <SigngateShip>true</SigngateShip>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
    <None Update="*.txt" CopyToOutputDirectory="PreserveNewest" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

/** The files of a folder, as relative paths with `/`, sorted. */
const filesOf = (folder: string): string[] =>
  readdirSync(folder, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesOf(join(folder, e.name)).map((n) => `${e.name}/${n}`) : [e.name]))
    .sort();

describe.runIf(runDotnetTests)('the ship folder across releases', () => {
  let server: TestServer;
  let dir: string;
  const out = () => join(dir, 'bin', 'Release', 'net8.0');
  const ship = () => join(dir, 'bin', 'ship', 'Release', 'net8.0');
  const build = (version: string, ...props: string[]) =>
    run(
      'dotnet',
      ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', `-p:Version=${version}`, `-p:SigngateBaseUrl=${server.baseUrl}`, ...props],
      {
        cwd: dir,
        env: { SIGNGATE_CACHE_DIR: join(dir, '..', 'cache'), SIGNGATE_ACCESS_TOKEN: server.token() },
      },
    );
  /** The ship audit by hand, as a release auditor runs it: the folder against the build's list of its assemblies. */
  const audit = () =>
    runCli(
      [
        'audit',
        ship(),
        '--key',
        join(dir, '12345_public.snk'),
        '--vendor',
        'Contoso',
        '--manifest',
        join(dir, 'obj', 'Release', 'net8.0', 'signgate-ship-manifest.txt'),
        '--format',
        'json',
      ],
      { cwd: dir },
    );

  beforeAll(async () => {
    if (!runDotnetTests) return;
    server = await startServer();
    dir = join(mkdtempSync(join(tmpdir(), 'signgate-ship-release-')), 'ShipAddin');
    mkdirSync(join(dir, 'vendor'), { recursive: true });
    writeFileSync(join(dir, 'ShipAddin.csproj'), PROJECT);
    writeFileSync(join(dir, 'Addin.cs'), addinSource('ShipAddin', 'ship'));
    writeFileSync(join(dir, 'Strings.resx'), resx('Hello'));
    writeFileSync(join(dir, 'Strings.fr.resx'), resx('Bonjour'));
    writeFileSync(join(dir, 'readme.txt'), 'the add-in\n');
    writeFileSync(join(dir, 'readme.fr.txt'), "l'add-in\n");
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
  });
  afterAll(() => server?.close());

  test('1.2.0 ships its French satellite; 1.2.1 drops it: neither the ship folder nor signed/ holds it, and the ship audit passes', async () => {
    requireDotnet();
    const first = await build('1.2.0');
    expect(first.status, first.output.slice(-4000)).toBe(0);
    expect(filesOf(ship())).toContain('fr/ShipAddin.resources.dll');
    expect(existsSync(join(out(), 'signed', 'fr', 'ShipAddin.resources.dll'))).toBe(true);

    rmSync(join(dir, 'Strings.fr.resx'));
    rmSync(join(dir, 'readme.fr.txt'));
    const next = await build('1.2.1');
    expect(next.status, next.output.slice(-4000)).toBe(0);
    // MSBuild's incremental clean took them out of the output; signgate out of signed/ and the ship folder.
    expect(existsSync(join(out(), 'fr', 'ShipAddin.resources.dll'))).toBe(false);
    expect(existsSync(join(out(), 'signed', 'fr', 'ShipAddin.resources.dll'))).toBe(false);
    expect(next.output).toContain(`signgate: removed ${join(out(), 'signed', 'fr', 'ShipAddin.resources.dll')}: a signed copy from an earlier build`);
    // Exactly this build's files, each signed or copied from it: the signed 1.2.1 add-in, no French file of any kind.
    const shipped = filesOf(ship());
    expect(shipped.filter((f) => /fr/.test(f))).toEqual([]);
    expect(shipped).toEqual(filesOf(out()).filter((f) => !f.startsWith('signed/')));
    expect(readFileSync(join(ship(), 'ShipAddin.dll')).equals(readFileSync(join(out(), 'signed', 'ShipAddin.dll')))).toBe(true);
    const verify = runCli(['verify', join(ship(), 'ShipAddin.dll'), '--key', join(dir, '12345_public.snk')]);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    // The ship audit passes, in the build and by hand, and names the add-in at 1.2.1.
    // The build's list of the ship folder: every file of it, not its assemblies alone.
    expect(
      readFileSync(join(dir, 'obj', 'Release', 'net8.0', 'signgate-ship-manifest.txt'), 'utf8')
        .split(/\r?\n/)
        .filter(Boolean)
        .sort(),
    ).toEqual(shipped);
    expect(shipped).toContain('readme.txt');
    const report = audit();
    expect(report.status, report.stdout + report.stderr).toBe(0);
    const json = JSON.parse(report.stdout) as { manifest: { missing: string[]; extra: string[] }; files: { name: string; version?: string }[] };
    expect(json.manifest).toEqual({ missing: [], extra: [] });
    expect(JSON.stringify(json.files)).toContain('1.2.1.0');
    expect(JSON.stringify(json.files)).not.toContain('1.2.0.0');
    // Last release's French readme put back by hand: the ship audit fails on it (SG703), as on a stale assembly.
    writeFileSync(join(ship(), 'readme.fr.txt'), "l'add-in\n");
    const stale = audit();
    expect(stale.status).toBe(1);
    expect((JSON.parse(stale.stdout) as { manifest: { extra: string[] } }).manifest.extra.map((p) => p.split('/').pop())).toEqual(['readme.fr.txt']);
  });

  test('a signing step that fails halfway (the satellite signed, the add-in refused) leaves no ship folder: neither the last release nor a half-made one', async () => {
    requireDotnet();
    writeFileSync(join(dir, 'Strings.fr.resx'), resx('Bonjour'));
    // Uploaded without the checks, so that the service's own check refuses the add-in (no vendor attribute) and signs
    // the satellite of the same job.
    const failed = await build('1.2.2', '-p:Broken=true', '-p:SigngateSignArguments=--no-check');
    expect(failed.status, failed.output.slice(-4000)).toBe(1);
    expect(failed.output).toMatch(/ShipAddin\.dll : error SG301: /);
    expect(failed.output).toContain('error SGB004');
    expect(failed.output).toContain(`signgate: removed ${ship()}/, the ship folder of an earlier build`);
    // Nothing to ship from this build: the 1.2.1 folder is gone, and no folder was made of the half that signed.
    expect(existsSync(ship())).toBe(false);
    expect(failed.output).not.toContain('is ready to ship');
    // The next good build makes it again, from that build alone.
    rmSync(join(dir, 'Strings.fr.resx'));
    const again = await build('1.2.3');
    expect(again.status, again.output.slice(-4000)).toBe(0);
    expect(filesOf(ship())).toEqual(filesOf(out()).filter((f) => !f.startsWith('signed/')));
    expect(audit().status).toBe(0);
  });
  test('a renamed assembly: the old name leaves the output, signed/ and the ship folder', async () => {
    requireDotnet();
    const renamed = await build('1.3.0', '-p:AssemblyName=ShipAddin.Core');
    expect(renamed.status, renamed.output.slice(-4000)).toBe(0);
    expect(existsSync(join(out(), 'signed', 'ShipAddin.dll'))).toBe(false);
    expect(renamed.output).toContain(`signgate: removed ${join(out(), 'signed', 'ShipAddin.dll')}: a signed copy from an earlier build`);
    const shipped = filesOf(ship());
    expect(shipped).toContain('ShipAddin.Core.dll');
    expect(shipped.filter((f) => /^ShipAddin\.(dll|pdb|deps\.json)$/.test(f))).toEqual([]);
    expect(shipped).toEqual(filesOf(out()).filter((f) => !f.startsWith('signed/')));
    expect(audit().status).toBe(0);
  });
});
