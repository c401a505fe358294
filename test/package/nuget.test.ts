// The NuGet package Signgate.Build in a real build: packed by scripts/build-nuget.js into a folder that a fresh
// add-in solution (SDK-style, net48 + net8.0, delay-signed as the vendor's documentation says) uses as a package
// source. One PackageReference, no Node: the first build restores Signgate.Build.Runtime.linux-x64 (never the
// win-x64 one) and its executable checks after compile and signs after build against `serve` on loopback; a broken
// add-in fails with canonical error lines; Central Package Management works as well; a second build with nothing
// changed runs neither target; a machine without an executable gets SGB005, a stale Signgate.Build SGB016. Needs
// the .NET SDK (fails in CI without).
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, repoRoot, runCli, runMono } from '../helpers/fixtures.js';
import { binlogText, findSecret } from '../helpers/secrets.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addinSource, requireDotnet, run, runDotnetTests } from '../sdk/dotnet.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';

/** A `node` first on PATH that fails loudly: the build must not need Node. */
const NO_NODE = 'node was started, but Signgate.Build needs no Node';
function pathWithoutNode(root: string): string {
  const bin = join(root, 'no-node');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'node'), `#!/bin/sh\necho "${NO_NODE}" >&2\nexit 99\n`, { mode: 0o755 });
  return `${bin}:${process.env.PATH ?? ''}`;
}

// A version of its own per run: the machine's NuGet cache never serves an older build of the same version.
const VERSION = `0.1.0-test.${Date.now()}`;

const project = (reference: string) => `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFrameworks>net48;net8.0</TargetFrameworks>
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
    ${reference}
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" Condition="'$(TargetFramework)' == 'net48'" />
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
</Project>
`;

const SOURCE = addinSource('NuGetAddin', 'nuget');

/** The machine's NuGet packages folder, which the builds below restore into. */
const PACKAGES = process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages');
/** Where the first build puts the executable for this machine (the packages folder keeps ids and versions in lower case). */
const runtimeFolder = (rid: string, version = VERSION) => join(PACKAGES, `signgate.build.runtime.${rid}`, version.toLowerCase());
const LINUX_EXECUTABLE = join(runtimeFolder('linux-x64'), 'tools', 'linux-x64', 'signgate-linux-x64');

// The packages, built once for the file (the executables take most of a minute).
let feed: string;
let nupkg: string;
let written: string[];
beforeAll(async () => {
  if (!runDotnetTests) return;
  requireDotnet();
  feed = join(mkdtempSync(join(tmpdir(), 'signgate-feed-')), 'feed');
  const { stdout } = await promisify(execFile)(process.execPath, [join(repoRoot, 'scripts', 'build-nuget.js'), '--out', feed, '--version', VERSION], {
    cwd: repoRoot,
    maxBuffer: 64 << 20,
  }).catch((e: { stdout: string; stderr: string }) => {
    throw new Error(`scripts/build-nuget.js failed:\n${e.stdout}\n${e.stderr}`);
  });
  written = [...stdout.matchAll(/wrote (\S+\.nupkg)/g)].map((m) => m[1]!);
  nupkg = written[0]!;
}, 600_000);
afterAll(() => {
  if (feed) rmSync(join(feed, '..'), { recursive: true, force: true });
  // The machine's NuGet cache keeps no test build (an executable is 100 to 140 MB unpacked).
  if (runDotnetTests)
    for (const id of ['signgate.build', 'signgate.build.runtime.linux-x64', 'signgate.build.runtime.win-x64', 'signgate.tool'])
      for (const version of [VERSION, `${VERSION}.1`, `${VERSION}.2`]) rmSync(join(PACKAGES, id, version.toLowerCase()), { recursive: true, force: true });
});

