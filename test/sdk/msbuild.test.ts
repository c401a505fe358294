// msbuild/Signgate.targets in a real `dotnet build`: an add-in project that imports the targets is checked after
// compile and signed after build through the reference service on loopback; a broken add-in fails the build with
// each finding as an MSBuild error carrying its code and file. Needs the .NET SDK (fails in CI without it).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, repoRoot, runCli, runMono } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { binlogText, findSecret } from '../helpers/secrets.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { generateKeyPairSync } from 'node:crypto';
import { formatVerifierKey, verifierOf } from '../../src/record/checkpoint.js';
import { addinSource, hasDotnet, requireDotnet, run, runDotnetTests } from './dotnet.js';

// Imports the targets from this repository, so SigngateCli takes its default, ../bin/signgate.js beside them.
const PROJECT = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFrameworks>net48;net8.0</TargetFrameworks>
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
    <!-- A control for the log search: an environment variable the project does read, which MSBuild logs. -->
    <_Canary>$(SIGNGATE_TEST_CANARY)</_Canary>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" />
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

const SOURCE = addinSource('PostBuildAddin', 'post-build');

/** A project folder in a fresh temporary folder: the project file, the add-in's source, the vendor API and the keys. */
function addinProject(name: string, project: string, source: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'signgate-msbuild-')), name);
  mkdirSync(join(dir, 'vendor'), { recursive: true });
  writeFileSync(join(dir, `${name}.csproj`), project);
  writeFileSync(join(dir, 'Addin.cs'), source);
  copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
  copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, '12345_public.snk'));
  copyFileSync(fixturePath('test-keys/67890_public.snk'), join(dir, '67890_public.snk'));
  return dir;
}

test('the package ships the targets beside bin/, where their default SigngateCli points', () => {
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: repoRoot, encoding: 'utf8' }));
  const files = pack.files.map((f: { path: string }) => f.path);
  expect(files).toContain('msbuild/Signgate.targets');
  expect(files).toContain('bin/signgate.js');
});

