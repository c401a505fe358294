// Settings that fit a whole solution: Signgate's properties in Directory.Build.props (the targets imported from
// Directory.Build.targets), an add-in that uses the vendor API and a helper project of the same solution that does
// not. In Debug and in Release (signing through the reference service on loopback) the helper builds, with one line
// that it needs no signing (and in Release needs no token either); the add-in is checked and signed. Messages name
// MSBuild properties, never CLI options.
// Needs the .NET SDK (fails in CI without it).
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addinSource, requireDotnet, run, runDotnetTests } from './dotnet.js';

const PROPS = `<Project>
  <PropertyGroup>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>$(MSBuildThisFileDirectory)keys/12345_public.snk</AssemblyOriginatorKeyFile>
    <SigngateCheck>true</SigngateCheck>
    <SigngateSign Condition="'$(Configuration)' == 'Release'">true</SigngateSign>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>$(MSBuildThisFileDirectory)keys/12345_public.snk</SigngateKey>
  </PropertyGroup>
</Project>
`;
const TARGETS = `<Project>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;
const project = (body: string) => `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
  </PropertyGroup>
${body}
</Project>
`;

describe.runIf(runDotnetTests)('Signgate settings in Directory.Build.props', () => {
  let root: string;
  let server: TestServer;
  const build = (configuration: string, ...props: string[]) =>
    run('dotnet', ['build', 'Addin/Addin.csproj', '-c', configuration, '-nologo', '-tl:off', '--disable-build-servers', ...props], {
      cwd: root,
      env: { SIGNGATE_CACHE_DIR: join(root, 'cache'), SIGNGATE_ACCESS_TOKEN: server.token() },
    });

  beforeAll(async () => {
    if (!runDotnetTests) return;
    server = await startServer();
    root = mkdtempSync(join(tmpdir(), 'signgate-solution-'));
    for (const dir of ['keys', 'vendor', 'Addin', 'Helper']) mkdirSync(join(root, dir));
    writeFileSync(join(root, 'Directory.Build.props'), PROPS);
    writeFileSync(join(root, 'Directory.Build.targets'), TARGETS);
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(root, 'keys', '12345_public.snk'));
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(root, 'vendor', 'Contoso.AddinApi.dll'));
    writeFileSync(
      join(root, 'Addin', 'Addin.csproj'),
      project(`  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="../vendor/Contoso.AddinApi.dll" Private="false" />
    <ProjectReference Include="../Helper/Helper.csproj" />
  </ItemGroup>`),
    );
    writeFileSync(join(root, 'Addin', 'Addin.cs'), addinSource('SolutionAddin', 'solution'));
    writeFileSync(join(root, 'Helper', 'Helper.csproj'), project(''));
    writeFileSync(join(root, 'Helper', 'Helper.cs'), 'namespace Helper { public static class Strings { public static string Greeting => "hello"; } }\n');
  });
  afterAll(() => server?.close());

  const helperLines = (output: string) => output.split('\n').filter((l) => /Helper/.test(l) && /SG504|needs no signing/.test(l));

  test('Debug: the helper builds with one line that it needs no signing; the add-in is checked', async () => {
    requireDotnet();
    const r = await build('Debug');
    expect(r.status, r.output.slice(-3000)).toBe(0);
    const lines = [...new Set(helperLines(r.output).map((l) => l.trim()))];
    expect(lines, r.output.slice(-3000)).toHaveLength(1);
    expect(lines[0]).toMatch(/Helper\.dll : note SG504: needs no signing: the one assembly does not reference a vendor API assembly \(Contoso\.\*\)/);
    expect(r.output).not.toMatch(/error SG504/);
    expect(r.output).not.toMatch(/--vendor|--vendor-api|--key\b/);
    expect(r.output).toMatch(/signgate check, 1 file, 1 needs signing \(1 pass, 0 fail\), 0 errors/);
  });

  test('Release: the add-in is signed, the helper uploads nothing and passes', async () => {
    requireDotnet();
    const r = await build('Release', `-p:SigngateBaseUrl=${server.baseUrl}`);
    expect(r.status, r.output.slice(-3000)).toBe(0);
    expect(
      r.output
        .split('\n')
        .filter((l) => /SG504/.test(l))
        .join('\n'),
    ).not.toMatch(/error SG504/);
    expect(existsSync(join(root, 'Addin', 'bin', 'Release', 'net8.0', 'signed', 'Addin.dll'))).toBe(true);
    // The helper, delay-signed with the option's key by the same props, is signed from the add-in's output.
    expect(existsSync(join(root, 'Addin', 'bin', 'Release', 'net8.0', 'signed', 'Helper.dll'))).toBe(true);
    expect(existsSync(join(root, 'Helper', 'bin', 'Release', 'net8.0', 'signed', 'Helper.dll'))).toBe(false);
    expect(r.output).toMatch(/Helper.*needs no signing/);
  });

  test('Release without a token: the helper, which needs no signing, builds; the add-in stops at SGB003', async () => {
    requireDotnet();
    const noToken = (project: string) =>
      run('dotnet', ['build', project, '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', '--no-restore'], {
        cwd: root,
        env: { SIGNGATE_CACHE_DIR: join(root, 'cache'), SIGNGATE_ACCESS_TOKEN: '' },
      });
    rmSync(join(root, 'Helper', 'obj', 'Release', 'net8.0', 'signgate-sign.stamp'), { force: true });
    const helper = await noToken('Helper/Helper.csproj');
    expect(helper.status, helper.output.slice(-3000)).toBe(0);
    expect(helper.output).not.toContain('SGB003');
    expect(helper.output).toMatch(/skip .*Helper\.dll +needs no signing: this project uses no vendor API/);
    expect(helper.output).toContain('0 uploaded in 0 job(s)');
    expect(existsSync(join(root, 'Helper', 'bin', 'Release', 'net8.0', 'signed'))).toBe(false);
    // The add-in has files to upload: it needs the token.
    rmSync(join(root, 'Addin', 'obj', 'Release', 'net8.0', 'signgate-sign.stamp'), { force: true });
    const addin = await noToken('Addin/Addin.csproj');
    expect(addin.status).toBe(1);
    expect(addin.output).toContain('error SGB003: signgate: SigngateSign is true but the environment variable SIGNGATE_ACCESS_TOKEN is not set');
  });

  test('no SigngateKey: the usage error names the property to set, not --key', async () => {
    requireDotnet();
    const r = await build('Debug', '-p:SigngateKey=', '--no-restore');
    expect(r.status).toBe(1);
    const line = r.output.split('\n').find((l) => /error SG_ERR_USAGE: no key file/.test(l));
    expect(line, r.output.slice(-3000)).toContain('hint: Set <SigngateKey>optionId_public.snk</SigngateKey> (several are allowed)');
    expect(r.output).not.toMatch(/--key\b|--vendor\b/);
  });

  test('a mistyped SigngateVendor fails the add-in, and the message names the properties', async () => {
    requireDotnet();
    const r = await build('Debug', '-p:SigngateVendor=Contso', '--no-restore');
    expect(r.status).toBe(1);
    const line = r.output.split('\n').find((l) => /Addin\.dll : error SG504/.test(l));
    expect(line, r.output.slice(-3000)).toContain('<SigngateVendor>Contoso</SigngateVendor>');
    expect(line).not.toMatch(/--vendor/);
  });
});
