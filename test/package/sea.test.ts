// One-file executables (scripts/build-sea.js): the Linux one runs the reference service (`serve`, on 127.0.0.1,
// with its /docs page) and, against it, check, sign and verify, with no Node on PATH, from a folder outside the
// repository; the Windows one is read with
// signgate's own PE reader: a PE32+ x64 console executable carrying the SEA blob as the NODE_SEA_BLOB resource,
// with the SEA fuse set, no stale signature and a correct checksum.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { computePeChecksum } from '../../src/pe/checksum.js';
import { getCertificateTable, parsePeImage, PeMagic } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { readPeResources } from '../helpers/pe-resources.js';
import { startServer } from '../helpers/server.js';
import { waitForOutput } from '../helpers/wait.js';
import { requireDotnet, run as runProcess, runDotnetTests } from '../sdk/dotnet.js';

const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
/** The first field of every SEA blob (src/node_sea.h, kMagic). */
const SEA_BLOB_MAGIC = 0x0143da20;
const KEY = fixturePath('test-keys/12345_public.snk');
const RT_RCDATA = 10;
const IMAGE_FILE_MACHINE_AMD64 = 0x8664;
const IMAGE_SUBSYSTEM_WINDOWS_CUI = 3;

const run = promisify(execFile);

let out: string;
let buildLog = '';
beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'signgate-sea-'));
  // The build fetches the Node packages with npm once (then ~/.cache/signgate/node) and injects ~100 MB binaries.
  const build = await run(process.execPath, [join(repoRoot, 'scripts', 'build-sea.js'), '--out', out], { cwd: repoRoot, maxBuffer: 16 << 20 }).catch(
    (e: { stdout: string; stderr: string }) => {
      throw new Error(`scripts/build-sea.js failed:\n${e.stdout}\n${e.stderr}`);
    },
  );
  buildLog = build.stdout;
  expect(buildLog).toContain('signgate-win-x64.exe');
});
afterAll(() => {
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('signgate-linux-x64', () => {
  /** An empty folder to run in, with nothing on PATH: no node, no npm, no repository around it. */
  const sandbox = () => {
    const cwd = mkdtempSync(join(tmpdir(), 'signgate-sea-run-'));
    const emptyPath = join(cwd, 'empty-bin');
    mkdirSync(emptyPath);
    return { cwd, env: { PATH: emptyPath, HOME: cwd } };
  };
  const runExe = (args: string[], env: Record<string, string> = {}) => {
    const box = sandbox();
    return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(join(out, 'signgate-linux-x64'), args, { cwd: box.cwd, env: { ...box.env, ...env } }, (error, stdout, stderr) =>
        resolve({ status: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
  };
  /** `signgate-linux-x64 serve` with the sandbox configuration on a free loopback port; resolves its API URL. */
  const serve = async (dataDir: string): Promise<{ child: ChildProcess; api: string; origin: string; tmp: string }> => {
    const box = sandbox();
    // Its own TMPDIR, to see that the page's files it writes there are gone when it stops.
    const child = spawn(
      join(out, 'signgate-linux-x64'),
      ['serve', '--config', fixturePath('server/sandbox.json'), '--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1'],
      { cwd: box.cwd, env: { ...box.env, TMPDIR: box.cwd } },
    );
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
    const listening = await waitForOutput('signgate-linux-x64 serve to say where it listens', () => output, /API at (http:\/\/127\.0\.0\.1:\d+\/[^\s,]+)/, {
      ended: exited,
    }).catch((error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    });
    const api = listening[1]!;
    return { child, api, origin: new URL(api).origin, tmp: box.cwd };
  };

  test('prints the package version', async () => {
    const r = await runExe(['--version']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version);
  });

  test('serve (with its /docs page) on loopback; check, sign against it, verify', async () => {
    const folder = fixturePath('addin');
    const check = await runExe(['check', '--key', KEY, '--vendor', 'Contoso', folder, '--json']);
    expect(check.status, check.stderr).toBe(0);
    const report = JSON.parse(check.stdout);
    expect(report.files.filter((f: { needsSigning: boolean }) => f.needsSigning)).toHaveLength(6);

    const work = mkdtempSync(join(tmpdir(), 'signgate-sea-sign-'));
    const signed = join(work, 'signed');
    const dataDir = join(work, 'service');
    const created = await runExe([
      'serve',
      'token',
      'create',
      '--config',
      fixturePath('server/sandbox.json'),
      '--data-dir',
      dataDir,
      '--org',
      'sandbox',
      '--user',
      'ci',
    ]);
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim();
    const service = await serve(dataDir);
    try {
      // The service's documentation page and its script come from the assets carried in the executable.
      expect((await fetch(`${service.origin}/docs/`)).status).toBe(200);
      const script = await fetch(`${service.origin}/docs/static/swagger-ui-bundle.js`);
      expect(script.status).toBe(200);
      expect((await script.arrayBuffer()).byteLength).toBe(
        readFileSync(join(repoRoot, 'node_modules', '@fastify', 'swagger-ui', 'static', 'swagger-ui-bundle.js')).length,
      );
      const sign = await runExe(
        [
          'sign',
          '--vendor',
          'Contoso',
          '--key',
          KEY,
          '--base-url',
          service.api,
          '--destination-path',
          signed,
          '--poll-interval',
          '50',
          folder,
          '--root',
          folder,
          '--delete-afterwards',
          '--json',
        ],
        {
          SIGNGATE_ACCESS_TOKEN: token,
          SIGNGATE_CACHE_DIR: join(work, 'cache'),
        },
      );
      expect(sign.status, sign.stderr).toBe(0);
      expect(sign.stdout + sign.stderr).not.toContain(token);
      expect(JSON.parse(sign.stdout).summary).toMatchObject({ uploaded: 6, signed: 6, verified: 6, failed: 0 });
    } finally {
      const exited = service.child.exitCode === null ? once(service.child, 'exit') : Promise.resolve();
      service.child.kill('SIGTERM');
      await exited;
    }
    expect(readdirSync(service.tmp).filter((n) => n.startsWith('signgate-docs-'))).toEqual([]);

    const verify = await runExe(['verify', '--key', KEY, signed, '--json']);
    expect(verify.status, verify.stderr).toBe(0);
    expect(JSON.parse(verify.stdout)).toHaveLength(6);
    // The executable's verdict, checked with the library: every file it signed verifies with option 12345's key.
    const key = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll', 'AddinTool.exe']) {
      expect(verifyStrongName(readModule(readFileSync(join(signed, name))), { expectedKey: key }).valid, name).toBe(true);
    }
  });

  test('a delay-signed file fails verify with exit 1, as with the Node command', async () => {
    const r = await runExe(['verify', fixturePath('addin/SampleAddin.dll')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('delay-signed');
  });
});

/** The SEA blob's flags (src/node_sea.h, SeaFlags), the field after the blob's magic. */
const SEA_FLAGS = { disableExperimentalWarning: 1 << 0, useSnapshot: 1 << 1, useCodeCache: 1 << 2, includeAssets: 1 << 3 };
/** The flags of every place in `bytes` where a SEA blob may start (the magic also occurs in Node's own code). */
const blobFlagsIn = (bytes: Buffer): number[] => {
  const magic = Buffer.alloc(4);
  magic.writeUInt32LE(SEA_BLOB_MAGIC);
  const flags: number[] = [];
  for (let at = bytes.indexOf(magic); at >= 0; at = bytes.indexOf(magic, at + 1)) flags.push(bytes.readUInt32LE(at + 4));
  return flags;
};

describe('signgate-linux-x64 starts from a V8 start-up snapshot and decides at run time what depends on where it runs', () => {
  const exe = () => join(out, 'signgate-linux-x64');
  const key = fixturePath('test-keys/12345_public.snk');
  type Run = { status: number | null; stdout: string; stderr: string };
  const runIn = (file: string, args: string[], cwd: string, env: Record<string, string>) =>
    new Promise<Run>((resolve) => {
      // Nothing of the test runner's environment: what the output depends on is set here.
      execFile(file, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd, ...env } }, (error, stdout, stderr) =>
        resolve({ status: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
  /** The same command through the executable and through the npm route (node bin/signgate.js), in `cwd`. */
  const both = async (args: string[], cwd: string, env: Record<string, string> = {}) => {
    const [sea, npm] = await Promise.all([runIn(exe(), args, cwd, env), runIn(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...args], cwd, env)]);
    expect(sea.stderr).toBe(npm.stderr);
    return { sea, npm };
  };

  test('the blob says snapshot (no code cache: the snapshot holds the compiled code); the Windows one says neither', () => {
    const linux = blobFlagsIn(readFileSync(exe()));
    expect(linux).toContain(SEA_FLAGS.disableExperimentalWarning | SEA_FLAGS.useSnapshot | SEA_FLAGS.includeAssets);
    expect(linux.filter((f) => f & SEA_FLAGS.useCodeCache && f < 16)).toEqual([]);
    expect(blobFlagsIn(readFileSync(join(out, 'signgate-win-x64.exe')))).toContain(SEA_FLAGS.disableExperimentalWarning | SEA_FLAGS.includeAssets);
  });

  test("check --json gives the npm route's report, with paths relative to the folder it runs in", async () => {
    for (const [cwd, input] of [
      [fixturePath('.'), 'addin'],
      [fixturePath('addin'), '.'],
    ] as const) {
      const { sea, npm } = await both(['check', input, '--vendor', 'Contoso', '--key', key, '--json'], cwd);
      expect(sea.status, sea.stderr).toBe(0);
      expect(sea.stdout).toBe(npm.stdout);
      const paths = JSON.parse(sea.stdout).files.map((f: { path: string }) => f.path);
      expect(paths).toContain(input === '.' ? 'SampleAddin.dll' : 'addin/SampleAddin.dll');
    }
  });

  test('colours follow FORCE_COLOR and NO_COLOR of each run, as the npm route does', async () => {
    const args = ['check', 'addin', '--vendor', 'Contoso', '--key', key];
    const outputs = new Map<string, string>();
    for (const env of [{ FORCE_COLOR: '1' }, { FORCE_COLOR: '0' }, { FORCE_COLOR: '1', NO_COLOR: '1' }, {}]) {
      const { sea, npm } = await both(args, fixturePath('.'), env);
      expect(sea.status, sea.stderr).toBe(0);
      expect(sea.stdout, JSON.stringify(env)).toBe(npm.stdout);
      outputs.set(JSON.stringify(env), sea.stdout);
    }
    expect(outputs.get('{"FORCE_COLOR":"1"}')).toContain('\u001b[32mpass\u001b[39m');
    for (const plain of ['{"FORCE_COLOR":"0"}', '{"FORCE_COLOR":"1","NO_COLOR":"1"}', '{}']) {
      expect(outputs.get(plain), plain).not.toContain('\u001b[');
      expect(outputs.get(plain)).toBe(outputs.get('{"FORCE_COLOR":"1"}')!.replace(/\u001b\[\d+m/g, ''));
    }
  });

  test('the environment is read at run time: SIGNGATE_BASE_URL set or not, the same executable answers differently', async () => {
    const args = ['check', 'addin/SampleAddin.dll', '--vendor', 'Contoso', '--key', key];
    const offline = await both(args, fixturePath('.'));
    expect(offline.sea.status).toBe(0);
    expect(offline.sea.stderr).not.toContain('SIGNGATE_BASE_URL');
    // Set, the variable is said to be unused (check goes online only when asked); asked, check goes to it.
    const unused = await both(args, fixturePath('.'), { SIGNGATE_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(unused.sea.status).toBe(0);
    expect(unused.sea.stderr).toContain('note: check ran offline: SIGNGATE_BASE_URL is the service for sign');
    const online = await both([...args, '--online'], fixturePath('.'), { SIGNGATE_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(online.sea.status).toBe(2);
    expect(online.sea.stderr).toContain('check goes online (--online, http://127.0.0.1:9/v1) but no access token is given');
  });

  test("check --threads 2 over a larger set: the same report as the npm route (the executable runs the pool's work in its own thread)", async () => {
    const { sea, npm } = await both(['check', 'assemblies', 'addin', '--vendor', 'Contoso', '--key', key, '--json', '--threads', '2'], fixturePath('.'));
    expect(sea.stdout).toBe(npm.stdout);
    expect(JSON.parse(sea.stdout).files.length).toBeGreaterThan(20);
  });
});

/** The post-build step of docs/executables.md (its ```xml block), as a .NET developer pastes it into the add-in's project. */
function readmePostBuildStep(): string {
  const page = readFileSync(join(repoRoot, 'docs', 'executables.md'), 'utf8');
  const m = /```xml\n([\s\S]*?)```/.exec(page);
  if (!m) throw new Error('docs/executables.md: no ```xml block (the post-build step)');
  return m[1]!;
}

describe.runIf(runDotnetTests)('the post-build step of docs/executables.md in a real dotnet build, with the Linux executable', () => {
  test('a Release build checks the add-in and leaves it signed in bin/Release/net48/signed', async () => {
    requireDotnet();
    const server = await startServer();
    try {
      const dir = join(mkdtempSync(join(tmpdir(), 'signgate-sea-msbuild-')), 'ExeAddin');
      mkdirSync(join(dir, 'vendor'), { recursive: true });
      // A delay-signed net48 add-in against the vendor API, and nothing of signgate but the pasted step.
      const properties = { TargetFramework: 'net48', SignAssembly: 'true', DelaySign: 'true', AssemblyOriginatorKeyFile: '12345_public.snk' };
      const project = [
        '<Project Sdk="Microsoft.NET.Sdk">',
        `<PropertyGroup>${Object.entries(properties)
          .map(([k, v]) => `<${k}>${v}</${k}>`)
          .join('')}</PropertyGroup>`,
        '<ItemGroup><PackageReference Include="Microsoft.NETFramework.ReferenceAssemblies" Version="1.0.3" PrivateAssets="all" />',
        '<Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" /></ItemGroup>',
        readmePostBuildStep(),
        '</Project>',
      ];
      writeFileSync(join(dir, 'ExeAddin.csproj'), project.join('\n'));
      writeFileSync(
        join(dir, 'ExeAddin.cs'),
        '[assembly: Contoso.ContosoSignedAssembly(true)]\nnamespace ExeAddin { public class Entry : Contoso.AddinBase { public override string Name => "exe"; } }\n',
      );
      copyFileSync(fixturePath('vendor/Contoso.AddinApi.dll'), join(dir, 'vendor', 'Contoso.AddinApi.dll'));
      copyFileSync(KEY, join(dir, '12345_public.snk'));
      const token = server.token();
      // The step's two properties point at this machine: the Linux executable and the service on loopback.
      const r = await runProcess(
        'dotnet',
        [
          'build',
          '-c',
          'Release',
          '-nologo',
          '-tl:off',
          '--disable-build-servers',
          `-p:SigngateExe=${join(out, 'signgate-linux-x64')}`,
          `-p:SigningServiceUrl=${server.baseUrl}`,
        ],
        {
          cwd: dir,
          env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(dir, 'cache') },
        },
      );
      expect(r.status, r.output).toBe(0);
      expect(r.output).toContain('1 needs signing (1 pass, 0 fail)');
      expect(r.output).not.toContain(token);
      const signed = join(dir, 'bin', 'Release', 'net48', 'signed', 'ExeAddin.dll');
      const key = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
      expect(verifyStrongName(readModule(readFileSync(signed)), { expectedKey: key }).valid).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe("signgate-win-x64.exe, read with signgate's PE reader", () => {
  test('a PE32+ x64 console executable with the SEA blob as the NODE_SEA_BLOB resource and the fuse set', () => {
    const bytes = readFileSync(join(out, 'signgate-win-x64.exe'));
    const image = parsePeImage(bytes);
    expect(image.magic).toBe(PeMagic.PE32Plus);
    expect(image.machine).toBe(IMAGE_FILE_MACHINE_AMD64);
    expect(image.subsystem).toBe(IMAGE_SUBSYSTEM_WINDOWS_CUI);
    expect(image.characteristics & 0x0002).toBe(0x0002); // an executable image
    expect(image.characteristics & 0x2000).toBe(0); // not a DLL
    // Node's own signature no longer covers these bytes: it was removed, not left stale; the checksum is current.
    expect(getCertificateTable(image)).toBeNull();
    expect(image.checkSum).toBe(computePeChecksum(bytes, image.checkSumFileOffset));

    const blobs = readPeResources(image).filter((r) => r.type === RT_RCDATA && r.name === 'NODE_SEA_BLOB');
    expect(blobs).toHaveLength(1);
    const blob = bytes.subarray(blobs[0]!.fileOffset, blobs[0]!.fileOffset + blobs[0]!.size);
    expect(blob.readUInt32LE(0)).toBe(SEA_BLOB_MAGIC);
    // The bundled CLI is in the blob as source (no platform-specific code cache in a blob made on Linux).
    expect(blob.includes(Buffer.from('Pre-flight, signing and verification of strong-named .NET add-in assemblies'))).toBe(true);
    expect(bytes.includes(Buffer.from(`${SEA_FUSE}:1`))).toBe(true);
    expect(bytes.includes(Buffer.from(`${SEA_FUSE}:0`))).toBe(false);
  });

  test('the plain node.exe it was made from has no such resource (the check above is not vacuous)', () => {
    const plain = /^win-x64: Node [\d.]+ from (.+)$/m.exec(buildLog)![1]!;
    const image = parsePeImage(readFileSync(plain));
    expect(image.magic).toBe(PeMagic.PE32Plus);
    expect(getCertificateTable(image)).not.toBeNull();
    expect(readPeResources(image).length).toBeGreaterThan(0);
    expect(readPeResources(image).some((r) => r.name === 'NODE_SEA_BLOB')).toBe(false);
  });
});
