// Every finding of the signing step is an MSBuild diagnostic of its own, naming its file, not plain text above one
// summary error: sign's own online check (SG601, a key file of an option the organization does not hold) and the
// service's answer (a file it refused, with its rule). Read back as MSBuild itself reports them: the build's error
// summary after "Build FAILED.", and the binary log replayed by MSBuild into an errors-only file logger; an error
// (not a finding) about a file, such as an unreadable token file, names that file too. Needs the
// .NET SDK (fails in CI without it).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addinSource, requireDotnet, run, runDotnetTests } from './dotnet.js';

const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <DefineConstants Condition="'$(Broken)' == 'true'">$(DefineConstants);BROKEN</DefineConstants>
    <SigngateCheck>true</SigngateCheck>
    <SigngateSign>true</SigngateSign>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
    <SigngateKey Condition="'$(TwoOptions)' == 'true'">12345_public.snk;55555_public.snk</SigngateKey>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

/** `origin : error CODE: text` lines, as MSBuild's canonical format has them (file and code). */
const diagnostics = (lines: readonly string[]) => [
  ...new Set(
    lines
      // A replayed log's lines start with the node and project ids (1:7>).
      .map((l) => /^\s*(?:\d+:\d+>)?(.+?) ?: error ([A-Z][A-Z0-9_]*): /.exec(l))
      .flatMap((m) => (m ? [`${m[1]} ${m[2]}`] : [])),
  ),
];

describe.runIf(runDotnetTests)("the signing step's findings as MSBuild diagnostics", () => {
  let server: TestServer;
  let dir: string;
  const build = async (name: string, ...props: string[]) => {
    const binlog = join(dir, '..', `${name}.binlog`);
    const r = await run(
      'dotnet',
      ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', `-bl:${binlog}`, `-p:SigngateBaseUrl=${server.baseUrl}`, ...props],
      {
        cwd: dir,
        env: { SIGNGATE_CACHE_DIR: join(dir, '..', 'cache'), SIGNGATE_ACCESS_TOKEN: server.token() },
      },
    );
    // The error summary MSBuild prints at the end.
    const summary = r.output.slice(r.output.lastIndexOf('Build FAILED.')).split('\n');
    // The binary log's error events, replayed by MSBuild itself.
    const errorsFile = join(dir, '..', `${name}.errors.txt`);
    const replay = await run('dotnet', ['msbuild', binlog, '-noconlog', `-flp:errorsonly;logfile=${errorsFile}`, '-nologo'], { cwd: dir });
    expect(replay.status, replay.output).toBe(0);
    return { ...r, summary: diagnostics(summary), binlog: diagnostics(readFileSync(errorsFile, 'utf8').split('\n')) };
  };

  beforeAll(async () => {
    if (!runDotnetTests) return;
    server = await startServer();
    dir = join(mkdtempSync(join(tmpdir(), 'signgate-msbuild-diagnostics-')), 'DiagAddin');
    mkdirSync(join(dir, 'vendor'), { recursive: true });
    writeFileSync(join(dir, 'DiagAddin.csproj'), PROJECT);
    writeFileSync(join(dir, 'Addin.cs'), addinSource('DiagAddin', 'diagnostics'));
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
    // The same key under the name of option 55555, which another organization holds: offline it passes.
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '55555_public.snk'));
  });
  afterAll(() => server?.close());

  test("sign's own online check: SG601 on the key file, in the summary and the binary log, beside SGB004", async () => {
    requireDotnet();
    const r = await build('sg601', '-p:TwoOptions=true');
    expect(r.status).toBe(1);
    for (const found of [r.summary, r.binlog]) {
      expect(found, r.output.slice(-3000)).toContain('55555_public.snk SG601');
      expect(found.some((d) => d.endsWith(' SGB004'))).toBe(true);
    }
    expect(r.output).toMatch(/55555_public\.snk : error SG601: option 55555 \(55555_public\.snk\) is not licensed; the organization holds 12345, 67890/);
  });

  test("an error of the signing step that is about a file (an unreadable SigngateAccessTokenFile) is that file's diagnostic", async () => {
    requireDotnet();
    const token = join(dir, 'no-such-token.txt');
    const r = await build('token-file', '-p:SigngateCheck=false', '-p:SigngateAccessTokenFile=no-such-token.txt');
    expect(r.status).toBe(1);
    for (const found of [r.summary, r.binlog]) {
      expect(found, r.output.slice(-3000)).toContain(`${token} SG_ERR_IO_READ`);
      expect(found.some((d) => d.endsWith(' SGB004'))).toBe(true);
      expect(found.filter((d) => d.startsWith('signgate ') || d.startsWith('EXEC '))).toEqual([]);
    }
    expect(r.output).toContain(`${token} : error SG_ERR_IO_READ: ${token}: the file does not exist`);
  });

  test("the service's answer: a file it refused is an error naming the file and the service's rule", async () => {
    requireDotnet();
    // Uploaded without the checks (the build's and sign's), so that the service's own check refuses it.
    const r = await build('refused', '-p:Broken=true', '-p:SigngateCheck=false', '-p:SigngateSignArguments=--no-check');
    expect(r.status, r.output.slice(-4000)).toBe(1);
    for (const found of [r.summary, r.binlog]) {
      expect(found, r.output.slice(-3000)).toContain('bin/Release/net8.0/DiagAddin.dll SG301');
      expect(found.some((d) => d.endsWith(' SGB004'))).toBe(true);
      // No error without a file and a code of its own (MSBuild's EXEC : error : for a plain line).
      expect(found.filter((d) => d.startsWith('EXEC '))).toEqual([]);
    }
  });
});
