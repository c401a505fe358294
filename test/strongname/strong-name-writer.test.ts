// strongNameAssembly: what it writes is read back by System.Reflection.Metadata (tools/srm-oracle --compare: only the
// intended changes), verified by Mono's sn -vf and by our verifier, and run: Mono loads a strong-named add-in with its
// fixed dependencies by their full names (and refuses the same add-in beside the unfixed ones).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { MetadataEditor } from '../../src/metadata/metadata-writer.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { identityPublicKey, STRONG_NAME_SECTION, strongNameAssembly, type StrongNameAssemblyOptions } from '../../src/strongname/strong-name-writer.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture, hasMono, repoRoot, runMono, scratchFolder } from '../helpers/fixtures.js';
import { buildSrmOracle, srmCompare, srmDescribe } from '../helpers/srm-oracle.js';
import { buildOnce, requireDotnet, runDotnetTests } from '../sdk/dotnet.js';
import { hasMcsAndMono, mcsBuild, withMachine, withOverlay, withUncountedRelocHeader } from '../helpers/pe-shapes.js';
import { csc } from '../helpers/roslyn.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk'));
const pair2048 = parseStrongNameKeyFile(fixture('test-keys/67890_keypair.snk'));
const publicOnly = parseStrongNameKeyFile(fixture('test-keys/12345_public.snk'));
const pair12345 = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const hasMcs = hasMcsAndMono;

const { dir, save } = scratchFolder('strong-name-writer-');
const errorCode = (f: () => unknown): string => {
  try {
    f();
  } catch (error) {
    if (isSignGateError(error)) return error.code;
    throw error;
  }
  return 'no error';
};

/** Sources of a small add-in and its two unsigned dependencies, one of them a friend of the other. */
const SOURCES = {
  lib: `using System.Runtime.CompilerServices;
[assembly: InternalsVisibleTo("Lib.Friend")]
[assembly: InternalsVisibleTo("Lib.Tests")]
[assembly: System.Reflection.AssemblyVersion("2.1.0.0")]
namespace Lib { public static class Greeter { public static string Hello(string who) { return "hello " + who; } internal static int Secret() { return 41; } } }`,
  friend: `[assembly: System.Reflection.AssemblyVersion("1.0.0.0")]
namespace LibFriend { public static class Use { public static int Get() { return Lib.Greeter.Secret() + 1; } } }`,
  addin: `[assembly: System.Reflection.AssemblyVersion("3.0.0.0")]
public static class Program {
  public static int Main() {
    System.Console.WriteLine(Lib.Greeter.Hello("add-in") + " " + LibFriend.Use.Get());
    System.Console.WriteLine("loaded " + typeof(Lib.Greeter).Assembly.FullName);
    System.Console.WriteLine("loaded " + typeof(LibFriend.Use).Assembly.FullName);
    foreach (var r in typeof(Program).Assembly.GetReferencedAssemblies())
      if (r.Name != "mscorlib") System.Console.WriteLine("wanted " + r.FullName);
    return 0;
  }
}`,
};

/**
 * Builds the three with Roslyn: Lib and Lib.Friend unsigned, Addin.exe strong-named with `addinKey` (Roslyn warns,
 * CS8002, and writes references without a token, as every real build against an unsigned package does).
 */
function buildAddin(folder: string, addinKey: string): { lib: string; friend: string; addin: string } {
  mkdirSync(folder, { recursive: true });
  for (const [name, source] of Object.entries(SOURCES)) writeFileSync(join(folder, `${name}.cs`), source);
  const lib = join(folder, 'Lib.dll');
  const friend = join(folder, 'Lib.Friend.dll');
  const addin = join(folder, 'Addin.exe');
  csc(['-target:library', `-out:${lib}`, join(folder, 'lib.cs')]);
  csc(['-target:library', `-r:${lib}`, `-out:${friend}`, join(folder, 'friend.cs')]);
  csc(['-target:exe', '-debug:portable', `-keyfile:${addinKey}`, `-r:${lib}`, `-r:${friend}`, `-out:${addin}`, join(folder, 'addin.cs')]);
  return { lib, friend, addin };
}

