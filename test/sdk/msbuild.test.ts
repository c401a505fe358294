// msbuild/Signgate.targets in a real `dotnet build`: an add-in project that imports the targets is checked after
// compile and signed after build through the reference service on loopback; a broken add-in fails the build with
// each finding as an MSBuild error carrying its code and file. Needs the .NET SDK (fails in CI without it).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, repoRoot, runCli, runMono } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { hasDotnet, requireDotnet, run, runDotnetTests } from './dotnet.js';

// Imports the targets from this repository, so SigngateCli takes its default, ../bin/signgate.js beside them.
const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net48</TargetFramework>
    <Deterministic>true</Deterministic>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <DefineConstants Condition="'$(Broken)' == 'true'">$(DefineConstants);BROKEN</DefineConstants>
    <AssemblyOriginatorKeyFile Condition="'$(Broken)' == 'true'">67890_public.snk</AssemblyOriginatorKeyFile>

    <SigngateCheck>true</SigngateCheck>
    <SigngateSign>true</SigngateSign>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" />
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

const SOURCE = `#if !BROKEN
[assembly: Contoso.ContosoSignedAssembly(true)]
#endif
namespace PostBuildAddin
{
    public class Addin : Contoso.AddinBase
    {
        public override string Name => "post-build";
    }
}
`;

test('the package ships the targets beside bin/, where their default SigngateCli points', () => {
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' }));
  const files = pack.files.map((f: { path: string }) => f.path);
  expect(files).toContain('msbuild/Signgate.targets');
  expect(files).toContain('bin/signgate.js');
}, 60_000);

describe.runIf(runDotnetTests)('msbuild/Signgate.targets in dotnet build', () => {
  let server: TestServer;
  let dir: string;
  let cache: string;
  const build = (env: Record<string, string>, ...props: string[]) =>
    run('dotnet', ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', `-p:SigngateBaseUrl=${server.baseUrl}`, ...props], { cwd: dir, env: { SIGNGATE_CACHE_DIR: cache, ...env } });

  beforeAll(async () => {
    if (!hasDotnet) return; // each test then fails on requireDotnet(), as it must in CI
    server = await startServer();
    const root = mkdtempSync(join(tmpdir(), 'signgate-msbuild-'));
    dir = join(root, 'PostBuildAddin');
    cache = join(root, 'cache');
    mkdirSync(join(dir, 'vendor'), { recursive: true });
    writeFileSync(join(dir, 'PostBuildAddin.csproj'), PROJECT);
    writeFileSync(join(dir, 'Addin.cs'), SOURCE);
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
    copyFileSync(fixturePath('test-keys/67890_public.snk'), join(dir, '67890_public.snk'));
  }, 120_000);
  afterAll(() => server?.close());

  test('a good add-in: checked after compile, signed after build, and the signed file verifies', async () => {
    requireDotnet();
    const token = server.token();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: token });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('signgate check, 1 files, 1 need signing (1 pass, 0 fail), 0 errors');
    expect(r.output).not.toContain(token);
    const signed = join(dir, 'bin', 'Release', 'net48', 'signed', 'PostBuildAddin.dll');
    expect(existsSync(signed), r.output).toBe(true);
    const verify = runCli(['verify', signed, '--key', fixturePath('test-keys/12345_public.snk')]);
    expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    if (hasMono) expect(runMono('sn', ['-q', '-vf', signed]).status).toBe(0);
  }, 600_000);

  test('signing turned on without SIGNGATE_ACCESS_TOKEN: the build fails and says so', async () => {
    requireDotnet();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: '' }, '--no-restore');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(/error SGB003: signgate: SigngateSign is true but the environment variable SIGNGATE_ACCESS_TOKEN is not set/);
  }, 600_000);

  test('a broken add-in: the build fails, each finding an MSBuild error with its code and file', async () => {
    requireDotnet();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:Broken=true');
    expect(r.status).not.toBe(0);
    const file = 'obj/Release/net48/PostBuildAddin.dll';
    expect(r.output).toMatch(new RegExp(`${file} : error SG205: the assembly has key token [0-9a-f]{16}, expected 5d004f218731cd20`));
    expect(r.output).toMatch(new RegExp(`${file} : error SG301: no ContosoSignedAssemblyAttribute on the assembly`));
    expect(r.output).toContain('error SGB002: signgate check failed with exit code 1');
    // MSBuild counted them as errors, and the build stopped before the copy to bin/ and the signing step.
    expect(r.output).toMatch(/\b3 Error\(s\)/);
    expect(r.output).not.toContain('PostBuildAddin -> ');
    expect(r.output).not.toContain('SigngateSign');
  }, 600_000);
});