describe.runIf(runDotnetTests)('Signgate.Build from a package source', () => {
  let server: TestServer;
  let root: string;

  /** A fresh solution folder: nuget.config with the package folder as a source, the add-in project and its files. */
  const solution = (name: string, files: Record<string, string>, source = feed) => {
    const dir = join(root, name);
    mkdirSync(join(dir, 'Addin', 'vendor'), { recursive: true });
    writeFileSync(
      join(dir, 'nuget.config'),
      `<?xml version="1.0" encoding="utf-8"?>\n<configuration>\n  <packageSources>\n    <add key="signgate-local" value="${source}" />\n  </packageSources>\n</configuration>\n`,
    );
    for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
    writeFileSync(join(dir, 'Addin', 'Addin.cs'), SOURCE);
    copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'Addin', 'vendor', 'Contoso.AddinApi.dll'));
    copyFileSync(fixturePath('test-keys/12345_public.snk'), join(dir, 'Addin', '12345_public.snk'));
    copyFileSync(fixturePath('test-keys/67890_public.snk'), join(dir, 'Addin', '67890_public.snk'));
    return dir;
  };
  const build = (dir: string, env: Record<string, string>, ...props: string[]) =>
    run(
      'dotnet',
      ['build', 'Addin/Addin.csproj', '-c', 'Release', '-nologo', '-tl:off', '--disable-build-servers', `-p:SigngateBaseUrl=${server.baseUrl}`, ...props],
      {
        cwd: dir,
        // No Node on PATH for the build: the package's own executable must do it all.
        env: { SIGNGATE_CACHE_DIR: join(dir, 'cache'), PATH: pathWithoutNode(root), ...env },
      },
    );
  /** Signgate.Build alone (no executables to build), as scripts/build-nuget.js packs it, into `out`. */
  const pack = async (out: string, version: string, ...props: string[]) => {
    const obj = join(root, `pack-${basename(out)}`);
    const r = await run(
      'dotnet',
      [
        'pack',
        join(repoRoot, 'nuget', 'Signgate.Build', 'Signgate.Build.csproj'),
        '-c',
        'Release',
        '-o',
        out,
        '-nologo',
        '--disable-build-servers',
        `-p:PackageVersion=${version}`,
        `-p:BaseIntermediateOutputPath=${obj}/obj/`,
        `-p:BaseOutputPath=${obj}/bin/`,
        ...props,
      ],
      { cwd: root, env: {} },
    );
    expect(r.status, r.output).toBe(0);
  };

  beforeAll(async () => {
    if (!runDotnetTests) return;
    requireDotnet();
    server = await startServer();
    root = mkdtempSync(join(tmpdir(), 'signgate-nuget-'));
  });
  afterAll(() => server?.close());

  test('the packages: Signgate.Build holds the targets and no executable; each runtime package holds its own executable only', async () => {
    expect(written.map((p) => p.slice(feed.length + 1))).toEqual(
      ['Signgate.Build', 'Signgate.Build.Runtime.linux-x64', 'Signgate.Build.Runtime.win-x64', 'Signgate.Tool'].map((id) => `${id}.${VERSION}.nupkg`),
    );
    expect(readFileSync(nupkg).length).toBeLessThan(1024 * 1024);
    const list = async (file: string) => (await promisify(execFile)('unzip', ['-Z1', file])).stdout.split('\n').filter(Boolean);
    const build = await list(nupkg);
    for (const dir of ['build/', 'buildTransitive/'])
      for (const file of [
        'Signgate.Build.targets',
        'Signgate.Build.Runtime.targets',
        'Signgate.Build.version.targets',
        'Signgate.targets',
        'Signgate.Runtime.proj',
        'Signgate.Stale.proj',
      ])
        expect(build).toContain(dir + file);
    expect(build).toContain('buildMultiTargeting/Signgate.Build.targets');
    expect(build.filter((f) => f.startsWith('tools/'))).toEqual([]);
    for (const [rid, exe] of [
      ['linux-x64', 'signgate-linux-x64'],
      ['win-x64', 'signgate-win-x64.exe'],
    ]) {
      const runtime = written.find((p) => p.includes(`Runtime.${rid}.`))!;
      expect(readFileSync(runtime).length).toBeLessThan(250 * 1024 * 1024);
      expect((await list(runtime)).filter((f) => f.startsWith('tools/'))).toEqual([`tools/${rid}/${exe}`]);
    }
  });

  test('one PackageReference: the good add-in is checked, signed and verified for both frameworks; the token never in the log; a second build runs neither target', async () => {
    const dir = solution('Reference', {
      'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${VERSION}" PrivateAssets="all" />`),
    });
    const token = server.token();
    const binlog = join(dir, 'build.binlog');
    expect(existsSync(runtimeFolder('linux-x64')), 'no runtime package before the first build').toBe(false);
    const r = await build(dir, { SIGNGATE_ACCESS_TOKEN: token }, '-v:diag', `-bl:${binlog}`);
    expect(r.status, r.output.slice(-4000)).toBe(0);
    // The first build restored the executable for this machine, and only that one.
    expect(r.output).toContain(`signgate: restoring Signgate.Build.Runtime.linux-x64 ${VERSION}, the signgate executable for this build machine`);
    expect(existsSync(LINUX_EXECUTABLE)).toBe(true);
    expect((await run(LINUX_EXECUTABLE, ['--version'], { cwd: dir })).output.trim()).toBe(VERSION);
    expect(existsSync(runtimeFolder('win-x64'))).toBe(false);
    const signgateFolders = readdirSync(PACKAGES).filter((id) => id.startsWith('signgate.build'));
    expect(signgateFolders.filter((id) => existsSync(join(PACKAGES, id, VERSION.toLowerCase()))).sort()).toEqual([
      'signgate.build',
      'signgate.build.runtime.linux-x64',
    ]);
    expect(existsSync(join(PACKAGES, 'signgate.build', VERSION.toLowerCase(), 'tools'))).toBe(false);
    expect(findSecret(binlogText(binlog), token)).toBeUndefined();
    expect(r.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
    expect(findSecret(r.output, token)).toBeUndefined();
    expect(r.output).not.toContain(NO_NODE);
    for (const framework of ['net48', 'net8.0']) {
      const signed = join(dir, 'Addin', 'bin', 'Release', framework, 'signed', 'Addin.dll');
      expect(existsSync(signed), framework).toBe(true);
      const verify = runCli(['verify', signed, '--key', fixturePath('test-keys/12345_public.snk')]);
      expect(verify.status, verify.stdout + verify.stderr).toBe(0);
    }
    if (hasMono) expect(runMono('sn', ['-q', '-vf', join(dir, 'Addin', 'bin', 'Release', 'net48', 'signed', 'Addin.dll')]).status).toBe(0);
    const again = await build(dir, { SIGNGATE_ACCESS_TOKEN: token }, '--no-restore', '-v:d');
    expect(again.status).toBe(0);
    expect(again.output).not.toContain('signgate: restoring');
    expect(again.output).toContain('Skipping target "SigngateCheck" because all output files are up-to-date');
    expect(again.output).toContain('Skipping target "SigngateSign" because all output files are up-to-date');
    expect(again.output).not.toMatch(/uploaded in \d+ job/);
  });

  test('a broken add-in: canonical error lines naming the assembly, and the build fails', async () => {
    const dir = solution('Broken', { 'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${VERSION}" PrivateAssets="all" />`) });
    const r = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:Broken=true', '-p:TargetFramework=net48');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(
      /obj\/Release\/net48\/Addin\.dll : error SG205: the assembly is delay-signed with another key: key token [0-9a-f]{16}, expected 5d004f218731cd20/,
    );
    expect(r.output).toMatch(/obj\/Release\/net48\/Addin\.dll : error SG301: no ContosoSignedAssemblyAttribute on the assembly/);
    expect(r.output).toContain('error SGB002');
  });

  test('Central Package Management: the version in Directory.Packages.props, the reference in Directory.Build.props', async () => {
    const dir = solution('Central', {
      'Directory.Packages.props': `<Project>\n  <PropertyGroup><ManagePackageVersionsCentrally>true</ManagePackageVersionsCentrally></PropertyGroup>\n  <ItemGroup>\n    <PackageVersion Include="Signgate.Build" Version="${VERSION}" />\n    <PackageVersion Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" />\n  </ItemGroup>\n</Project>\n`,
      'Directory.Build.props': `<Project>\n  <ItemGroup>\n    <PackageReference Include="Signgate.Build" PrivateAssets="all" />\n  </ItemGroup>\n</Project>\n`,
      'Addin/Addin.csproj': project('').replace(' Version="1.0.3"', ''),
    });
    const r = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() });
    expect(r.status, r.output.slice(-4000)).toBe(0);
    expect(existsSync(join(dir, 'Addin', 'bin', 'Release', 'net8.0', 'signed', 'Addin.dll'))).toBe(true);
  });

  test('SigngateFixReferences through the package (no Node): Dapper, a package without a strong name, is strong-named before the compiler; warnings as errors pass', async () => {
    const fixProject = `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net48</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>
    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>
    <CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies>
    <SigngateFixReferences>true</SigngateFixReferences>
    <SigngateFixKey>own_keypair.snk</SigngateFixKey>
  </PropertyGroup>
  <ItemGroup>
    <PackageReference Include="Signgate.Build" Version="${VERSION}" PrivateAssets="all" />
    <PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" />
    <PackageReference Include="Dapper" Version="2.1.86" />
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>
</Project>
`;
    const dir = solution('Fix', { 'Addin/Addin.csproj': fixProject });
    writeFileSync(
      join(dir, 'Addin', 'Uses.cs'),
      'namespace NuGetAddin { public static class Uses { public static string Name => typeof(Dapper.SqlMapper).Name; } }\n',
    );
    copyFileSync(fixturePath('test-keys/other_keypair.snk'), join(dir, 'Addin', 'own_keypair.snk'));
    const r = await build(dir, {});
    expect(r.status, r.output.slice(-4000)).toBe(0);
    expect(r.output).toContain('signgate fix:');
    const own = publicKeyToken(parseStrongNameKeyFile(readFileSync(fixturePath('test-keys/other_keypair.snk'))).publicKey.blob);
    const dapper = readModule(readFileSync(join(dir, 'Addin', 'bin', 'Release', 'net48', 'Dapper.dll')));
    expect(verifyStrongName(dapper).valid).toBe(true);
    expect(publicKeyToken(dapper.assembly!.publicKey)).toBe(own);
    const addin = readModule(readFileSync(join(dir, 'Addin', 'bin', 'Release', 'net48', 'Addin.dll')));
    const ref = addin.assemblyReferences.find((x) => x.name === 'Dapper')!;
    expect(Buffer.from(ref.publicKeyOrToken).toString('hex')).toBe(own);
  });

  test('no executable for the build machine (macOS, Arm64): SGB005 names SigngateExecutable and SigngateCli; with SigngateExecutable set, the build runs it and restores nothing', async () => {
    const dir = solution('Elsewhere', {
      'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${VERSION}" PrivateAssets="all" />`),
    });
    const r = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:_SigngatePackageRid=osx-arm64', '-p:TargetFramework=net48');
    expect(r.status).not.toBe(0);
    expect(r.output).toMatch(
      /error SGB005: signgate: no signgate for this build machine \(.*\): Signgate.Build has executables for win-x64 and linux-x64 only; set SigngateExecutable to a signgate executable that runs here, or install Node.js and the npm package signgate and set SigngateCli/,
    );
    expect(r.output).not.toContain('signgate: restoring');
    // The user's own executable (here a copy of the Linux one, as a macOS user's own build would be).
    const own = join(dir, 'tools', 'my-signgate');
    mkdirSync(join(dir, 'tools'));
    copyFileSync(LINUX_EXECUTABLE, own);
    const ok = await build(
      dir,
      { SIGNGATE_ACCESS_TOKEN: server.token() },
      '-p:_SigngatePackageRid=osx-arm64',
      '-p:TargetFramework=net48',
      `-p:SigngateExecutable=${own}`,
    );
    expect(ok.status, ok.output.slice(-4000)).toBe(0);
    expect(ok.output).toContain('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors');
    expect(ok.output).not.toContain('signgate: restoring');
  }, 600_000);

  test('the runtime package is not in the package source: SGB015 names the package, its version and SigngateExecutable', async () => {
    // A source with Signgate.Build alone, of a version whose runtime package no test has restored.
    const lonely = join(root, 'lonely-feed');
    const version = `${VERSION}.2`;
    mkdirSync(lonely);
    await pack(lonely, version);
    const dir = solution(
      'Lonely',
      { 'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${version}" PrivateAssets="all" />`) },
      lonely,
    );
    const r = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:TargetFramework=net8.0');
    expect(r.status).not.toBe(0);
    expect(r.output).toContain(`signgate: restoring Signgate.Build.Runtime.linux-x64 ${version}`);
    expect(r.output).toContain(
      `error SGB015: signgate: the signgate executable for this build machine is not in ${runtimeFolder('linux-x64', version)}/ and restoring Signgate.Build.Runtime.linux-x64 ${version} did not bring it`,
    );
    expect(r.output).toContain(`put Signgate.Build.Runtime.linux-x64.${version}.nupkg in a package source beside Signgate.Build.${version}.nupkg`);
    expect(r.output).toContain('or set SigngateExecutable');
    expect(r.output).toMatch(/error NU1101: Unable to find package Signgate\.Build\.Runtime\.linux-x64/);
  }, 600_000);

  test('a stale Signgate.Build: SGB016 names the version in use and the newer ones a floating version would take, or the rebuilt package of the same version', async () => {
    // A package source of its own with this run's Signgate.Build; the project floats over this run's versions.
    const stale = join(root, 'stale-feed');
    mkdirSync(stale);
    copyFileSync(nupkg, join(stale, basename(nupkg)));
    const dir = solution(
      'Stale',
      { 'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${VERSION}*" PrivateAssets="all" />`) },
      stale,
    );
    const first = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:TargetFramework=net8.0');
    expect(first.status, first.output.slice(-4000)).toBe(0);
    expect(first.output).not.toContain('SGB016');
    // A newer Signgate.Build arrives in the source; the restore of the next build has nothing to do and keeps the old one.
    await pack(stale, `${VERSION}.1`);
    const second = await build(dir, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:TargetFramework=net8.0');
    expect(second.status, second.output.slice(-4000)).toBe(0);
    expect(second.output).toContain('All projects are up-to-date for restore');
    expect(second.output).toContain(
      `warning SGB016: signgate: this build uses Signgate.Build ${VERSION} from the packages folder ${PACKAGES}/, but the package source ${stale}/ has ${VERSION}.1, newer, which the project's version ${VERSION}* takes`,
    );
    expect(second.output).toContain('Run dotnet restore --force-evaluate (or build once with -p:RestoreForceEvaluate=true) to use it.');
    // As the warning says: the newer one is used (its runtime package is not in the source: this machine's executable is named instead).
    const forced = await build(
      dir,
      { SIGNGATE_ACCESS_TOKEN: server.token() },
      '-p:TargetFramework=net8.0',
      '-p:RestoreForceEvaluate=true',
      `-p:SigngateExecutable=${LINUX_EXECUTABLE}`,
    );
    expect(forced.status, forced.output.slice(-4000)).toBe(0);
    expect(forced.output).not.toContain('SGB016');
    expect(readFileSync(join(dir, 'Addin', 'obj', 'project.assets.json'), 'utf8')).toContain(`"Signgate.Build/${VERSION}.1"`);

    // The same version rebuilt: a pinned project, a source whose Signgate.Build of that version has other bytes.
    const rebuilt = join(root, 'rebuilt-feed');
    mkdirSync(rebuilt);
    await pack(rebuilt, VERSION, '-p:Description=rebuilt');
    const pinned = solution(
      'Rebuilt',
      { 'Addin/Addin.csproj': project(`<PackageReference Include="Signgate.Build" Version="${VERSION}" PrivateAssets="all" />`) },
      rebuilt,
    );
    const r = await build(pinned, { SIGNGATE_ACCESS_TOKEN: server.token() }, '-p:TargetFramework=net8.0');
    expect(r.status, r.output.slice(-4000)).toBe(0);
    expect(r.output).toContain(
      `warning SGB016: signgate: this build uses Signgate.Build ${VERSION} from the packages folder ${PACKAGES}/, but the package source's ${join(rebuilt, `Signgate.Build.${VERSION}.nupkg`)}, of the same version, has other contents`,
    );
  }, 600_000);
});

describe.runIf(runDotnetTests)('Signgate.Tool: signgate as a .NET tool', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'signgate-tool-'));
  });

  const dotnet = (args: string[], cwd: string) => run('dotnet', args, { cwd, env: { PATH: pathWithoutNode(root) } });

  test('--tool-path: signgate runs every command with its arguments, output and exit code passed through', async () => {
    const install = await dotnet(['tool', 'install', 'Signgate.Tool', '--version', VERSION, '--add-source', feed, '--tool-path', join(root, 'tools')], root);
    expect(install.status, install.output).toBe(0);
    const signgate = join(root, 'tools', 'signgate');
    const version = await run(signgate, ['--version'], { cwd: root });
    // The version of the package it came in, not package.json's plain one.
    expect(version.output.trim()).toBe(VERSION);
    const good = await run(
      signgate,
      ['check', fixturePath('sdk/bin/net48'), '--vendor', 'Contoso', '--key', fixturePath('test-keys/12345_public.snk'), '--format', 'json'],
      { cwd: root },
    );
    expect(good.status).toBe(0);
    expect(JSON.parse(good.output).summary.files).toBe(3);
    const broken = await run(
      signgate,
      ['check', fixturePath('sdk/bin/wrong-turns/NoAttribute'), '--vendor', 'Contoso', '--key', fixturePath('test-keys/12345_public.snk')],
      { cwd: root },
    );
    expect(broken.status).toBe(1);
    expect(broken.output).toContain('SG301');
    expect(broken.output).not.toContain(NO_NODE);
  });

  test('signals: SIGTERM and SIGINT to the tool end signgate serve itself, gracefully, and leave no process behind', async () => {
    const signgate = join(root, 'tools', 'signgate');
    if (!existsSync(signgate)) {
      const install = await dotnet(['tool', 'install', 'Signgate.Tool', '--version', VERSION, '--add-source', feed, '--tool-path', join(root, 'tools')], root);
      expect(install.status, install.output).toBe(0);
    }
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const dataDir = mkdtempSync(join(root, `serve-${signal}-`));
      const child = spawn(signgate, ['serve', '--config', fixturePath('server/sandbox.json'), '--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1'], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('exit', (code, sig) => resolve({ code, signal: sig })),
      );
      const api = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          output += d.toString();
          const m = /API at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
          if (m) resolve(m[1]!);
        });
        void exited.then((how) => reject(new Error(`serve through the tool ended (${JSON.stringify(how)}) before listening:\n${output}`)));
      });
      expect((await fetch(`${api}/healthz`)).status).toBe(200);
      child.kill(signal);
      const how = await exited;
      // signgate's own graceful stop: it says so and exits 0; nothing answers on its port any more.
      expect(how, output).toEqual({ code: 0, signal: null });
      expect(output).toMatch(new RegExp(`${signal}`));
      await expect(fetch(`${api}/healthz`)).rejects.toThrow();
      // No signgate process is left running with this data folder.
      const left = await run('pgrep', ['-f', dataDir], { cwd: root });
      expect(left.output.trim(), `processes left: ${left.output}`).toBe('');
    }
  });

  test('a local tool manifest: dotnet signgate', async () => {
    const dir = join(root, 'repo');
    mkdirSync(dir);
    expect((await dotnet(['new', 'tool-manifest'], dir)).status).toBe(0);
    const install = await dotnet(['tool', 'install', 'Signgate.Tool', '--version', VERSION, '--add-source', feed], dir);
    expect(install.status, install.output).toBe(0);
    const r = await dotnet(['signgate', 'verify', fixturePath('sdk/bin/net48/SampleAddin.dll')], dir);
    expect(r.output).toContain('delay-signed');
  });
});