let addinBuild: ReturnType<typeof buildAddin> | undefined;
/** The add-in and its dependencies, Addin.exe strong-named with other_keypair.snk: built once for the tests that read them. */
function sharedAddin(): ReturnType<typeof buildAddin> {
  if (!addinBuild) {
    const keyFile = join(dir, 'other_keypair.snk');
    writeFileSync(keyFile, fixture('test-keys/other_keypair.snk'));
    addinBuild = buildAddin(join(dir, 'addin-src'), keyFile);
  }
  return addinBuild;
}

describe('strongNameAssembly on an unsigned assembly', () => {
  const input = fixture('assemblies/unsigned.dll');

  test('a key pair gives a valid SHA-1 strong name; identity otherwise unchanged; the metadata stays where it was, .text grows by one file-alignment unit', () => {
    const result = strongNameAssembly(input, { key: pair });
    expect(result.outcome).toBe('strong-named');
    expect(result.before).toBe('unsigned');
    expect(result.publicKeyToken).toBe(publicKeyToken(pair.publicKey.blob));
    const module = readModule(result.bytes);
    const check = verifyStrongName(module, { expectedKey: pair.publicKey });
    expect(check.valid, check.reason ?? '').toBe(true);
    expect(module.assembly).toMatchObject({ name: 'unsigned', version: { major: 1, minor: 2, build: 3, revision: 4 }, culture: '' });
    expect(module.assembly!.flags & 1).toBe(1);
    // 4 bytes of padding after .text's data: the 300 bytes it grows by (key blob, slot) take one more 512-byte unit.
    const before = parsePeImage(input);
    const after = parsePeImage(result.bytes);
    expect(after.sections.map((s) => s.name)).toEqual(before.sections.map((s) => s.name));
    expect(result.bytes.length).toBe(input.length + 512);
    expect(after.sections.map((s) => s.virtualAddress)).toEqual(before.sections.map((s) => s.virtualAddress));
    expect(module.corHeader.metadata.rva).toBe(readModule(input).corHeader.metadata.rva);
    expect(check.status.slot!.size).toBe(128);
  });

  test('deterministic: the same input and key give the same bytes; the result is left unchanged by a second run', () => {
    const a = strongNameAssembly(input, { key: pair }).bytes;
    const b = strongNameAssembly(input, { key: pair }).bytes;
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const again = strongNameAssembly(a, { key: pair });
    expect(again.outcome).toBe('unchanged');
    expect(Buffer.from(again.bytes).equals(Buffer.from(a))).toBe(true);
  });

  test('a 2048-bit key gets a 256-byte slot', () => {
    const module = readModule(strongNameAssembly(input, { key: pair2048 }).bytes);
    const status = classifyStrongName(module);
    expect(status).toMatchObject({ state: 'signed', keyBits: 2048, signatureValid: true });
    expect(status.slot!.size).toBe(256);
  });

  test('--hash sha256 puts SHA-256 in the identity key blob (another token) and signs with it', () => {
    const result = strongNameAssembly(input, { key: pair, hash: 'sha256' });
    const status = classifyStrongName(readModule(result.bytes));
    expect(status).toMatchObject({ state: 'signed', hashAlgorithm: 'sha256', signatureValid: true });
    expect(result.publicKeyToken).toBe(publicKeyToken(identityPublicKey(pair, 'sha256')));
    expect(result.publicKeyToken).not.toBe(publicKeyToken(pair.publicKey.blob));
  });

  test('delay-signing needs only the public key; the vendor signs the result with the pair', () => {
    const result = strongNameAssembly(input, { key: publicOnly, delaySign: true });
    const module = readModule(result.bytes);
    expect(classifyStrongName(module).state).toBe('delay-signed');
    expect(result.publicKeyToken).toBe(publicKeyToken(publicOnly.publicKey.blob));
    const signed = signAssembly(module, pair12345);
    expect(verifyStrongName(readModule(signed), { expectedKey: pair12345.publicKey }).valid).toBe(true);
  });

  test.skipIf(!hasMono)('Mono sn -vf accepts the signed output (SHA-1, 1024 and 2048 bits) and the one the vendor signs from the delay-signed output', () => {
    const files = [
      save('sn/sha1-1024.dll', strongNameAssembly(input, { key: pair }).bytes),
      save('sn/sha1-2048.dll', strongNameAssembly(input, { key: pair2048 }).bytes),
      save('sn/vendor.dll', signAssembly(readModule(strongNameAssembly(input, { key: publicOnly, delaySign: true }).bytes), pair12345)),
    ];
    for (const file of files) {
      const r = runMono('sn', ['-q', '-vf', file]);
      expect(r.status, `${file}: ${r.stdout}${r.stderr}`).toBe(0);
    }
    // The control: sn refuses a copy with one byte of the signature changed.
    const broken = readFileSync(files[0]!);
    const slot = classifyStrongName(readModule(broken)).slot!;
    broken[slot.fileOffset + 5]! ^= 1;
    expect(runMono('sn', ['-q', '-vf', save('sn/broken.dll', broken)]).status).not.toBe(0);
  });

  test.skipIf(!hasMcs)('a PE32+ image', () => {
    const folder = join(dir, 'pe32plus');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'x.cs'), 'public class X { public static int F() { return 1; } }');
    execFileSync('mcs', ['-nologo', '-target:library', '-platform:x64', `-out:${join(folder, 'X.dll')}`, join(folder, 'x.cs')]);
    const result = strongNameAssembly(new Uint8Array(readFileSync(join(folder, 'X.dll'))), { key: pair });
    expect(parsePeImage(result.bytes).isPe32Plus).toBe(true);
    expect(verifyStrongName(readModule(result.bytes)).valid).toBe(true);
    if (hasMono) expect(runMono('sn', ['-q', '-vf', save('pe32plus/X.fixed.dll', result.bytes)]).status).toBe(0);
  });

  test('a delay-signed assembly of another key with nothing to change is left as it is', () => {
    const input = fixture('assemblies/pe32plus-delay.dll');
    const result = strongNameAssembly(input, { key: pair });
    expect(result).toMatchObject({ outcome: 'unchanged', before: 'delay-signed' });
    expect(result.bytes).toBe(input);
  });

  test('a delay-signed assembly of this key pair is signed in place: nothing moves', () => {
    const input = fixture('assemblies/delay-1024.dll');
    const result = strongNameAssembly(input, { key: pair12345 });
    expect(result.outcome).toBe('signed');
    expect(result.bytes.length).toBe(input.length);
    expect(verifyStrongName(readModule(result.bytes), { expectedKey: pair12345.publicKey }).valid).toBe(true);
  });

  test('signed by another publisher: left alone when nothing changes; refused when a reference must change, unless forced', () => {
    const input = fixture('assemblies/signed-other-key.dll');
    expect(strongNameAssembly(input, { key: pair12345 }).outcome).toBe('unchanged');
    const module = readModule(input);
    const refs = module.assemblyReferences.filter((r) => r.name !== 'mscorlib');
    const identities = new Map([[(refs[0] ?? module.assemblyReferences[0]!).name, identityPublicKey(pair12345)]]);
    expect(errorCode(() => strongNameAssembly(input, { key: pair12345, identities }))).toBe('SG_ERR_FIX_OTHER_PUBLISHER');
    const forced = strongNameAssembly(input, { key: pair12345, identities, force: true });
    expect(forced.outcome).toBe('re-signed');
    expect(verifyStrongName(readModule(forced.bytes), { expectedKey: pair12345.publicKey }).valid).toBe(true);
  });
});