describe.runIf(runDotnetTests)('msbuild/Signgate.targets in dotnet build', () => {
  let server: TestServer;
  let dir: string;
  let cache: string;
  const build = (env: Record<string, string>, ...props: string[]) =>
    run('dotnet', ['build', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', `-p:SigngateBaseUrl=${server.baseUrl}`, ...props], {
      cwd: dir,
      env: { SIGNGATE_CACHE_DIR: cache, ...env },
    });

  beforeAll(async () => {
    if (!hasDotnet) return; // each test then fails on requireDotnet(), as it must in CI
    server = await startServer();
    dir = addinProject('PostBuildAddin', PROJECT, SOURCE);
    cache = join(dir, '..', 'cache');
  });
  afterAll(() => server?.close());

  test('a good add-in: checked after compile, signed after build, and the signed file verifies', async () => {
    requireDotnet();
    const token = server.token();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: token });
    expect(r.status, r.output).toBe(0);
    expect(r.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
    expect(r.output).not.toContain(token);
    for (const framework of ['net48', 'net8.0']) {
      const signed = join(dir, 'bin', 'Release', framework, 'signed', 'PostBuildAddin.dll');
      expect(existsSync(signed), r.output).toBe(true);
      const verify = runCli(['verify', signed, '--key', fixturePath('test-keys/12345_public.snk')]);
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', signed]).status).toBe(0);
    }
  });

  test('SigngateShip: the output with the signed files in place lands in bin/ship/, and its release audit passes', async () => {
    requireDotnet();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:SigngateShip=true');
    expect(r.status, errorLines(r.output)).toBe(0);
    for (const framework of ['net48', 'net8.0']) {
      const ship = join(dir, 'bin', 'ship', 'Release', framework);
      const out = join(dir, 'bin', 'Release', framework);
      expect(r.output).toContain(`${ship}/ is ready to ship`);
      // The signed add-in in place of the delay-signed one, and the rest of the output as it was.
      expect(readFileSync(join(ship, 'PostBuildAddin.dll')).equals(readFileSync(join(out, 'signed', 'PostBuildAddin.dll')))).toBe(true);
      expect(readFileSync(join(ship, 'PostBuildAddin.pdb')).equals(readFileSync(join(out, 'PostBuildAddin.pdb')))).toBe(true);
      if (framework === 'net8.0') expect(existsSync(join(ship, 'PostBuildAddin.deps.json'))).toBe(true);
      expect(existsSync(join(ship, 'signed'))).toBe(false);
      // The service's log of the job stays in signed/, the build's record; it is not shipped.
      expect(existsSync(join(out, 'signed', 'signing-log.txt'))).toBe(true);
      expect(existsSync(join(ship, 'signing-log.txt'))).toBe(false);
      const audit = readFileSync(join(dir, 'obj', 'Release', framework, 'signgate-ship-audit.md'), 'utf8');
      expect(audit).toContain('PostBuildAddin.dll');
      const verify = runCli(['verify', join(ship, 'PostBuildAddin.dll'), '--key', fixturePath('test-keys/12345_public.snk')]);
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    }
    // A ship folder inside the output folder, which is signed as a whole, is refused.
    const inside = await build(
      { SIGNGATE_ACCESS_TOKEN: server.token() },
      '-p:SigngateShip=true',
      '-p:TargetFramework=net48',
      '-p:SigngateShipDestination=bin/Release/net48/ship',
      '--no-restore',
    );
    expect(inside.status).not.toBe(0);
    expect(inside.output).toContain('error SGB012');
  });

  test('a second build with nothing changed runs neither the check nor the signing; a changed key file runs both', async () => {
    requireDotnet();
    const env = { SIGNGATE_ACCESS_TOKEN: server.token() };
    const again = await build(env, '--no-restore', '-v:d');
    expect(again.status, errorLines(again.output)).toBe(0);
    expect(again.output).toContain('Skipping target "SigngateCheck" because all output files are up-to-date');
    expect(again.output).toContain('Skipping target "SigngateSign" because all output files are up-to-date');
    expect(again.output).not.toContain('signgate check, 1 file,');
    expect(again.output).not.toMatch(/uploaded in \d+ job/);
    // A key file written again (a new option's key, say) is newer than the stamps: both run.
    const key = join(dir, '12345_public.snk');
    writeFileSync(key, readFileSync(key));
    const changed = await build(env, '--no-restore');
    expect(changed.status, errorLines(changed.output)).toBe(0);
    expect(changed.output).toContain('signgate check, 1 file,');
    expect(changed.output).toMatch(/uploaded in \d+ job/);
    // A changed property (another signing option) runs both again; the same once more runs neither.
    const property = await build(env, '--no-restore', '-p:SigngateSignArguments=--timeout 601');
    expect(property.output).toContain('signgate check, 1 file,');
    expect(property.output).toMatch(/uploaded in \d+ job/);
    const same = await build(env, '--no-restore', '-p:SigngateSignArguments=--timeout 601');
    expect(same.output).not.toMatch(/uploaded in \d+ job/);
    // The signed files removed: signed again, though nothing else changed.
    rmSync(join(dir, 'bin', 'Release', 'net48', 'signed'), { recursive: true, force: true });
    const removed = await build(env, '--no-restore', '-p:SigngateSignArguments=--timeout 601');
    expect(removed.output).toMatch(/uploaded in \d+ job/);
    expect(existsSync(join(dir, 'bin', 'Release', 'net48', 'signed', 'PostBuildAddin.dll'))).toBe(true);
  });

  /** Forgets that the targets ran, so that the next build runs them again. */
  const forget = () => {
    for (const framework of ['net48', 'net8.0'])
      for (const stamp of ['signgate-check.stamp', 'signgate-sign.stamp']) rmSync(join(dir, 'obj', 'Release', framework, stamp), { force: true });
  };

  // Every log MSBuild writes, at its most verbose: the console at diagnostic verbosity, a file logger at
  // diagnostic verbosity and a binary log (its strings, environment and embedded project files).
  const loudBuild = async (name: string, env: Record<string, string>, ...props: string[]) => {
    const logs = join(dir, '..', `logs-${name}`);
    rmSync(logs, { recursive: true, force: true });
    mkdirSync(logs);
    forget();
    const r = await build(env, '-v:diag', '-fl', `-flp:verbosity=diagnostic;logfile=${join(logs, 'build.log')}`, `-bl:${join(logs, 'build.binlog')}`, ...props);
    const texts = { console: r.output, 'file logger': readFileSync(join(logs, 'build.log'), 'utf8'), 'binary log': binlogText(join(logs, 'build.binlog')) };
    return { ...r, texts };
  };
  const errorLines = (output: string) =>
    output
      .split('\n')
      .filter((l) => /error|warn/i.test(l) && !/Property|Environment|Initial/.test(l))
      .slice(-20)
      .join('\n');
  const searched = (texts: Record<string, string>, secret: string) =>
    Object.entries(texts).flatMap(([where, text]) => (findSecret(text, secret) ? [`${where}: ${findSecret(text, secret)}`] : []));

  test("SigngateRecordKey: the service's record key expected up front; another key stops the signing with SG_ERR_RECORD_PROOF", async () => {
    requireDotnet();
    const token = server.token();
    const right = await build({ SIGNGATE_ACCESS_TOKEN: token }, `-p:SigngateRecordKey=${join(server.dataDir, 'record-key.pub')}`);
    expect(right.status, right.output).toBe(0);
    expect(right.output).toContain('that SigngateRecordKey names');
    expect(right.output).not.toContain('--record-key');
    const { privateKey } = generateKeyPairSync('ed25519');
    const foreign = formatVerifierKey(verifierOf(privateKey));
    const wrong = await build({ SIGNGATE_ACCESS_TOKEN: token }, `-p:SigngateRecordKey=${foreign}`);
    expect(wrong.status).not.toBe(0);
    expect(wrong.output).toContain('SG_ERR_RECORD_PROOF');
    expect(wrong.output).toContain(foreign.split('+')[0]!);
  });

  test('the token reaches no log at diagnostic verbosity, nor the binary log; a variable the project reads does', async () => {
    requireDotnet();
    const token = server.token();
    const canary = `canary-${randomUUID()}`;
    const r = await loudBuild('env', { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_TEST_CANARY: canary });
    expect(r.status, errorLines(r.output)).toBe(0);
    expect(existsSync(join(dir, 'bin', 'Release', 'net8.0', 'signed', 'PostBuildAddin.dll'))).toBe(true);
    expect(r.output).toMatch(/uploaded in \d+ job/);
    // The search finds what MSBuild does log: the canary in each of the three logs.
    for (const text of Object.values(r.texts)) expect(findSecret(text, canary)).toBeDefined();
    expect(r.texts['binary log']).toContain('SigngateVendor'); // the embedded project file, inflated
    expect(searched(r.texts, token)).toEqual([]);
  });

  test('a token file named by SigngateAccessTokenFile: its path may be logged, its content never', async () => {
    requireDotnet();
    const token = server.token();
    const file = join(dir, '..', 'secret token.txt');
    writeFileSync(file, `${token}\r\n`);
    const r = await loudBuild('file', { SIGNGATE_ACCESS_TOKEN: '' }, `-p:SigngateAccessTokenFile=${file}`);
    expect(r.status, errorLines(r.output)).toBe(0);
    expect(searched(r.texts, token)).toEqual([]);
  });

  test('without a token: SGB003 from signgate at every verbosity, with the advice, and nothing about the variable logged', async () => {
    requireDotnet();
    for (const verbosity of ['-v:q', '-v:n', '-v:diag']) {
      forget();
      const r = await build({ SIGNGATE_ACCESS_TOKEN: '' }, '--no-restore', verbosity);
      expect(r.status, verbosity).toBe(1);
      expect(r.output).toMatch(
        /error SGB003: signgate: SigngateSign is true but the environment variable SIGNGATE_ACCESS_TOKEN is not set; set it from your CI secret/,
      );
      expect(r.output).toContain('-p:SigngateSign=false');
      expect(r.output).not.toContain("Property 'SIGNGATE_ACCESS_TOKEN'");
    }
  }, 900_000);

  test('a token passed as a property is refused without being printed, and the command line is never echoed', async () => {
    requireDotnet();
    const token = server.token();
    forget();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: token }, '--no-restore', `-p:SigngateSignArguments=--comment ${token}`);
    expect(r.status).toBe(1);
    expect(r.output).toContain('looks like an access token (not shown)');
    expect(r.output).toContain('SigngateAccessTokenFile');
    expect(r.output).toContain('error SGB004: signgate sign failed with exit code 2');
    expect(r.output).not.toContain('MSB3073');
    expect(findSecret(r.output, token)).toBeUndefined();
    forget();
    const viaOption = await build({ SIGNGATE_ACCESS_TOKEN: '' }, '--no-restore', `-p:SigngateSignArguments=--access-token ${token}`);
    expect(viaOption.status).toBe(1);
    expect(viaOption.output).toContain('--access-token is set on a command line that MSBuild built');
    expect(findSecret(viaOption.output, token)).toBeUndefined();
  });

  test('a broken add-in: the build fails, each finding an MSBuild error with its code and file', async () => {
    requireDotnet();
    const r = await build({ SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:Broken=true', '-p:TargetFramework=net48');
    expect(r.status).not.toBe(0);
    const file = 'obj/Release/net48/PostBuildAddin.dll';
    // The check's command line is not echoed either (EchoOff).
    expect(r.output).not.toMatch(/signgate\.js" check/);
    expect(r.output).toMatch(
      new RegExp(`${file} : error SG205: the assembly is delay-signed with another key: key token [0-9a-f]{16}, expected 5d004f218731cd20`),
    );
    expect(r.output).toMatch(new RegExp(`${file} : error SG301: no ContosoSignedAssemblyAttribute on the assembly`));
    expect(r.output).toContain('error SGB002: signgate check failed with exit code 1');
    // The hint names the attribute as the referenced vendor API assembly declares it.
    expect(r.output).toContain(
      'Add [assembly: Contoso.ContosoSignedAssembly(true)] to the project (or using Contoso; and [assembly: ContosoSignedAssembly(true)]): Contoso.AddinApi declares Contoso.ContosoSignedAssemblyAttribute.',
    );
    // docs/msbuild.md quotes the SGB002 line with the position MSBuild really reports.
    const reported = /Signgate\.targets\((\d+,\d+)\): error SGB002/.exec(r.output)?.[1];
    const quoted = /Signgate\.targets\((\d+,\d+)\): error SGB002/.exec(readFileSync(join(repoRoot, 'docs', 'msbuild.md'), 'utf8'))?.[1];
    expect(reported).toBeDefined();
    expect(quoted).toBe(reported);
    // MSBuild counted them as errors, and the build stopped before the copy to bin/ and the signing step.
    expect(r.output).toMatch(/\b3 Error\(s\)/);
    expect(r.output).not.toContain('PostBuildAddin -> ');
    expect(r.output).not.toContain('SigngateSign');
  });
});

// A developer's machine as the README leaves it: SIGNGATE_BASE_URL exported (for `sign`), no token, and no service
// listening there. The check in a Debug build does not go online for an exported variable: the build passes. A
// net8.0 class library with the check after every compile, signing in Release only.
const LIBRARY = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <SigngateCheck>true</SigngateCheck>
    <SigngateSign Condition="'$(Configuration)' == 'Release'">true</SigngateSign>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
  <Import Project="${join(repoRoot, 'msbuild', 'Signgate.targets')}" />
</Project>
`;

describe.runIf(runDotnetTests)('SIGNGATE_BASE_URL exported, no token, no service: the check stays offline', () => {
  let dir: string;
  let baseUrl: string;
  // Every time the targets start Node, a line in this file (SigngateNode is a script that writes it, then runs node).
  let starts: string;
  const build = (configuration: string, props: string[] = [], token = '') =>
    run('dotnet', ['build', '-c', configuration, '-nologo', '-tl:off', '--disable-build-servers', `-p:SigngateNode=${join(dir, '..', 'node.sh')}`, ...props], {
      cwd: dir,
      env: { SIGNGATE_BASE_URL: baseUrl, SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(dir, '..', 'cache') },
    });
  const nodeStarts = () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0);

  beforeAll(async () => {
    if (!hasDotnet) return;
    dir = addinProject('OfflineLibrary', LIBRARY, addinSource('OfflineLibrary', 'offline'));
    baseUrl = `http://127.0.0.1:${await freePort()}/assembly-signing/v1.0`;
    starts = join(dir, '..', 'node-starts.txt');
    writeFileSync(join(dir, '..', 'node.sh'), `#!/bin/sh\necho "$*" >> "${starts}"\nexec "${process.execPath}" "$@"\n`, { mode: 0o755 });
  });

  test('a Debug build checks offline and passes, saying once that the variable went unused; Release stops at SGB003', async () => {
    requireDotnet();
    const debug = await build('Debug');
    expect(debug.status, debug.output).toBe(0);
    expect(debug.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
    expect(debug.output).toContain(
      'check ran offline: SIGNGATE_BASE_URL is the service for the signing step; <SigngateCheckOnline>true</SigngateCheckOnline> takes the check there too',
    );
    expect(debug.output).not.toContain('--online');
    expect(debug.output).not.toMatch(/SG_ERR_|SGB00\d/);
    // Release: the check passes offline as well, and the signing step says what is missing (no SGB002 before it).
    const release = await build('Release');
    expect(release.status).toBe(1);
    expect(release.output).toContain('error SGB003: signgate: SigngateSign is true but the environment variable SIGNGATE_ACCESS_TOKEN is not set');
    expect(release.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
    expect(release.output).not.toMatch(/SGB002|SG_ERR_/);
  });

  test("SigngateCheckOnline=true without a token: the CLI's error line keeps its hint, and the build fails with SGB002", async () => {
    requireDotnet();
    const r = await build('Debug', ['--no-restore', '-p:SigngateCheckOnline=true']);
    expect(r.status).toBe(1);
    const line = r.output.split('\n').find((l) => l.includes('error SG_ERR_USAGE'));
    // In the build's words: its properties, not the command line's options.
    expect(line, r.output).toMatch(
      /^\s*signgate : error SG_ERR_USAGE: check goes online \(<SigngateCheckOnline>true<\/SigngateCheckOnline>, http:\/\/127\.0\.0\.1:\d+\/assembly-signing\/v1\.0\)/,
    );
    expect(line).toContain(') but no access token is given; hint:');
    expect(line).toContain('; hint: Set <SigngateAccessTokenFile>file</SigngateAccessTokenFile> or set SIGNGATE_ACCESS_TOKEN;');
    expect(line).toContain('-p:SigngateCheckOnline=false');
    expect(line).not.toMatch(/--online|--access-token/);
    expect(r.output).toContain('error SGB002: signgate check failed with exit code 2');
    // The error list at the end of the build repeats the line with its hint (a message line would not be there).
    expect(r.output.slice(r.output.lastIndexOf('Build FAILED.'))).toContain('; hint: Set <SigngateAccessTokenFile>');
  });

  test('SigngateCheckOnline=true with a token: the check asks the service that SigngateBaseUrl names, and passes', async () => {
    requireDotnet();
    const service = await startServer();
    try {
      const online = (token: string) => build('Debug', ['--no-restore', '-p:SigngateCheckOnline=true', `-p:SigngateBaseUrl=${service.baseUrl}`], token);
      // A token that service does not know: its 401 shows that the check asked it (not SIGNGATE_BASE_URL).
      const unknown = await online('sgt_unknown-to-this-service');
      expect(unknown.status).toBe(1);
      expect(unknown.output).toMatch(/signgate : error SG_ERR_HTTP_\w+: GET http:\/\/127\.0\.0\.1:\d+\/assembly-signing\/v1\.0\/licenses answered 401/);
      const good = await online(service.token());
      expect(good.status, good.output).toBe(0);
      expect(good.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
      expect(good.output).not.toContain('check ran offline');
    } finally {
      await service.close();
    }
  });

  test('a no-op build skips SigngateCheck by its inputs and outputs: Node does not start', async () => {
    requireDotnet();
    const first = await build('Debug', ['--no-restore']);
    expect(first.status, first.output).toBe(0);
    const before = nodeStarts();
    const again = await build('Debug', ['--no-restore', '-v:n']);
    expect(again.status, again.output).toBe(0);
    expect(again.output).toMatch(/Skipping target "SigngateCheck" because all output files are up-to-date/);
    expect(again.output).not.toContain('signgate check, 1 file');
    expect(nodeStarts()).toBe(before);
  });
});