describe('bad input: a clear error and nothing written', () => {
  test('a native image, a netmodule, a reference assembly', () => {
    const native = Uint8Array.from(fixture('assemblies/unsigned.dll'));
    const image = parsePeImage(native);
    native.fill(0, image.dataDirectories[14]!.entryFileOffset, image.dataDirectories[14]!.entryFileOffset + 8);
    expect(errorCode(() => strongNameAssembly(native, { key: pair }))).toBe('SG_ERR_FIX_NOT_MANAGED');
    expect(errorCode(() => strongNameAssembly(fixture('assemblies/part.netmodule'), { key: pair }))).toBe('SG_ERR_FIX_NETMODULE');
    if (!hasMcs) return;
    const folder = join(dir, 'reference');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'r.cs'), '[assembly: System.Runtime.CompilerServices.ReferenceAssembly]\npublic class R { }');
    execFileSync('mcs', ['-nologo', '-target:library', `-out:${join(folder, 'R.dll')}`, join(folder, 'r.cs')]);
    expect(errorCode(() => strongNameAssembly(new Uint8Array(readFileSync(join(folder, 'R.dll'))), { key: pair }))).toBe('SG_ERR_FIX_REFERENCE_ASSEMBLY');
  });

  test('a public key alone cannot make a full signature', () => {
    expect(errorCode(() => strongNameAssembly(fixture('assemblies/unsigned.dll'), { key: publicOnly }))).toBe('SG_ERR_KEY_NOT_PAIR');
  });

  test('every corrupt fixture ends in a typed error, never a crash', () => {
    const names = [
      'absurd-row-count.dll',
      'bad-compressed-length.dll',
      'duplicate-stream.dll',
      'no-table-stream.dll',
      'random-bytes.dll',
      'zero-byte.dll',
      'section-beyond-eof.dll',
      'public-key-blob-index-outside.dll',
      'assembly-name-index-outside.dll',
    ];
    for (const name of names) {
      const code = errorCode(() => strongNameAssembly(fixture(`corrupt/${name}`), { key: pair }));
      expect(code, name).toMatch(/^SG_ERR_/);
    }
  });
});

describe('the metadata writer', () => {
  test('with no change it writes the metadata it read, byte for byte', () => {
    for (const name of ['unsigned.dll', 'signed-2048.dll', 'pe32plus-signed.dll', 'app-signed.exe']) {
      const module = readModule(fixture(`assemblies/${name}`));
      const written = new MetadataEditor(module).build();
      const original = module.image.bytes.subarray(module.root.fileOffset, module.root.fileOffset + module.root.size);
      expect(Buffer.from(written.bytes).equals(Buffer.from(original)), name).toBe(true);
      expect(written.relaidTables).toBe(false);
    }
  });
});

describe.skipIf(!runDotnetTests)('System.Reflection.Metadata reads only the intended changes', () => {
  beforeAll(async () => {
    requireDotnet();
    await buildSrmOracle();
  });

  test('unsigned fixtures, signed with 1024- and 2048-bit keys, SHA-1 and SHA-256, and delay-signed', async () => {
    const original = join(dir, 'srm', 'unsigned.dll');
    save('srm/unsigned.dll', fixture('assemblies/unsigned.dll'));
    const cases: [string, StrongNameAssemblyOptions][] = [
      ['sha1.dll', { key: pair }],
      ['sha256.dll', { key: pair, hash: 'sha256' }],
      ['k2048.dll', { key: pair2048 }],
      ['delay.dll', { key: publicOnly, delaySign: true }],
    ];
    const pairs = cases.map(
      ([name, options]) => [original, save(`srm/${name}`, strongNameAssembly(fixture('assemblies/unsigned.dll'), options).bytes)] as const,
    );
    const results = await srmCompare(pairs);
    for (const [i, r] of results.entries()) {
      expect(r.error, r.rewritten).toBeNull();
      expect(r.differences, r.rewritten).toEqual([]);
      expect(r.changes, r.rewritten).toContain('Assembly public key');
      const token = publicKeyToken(identityPublicKey(cases[i]![1].key, cases[i]![1].hash));
      expect(r.identity).toBe(`unsigned, Version=1.2.3.4, Culture=neutral, PublicKeyToken=${token}`);
    }
  });

  test('the blob index widens past 64 KiB: every table is laid out anew and still reads the same', async () => {
    if (!hasMcs) throw new Error('mcs is needed to build the assembly whose #Blob heap is just under 64 KiB');
    const folder = join(dir, 'wide');
    mkdirSync(folder, { recursive: true });
    // Attribute values of n characters in all put about n bytes into #Blob: find n that ends the heap just under 64 KiB.
    const build = (n: number): Uint8Array => {
      const values = Array.from({ length: Math.ceil(n / 1000) }, (_, i) => 'x'.repeat(Math.min(1000, n - i * 1000)));
      const attributes = values.map((v, i) => `[assembly: System.Reflection.AssemblyMetadata("k${i}", "${v}")]`).join('\n');
      writeFileSync(join(folder, 'w.cs'), `${attributes}\npublic class W { public static int F(int a) { return a * 2; } }`);
      execFileSync('mcs', ['-nologo', '-target:library', `-out:${join(folder, 'Wide.dll')}`, join(folder, 'w.cs')]);
      return new Uint8Array(readFileSync(join(folder, 'Wide.dll')));
    };
    const blobSize = (bytes: Uint8Array) => readModule(bytes).root.blob!.size;
    let n = 60_000;
    let bytes = build(n);
    for (let i = 0; i < 4 && (blobSize(bytes) >= 0x10000 || blobSize(bytes) <= 0x10000 - 160); i++) {
      n += 0x10000 - 80 - blobSize(bytes);
      bytes = build(n);
    }
    expect(blobSize(bytes)).toBeLessThan(0x10000);
    expect(blobSize(bytes)).toBeGreaterThan(0x10000 - 160);
    const result = strongNameAssembly(bytes, { key: pair });
    expect(readModule(result.bytes).root.blob!.size).toBeGreaterThanOrEqual(0x10000);
    expect(verifyStrongName(readModule(result.bytes)).valid).toBe(true);
    const [r] = await srmCompare([[join(folder, 'Wide.dll'), save('wide/Wide.fixed.dll', result.bytes)]]);
    expect(r!.error).toBeNull();
    expect(r!.relaid).toBe(true);
    expect(r!.differences).toEqual([]);
  });

  test('an add-in and its dependencies: references get tokens, a friend gets its key, the add-in keeps its identity', async () => {
    const built = sharedAddin();
    const identities = new Map([
      ['Lib', identityPublicKey(pair)],
      ['Lib.Friend', identityPublicKey(pair)],
    ]);
    const fixed = Object.fromEntries(
      Object.entries(built).map(([k, path]) => [k, strongNameAssembly(new Uint8Array(readFileSync(path)), { key: pair, identities })]),
    );
    expect(fixed.lib!.outcome).toBe('strong-named');
    expect(fixed.friend!.outcome).toBe('strong-named');
    expect(fixed.addin!.outcome).toBe('references-updated');
    expect(fixed.lib!.changes.join('\n')).toContain('InternalsVisibleTo("Lib.Friend") gets the public key');
    expect(fixed.lib!.notes.map((n) => n.kind)).toEqual(['friend-without-key']);
    expect(fixed.lib!.notes[0]!.message).toContain('Lib.Tests');
    const pairs = Object.entries(fixed).map(([k, r]) => [built[k as keyof typeof built], save(`addin-srm/out/${k}.dll`, r.bytes)] as const);
    const results = await srmCompare(pairs);
    const token = publicKeyToken(pair.publicKey.blob);
    for (const r of results) {
      expect(r.error, r.original).toBeNull();
      expect(r.differences, r.original).toEqual([]);
    }
    expect(results[1]!.references).toContain(`Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=${token}`);
    expect(results[2]!.references).toEqual(
      expect.arrayContaining([
        `Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=${token}`,
        `Lib.Friend, Version=1.0.0.0, Culture=neutral, PublicKeyToken=${token}`,
      ]),
    );
    expect(results[2]!.identity).toBe(`Addin, Version=3.0.0.0, Culture=neutral, PublicKeyToken=${token}`);
    expect(results[0]!.changes!.some((c) => c.startsWith(`InternalsVisibleTo Lib.Friend, PublicKey=${Buffer.from(pair.publicKey.blob).toString('hex')}`))).toBe(
      true,
    );
  });
});

describe.skipIf(!runDotnetTests || !hasMcs)('the fixed assemblies run', () => {
  test('Mono and .NET run the strong-named add-in with its fixed dependencies, internals included, bound by their exact full names; not the unfixed ones', async () => {
    const folder = join(dir, 'addin-run');
    const built = sharedAddin();
    const identities = new Map([
      ['lib', identityPublicKey(pair)],
      ['lib.friend', identityPublicKey(pair)],
    ]);
    const out = join(folder, 'fixed');
    const unfixed = join(folder, 'unfixed');
    mkdirSync(out, { recursive: true });
    mkdirSync(unfixed, { recursive: true });
    for (const [name, path] of [
      ['Lib.dll', built.lib],
      ['Lib.Friend.dll', built.friend],
      ['Addin.exe', built.addin],
    ] as const) {
      const result = strongNameAssembly(new Uint8Array(readFileSync(path)), { key: pair, identities });
      // The metadata is written where it was (the add-in's signature slot moves behind it): no section is added.
      expect(
        parsePeImage(result.bytes).sections.map((s) => s.name),
        name,
      ).toEqual(parsePeImage(readFileSync(path)).sections.map((s) => s.name));
      writeFileSync(join(out, name), result.bytes);
      if (name === 'Addin.exe') writeFileSync(join(unfixed, name), result.bytes);
      else copyFileSync(path, join(unfixed, name));
    }
    const token = publicKeyToken(pair.publicKey.blob);
    // Mono binds by simple name (it loads a dependency whatever its token); .NET Framework's binder wants the exact
    // full name. The add-in prints the full names it references and those that were loaded: they must be equal.
    const lines = (folder: string) => {
      const r = spawnSync('mono', [join(folder, 'Addin.exe')], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      const out = r.stdout.trimEnd().split('\n');
      return {
        first: out[0],
        loaded: out
          .filter((l) => l.startsWith('loaded '))
          .map((l) => l.slice(7))
          .sort(),
        wanted: out
          .filter((l) => l.startsWith('wanted '))
          .map((l) => l.slice(7))
          .sort(),
      };
    };
    const ok = lines(out);
    expect(ok.first).toBe('hello add-in 42');
    expect(ok.loaded).toEqual([
      `Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=${token}`,
      `Lib.Friend, Version=1.0.0.0, Culture=neutral, PublicKeyToken=${token}`,
    ]);
    expect(ok.wanted).toEqual(ok.loaded);
    const control = lines(unfixed);
    expect(control.loaded).toEqual([
      'Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=null',
      'Lib.Friend, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null',
    ]);
    expect(control.wanted).not.toEqual(control.loaded);

    // .NET (tools/fix-host, net8.0) binds as .NET Framework does, by exact full name, and runs the add-in.
    const build = await buildOnce(join(repoRoot, 'tools', 'fix-host'));
    expect(build.status, build.output).toBe(0);
    const host = (folder: string) =>
      spawnSync('dotnet', [join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'), folder, 'Addin.exe'], {
        encoding: 'utf8',
        env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
      });
    const ran = host(out);
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toContain(`bound Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=${token}`);
    expect(ran.stdout).toContain(`bound Lib.Friend, Version=1.0.0.0, Culture=neutral, PublicKeyToken=${token}`);
    expect(ran.stdout).toContain('hello add-in 42');
    const refused = host(unfixed);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`Could not load file or assembly 'Lib, Version=2.1.0.0, Culture=neutral, PublicKeyToken=${token}'`);
  });
});

describe.skipIf(!runDotnetTests || !hasMcs)('the shapes of old x64 and IA64 compilers', () => {
  // Mono.Cecil's hello.x64.exe, hello.ia64.exe and hello.textonly.x64.exe, rebuilt from mcs output: an empty .reloc
  // header right after the table that NumberOfSections does not count, exactly where the new header goes; and 12
  // bytes after the last section.
  test('each is strong-named, verified by us, by sn -vf and by SRM (only the intended changes), and runs on Mono (the x64 ones on .NET too)', async () => {
    const x64 = withUncountedRelocHeader(mcsBuild('x64'));
    const shapes = {
      'hello.x64.exe': x64,
      'hello.ia64.exe': withMachine(x64, 0x200),
      'hello.textonly.x64.exe': withOverlay(x64, Uint8Array.from([0, 0x20, 0, 0, 0x0c, 0, 0, 0, 0x40, 0xa3, 0, 0])),
      'hello.x86.exe': withUncountedRelocHeader(mcsBuild('x86')),
    };
    const x64Image = parsePeImage(x64);
    expect(x64Image.sectionTableFileOffset + x64Image.numberOfSections * 40).toBe(0x1d8);
    expect(Buffer.from(x64.subarray(0x1d8, 0x1de)).toString('latin1')).toBe('.reloc');
    const pairs: [string, string][] = [];
    for (const [name, bytes] of Object.entries(shapes)) {
      const result = strongNameAssembly(bytes, { key: pair });
      expect(result.outcome, name).toBe('strong-named');
      expect(verifyStrongName(readModule(result.bytes), { expectedKey: pair.publicKey }).valid, name).toBe(true);
      const image = parsePeImage(result.bytes);
      expect(image.machine).toBe(parsePeImage(bytes).machine);
      // The metadata stays in .text (which grows in the file when its padding has no room); the overlay stays last.
      expect(result.notes).toEqual([]);
      expect(
        image.sections.map((s) => s.name),
        name,
      ).toEqual(parsePeImage(bytes).sections.map((s) => s.name));
      expect([bytes.length, bytes.length + 512], name).toContain(result.bytes.length);
      if (name === 'hello.textonly.x64.exe') expect(Buffer.from(result.bytes.subarray(-12)).equals(Buffer.from(bytes.subarray(-12)))).toBe(true);
      const fixed = save(`shapes/fixed/${name}`, result.bytes);
      pairs.push([save(`shapes/${name}`, bytes), fixed]);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', fixed]).status, name).toBe(0);
      const mono = spawnSync('mono', [fixed], { encoding: 'utf8' });
      expect(mono.stdout + mono.stderr, name).toContain('foo!');
      expect(mono.status, name).toBe(0);
    }
    await buildSrmOracle();
    for (const r of await srmCompare(pairs)) {
      expect(r.error, r.rewritten).toBeNull();
      expect(r.differences, r.rewritten).toEqual([]);
    }
    const build = await buildOnce(join(repoRoot, 'tools', 'fix-host'));
    expect(build.status, build.output).toBe(0);
    // .NET on x64 loads the x64 ones (IA64 and x86 images are refused there before and after, as they should be).
    for (const name of ['hello.x64.exe', 'hello.textonly.x64.exe']) {
      const ran = spawnSync('dotnet', [join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'), join(dir, 'shapes', 'fixed'), name], {
        encoding: 'utf8',
        env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
      });
      expect(ran.stdout, `${name}: ${ran.stderr}`).toContain('foo!');
      expect(ran.status, name).toBe(0);
    }
  });
});

describe('hostile and fuzzed inputs end in a typed error or a valid output', () => {
  /** A small deterministic PRNG (mulberry32): the same mutations on every run. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  /** Runs the writer; returns 'error' for a typed error, the output for a result, and fails on anything else. */
  const attempt = (bytes: Uint8Array, options: StrongNameAssemblyOptions): Uint8Array | 'error' => {
    try {
      const result = strongNameAssembly(bytes, options);
      if (result.outcome !== 'unchanged') {
        // Our reader reads what we wrote, and it has a strong name: signed and valid, or delay-signed (by us, or the
        // add-in of another key whose references were updated).
        const status = classifyStrongName(readModule(result.bytes));
        expect(['signed', 'delay-signed', 'public-signed'], result.outcome).toContain(status.state);
        if (status.state === 'signed') expect(status.signatureValid).toBe(true);
        if (result.outcome === 'strong-named') expect(status.state).toBe(options.delaySign ? 'delay-signed' : 'signed');
      }
      return result.bytes;
    } catch (error) {
      if (isSignGateError(error) && error.code !== 'SG_ERR_INTERNAL') return 'error';
      throw error;
    }
  };

  test('the hostile shapes of the reader budgets, their references strong-named too', async () => {
    const { methodPtrAttributes, sharedAttributeBlob, sharedStringTails } = await import('../helpers/hostile-assemblies.js');
    for (const [name, bytes] of [
      ['shared string tails', sharedStringTails(200, 64 * 1024)],
      ['MethodPtr attributes', methodPtrAttributes(3_000)],
      ['shared attribute blob', sharedAttributeBlob(300, 64 * 1024)],
    ] as const) {
      // The reader's budgets may refuse the names themselves; then the writer must refuse the file as well.
      let names: string[] = [];
      try {
        names = readModule(bytes)
          .assemblyReferences.slice(0, 50)
          .map((r) => r.name);
      } catch (error) {
        expect(isSignGateError(error), name).toBe(true);
      }
      const identities = new Map(names.map((n) => [n, identityPublicKey(pair12345)] as const));
      const started = performance.now();
      const out = attempt(bytes, { key: pair12345, identities });
      expect(performance.now() - started, name).toBeLessThan(20_000);
      expect(out === 'error' || out instanceof Uint8Array, name).toBe(true);
    }
  });

  test('2,000 mutated copies of real assemblies; SRM reads every output whose input it reads', async () => {
    const next = random(20261124);
    const bases = [
      fixture('assemblies/unsigned.dll'),
      fixture('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll'),
      fixture('sdk/bin/wrong-turns/UnsignedReference/WrongTurn.UnsignedReference.dll'),
    ];
    const identities = new Map([['UnsignedLib', identityPublicKey(pair)]]);
    const tally = { error: 0, written: 0 };
    const written: [string, string][] = [];
    for (let i = 0; i < 2_000; i++) {
      const bytes = Uint8Array.from(bases[i % bases.length]!);
      const flips = 1 + Math.floor(next() * 8);
      for (let f = 0; f < flips; f++) bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
      const out = attempt(bytes, { key: pair, identities, delaySign: i % 5 === 0 });
      tally[out === 'error' ? 'error' : 'written']++;
      if (out !== 'error' && out !== bytes && written.length < 300) written.push([save(`fuzz/${i}.in.dll`, bytes), save(`fuzz/${i}.out.dll`, out)]);
    }
    if (runDotnetTests) {
      requireDotnet();
      await buildSrmOracle();
      const read = await srmDescribe<{ path: string; error: string | null }>(written.flat());
      const refused = written
        .filter((_, i) => read[2 * i]!.error === null && read[2 * i + 1]!.error !== null)
        .map(([, out], i) => `${out}: ${read[2 * i + 1]!.error}`);
      expect(refused).toEqual([]);
    }
    // Most mutations land in code or padding and leave a file that can be strong-named; some break the headers.
    expect(tally.written).toBeGreaterThan(1_000);
    expect(tally.error).toBeGreaterThan(0);
  });
});

describe('where the rewritten metadata goes when it cannot: the old layout', () => {
  test('anything after the metadata that is not understood keeps the old layout: the metadata in a new section', () => {
    const input = fixture('assemblies/unsigned.dll');
    const image = parsePeImage(input);
    const module = readModule(input);
    const tailAt = module.root.fileOffset + module.corHeader.metadata.size;
    const text = image.sections[0]!;
    const shapes: [string, Uint8Array][] = [];
    // A byte no structure accounts for, in the padding before the import table.
    const stray = Uint8Array.from(input);
    stray[tailAt + 1] = 0x5a;
    shapes.push(['a stray byte', stray]);
    // A base relocation into the tail that is not the entry stub's operand.
    const reloc = Uint8Array.from(input);
    const relocAt = image.sections[2]!.pointerToRawData;
    new DataView(reloc.buffer).setUint16(relocAt + 10, 0x3000 | ((module.corHeader.metadata.rva + module.corHeader.metadata.size) & 0xfff), true);
    shapes.push(['a relocation into the tail', reloc]);
    // An export directory pointing into the tail.
    const exported = Uint8Array.from(input);
    new DataView(exported.buffer).setUint32(image.dataDirectories[0]!.entryFileOffset, module.corHeader.metadata.rva + module.corHeader.metadata.size, true);
    new DataView(exported.buffer).setUint32(image.dataDirectories[0]!.entryFileOffset + 4, 4, true);
    shapes.push(['an export directory', exported]);
    expect(tailAt).toBeGreaterThan(text.pointerToRawData);
    for (const [what, bytes] of shapes) {
      const result = strongNameAssembly(bytes, { key: pair });
      const sections = parsePeImage(result.bytes).sections;
      expect(sections.at(-1)!.name, what).toBe(STRONG_NAME_SECTION);
      expect(readModule(result.bytes).corHeader.metadata.rva, what).toBe(sections.at(-1)!.virtualAddress);
      expect(verifyStrongName(readModule(result.bytes), { expectedKey: pair.publicKey }).valid, what).toBe(true);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', save(`fallback/${what.replace(/ /g, '-')}.dll`, result.bytes)]).status, what).toBe(0);
    }
  });
});
