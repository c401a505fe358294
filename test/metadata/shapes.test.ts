// Shapes no corpus here holds, built with real tools (Mono's ilasm and mcs, Roslyn from the .NET SDK) and read
// equal by System.Reflection.Metadata, strong-name states included (tools/srm-oracle with its own verification):
// an AssemblyRef with a full public key, references with a culture and without a token, generic and nested
// attribute types, a SHA-256 identity key (delay-signed and signed), and a delay-signed and a signed assembly with
// an enhanced strong name.
import { createSign } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { getSignatureSlot, signedContent } from '../../src/strongname/signed-content.js';
import { createStrongNameKeyPair, parseStrongNameKeyFile, type StrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { strongNameAssembly } from '../../src/strongname/strong-name-writer.js';
import { fixture, has } from '../helpers/fixtures.js';
import { agreeWithSrm } from '../helpers/srm-agreement.js';
import { buildSrmOracle } from '../helpers/srm-oracle.js';
import { requireDotnet, runDotnetTests } from '../sdk/dotnet.js';

const hasTools = has('ilasm') && has('mcs');
if (process.env.CI && !hasTools) throw new Error('CI is set but ilasm or mcs is not installed; .ci/run must apt-get install mono-devel');

/** Roslyn's csc from the installed SDK against Mono's mscorlib (C# 11 for generic attributes). */
function csc(args: readonly string[]): void {
  const sdks = execFileSync('dotnet', ['--list-sdks'], { encoding: 'utf8' }).trim().split('\n');
  const last = /^(\S+) \[(.*)\]$/.exec(sdks.at(-1)!)!;
  execFileSync(
    'dotnet',
    [
      join(last[2]!, last[1]!, 'Roslyn', 'bincore', 'csc.dll'),
      '-nologo',
      '-noconfig',
      '-nostdlib',
      '-langversion:latest',
      '-r:/usr/lib/mono/4.5/mscorlib.dll',
      ...args,
    ],
    {
      env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' },
    },
  );
}

const IL_REFERENCES = `
.assembly extern mscorlib { .publickeytoken = (B7 7A 5C 56 19 34 E0 89) .ver 4:0:0:0 }
// A reference that carries the whole public key (flag 0x1), not its token.
.assembly extern FullKey {
  .publickey = (00 24 00 00 04 80 00 00 94 00 00 00 06 02 00 00 00 24 00 00 52 53 41 31 00 04 00 00 01 00 01 00
                07 D1 FA 57 C4 AE D9 F0 A3 2E 84 AA 0F AE FD 0D E9 E8 FD 6A EC 8F 87 FB 03 76 6C 83 4C 99 92 1E
                B2 3B E7 9A D9 D5 DC C1 DD 9A D2 36 13 21 02 90 0B 72 3C F9 80 95 7F C4 E1 77 10 8F C6 07 77 4F
                29 E8 32 0E 92 EA 05 EC E4 E8 21 C0 A5 EF E8 F1 64 5C 4C 0C 93 C1 AB 99 28 5D 62 2C AA 65 2C 1D
                FA D6 3D 74 5D 6F 2D E5 F1 7E 5E AF 0F C4 96 3D 26 1C 8A 12 43 65 18 20 6D C0 93 34 4D 5A D2 93)
  .ver 1:2:3:4
}
// Satellite-style references: a culture, and no token.
.assembly extern Strings.resources { .locale "de-DE" .ver 1:0:0:0 }
.assembly extern NoToken { .ver 2:0:0:0 }
.assembly Shapes.References { .ver 1:0:0:0 }
.module Shapes.References.dll
.class public auto ansi beforefieldinit Uses extends [mscorlib]System.Object {
  .method public static void Touch() cil managed {
    ldtoken [FullKey]Some.Type
    pop
    ldtoken [Strings.resources]Other.Type
    pop
    ldtoken [NoToken]Third.Type
    pop
    ret
  }
}
`;

const ATTRIBUTES = `using System;
[assembly: Shapes.Outer.NestedAttribute("nested")]
[assembly: Shapes.GenericAttribute<int>(42)]
[assembly: Shapes.GenericAttribute<Shapes.Outer>(7)]
namespace Shapes {
  public class Outer { [AttributeUsage(AttributeTargets.All)] public sealed class NestedAttribute : Attribute { public NestedAttribute(string s) { } } }
  [AttributeUsage(AttributeTargets.All, AllowMultiple = true)] public sealed class GenericAttribute<T> : Attribute { public GenericAttribute(int n) { } }
}
`;

describe.skipIf(!runDotnetTests || !hasTools)('shapes built here, read equal by System.Reflection.Metadata', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-shapes-'));
  const files: string[] = [];
  let esnDelay: string;
  let esnSigned: string;

  beforeAll(async () => {
    requireDotnet();
    await buildSrmOracle();
    // References: ilasm writes exactly what the IL says.
    writeFileSync(join(dir, 'refs.il'), IL_REFERENCES);
    execFileSync('ilasm', ['/dll', '/quiet', `/output:${join(dir, 'Shapes.References.dll')}`, join(dir, 'refs.il')]);
    files.push(join(dir, 'Shapes.References.dll'));
    // Generic and nested attribute types (C# 11).
    writeFileSync(join(dir, 'attributes.cs'), ATTRIBUTES);
    csc(['-target:library', `-out:${join(dir, 'Shapes.Attributes.dll')}`, join(dir, 'attributes.cs')]);
    files.push(join(dir, 'Shapes.Attributes.dll'));
    // A SHA-256 identity key (mcs writes every key blob with SHA-1, so signgate fix gives it): delay-signed and signed.
    writeFileSync(join(dir, 'lib.cs'), 'public class Sha256Identity { }');
    execFileSync('mcs', ['-nologo', '-target:library', `-out:${join(dir, 'Sha256.Unsigned.dll')}`, join(dir, 'lib.cs')]);
    const unsigned = new Uint8Array(readFileSync(join(dir, 'Sha256.Unsigned.dll')));
    const pair = parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk'));
    writeFileSync(
      join(dir, 'Sha256.Delay.dll'),
      strongNameAssembly(unsigned, { key: parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')), delaySign: true, hash: 'sha256' }).bytes,
    );
    writeFileSync(join(dir, 'Sha256.Signed.dll'), strongNameAssembly(unsigned, { key: pair, hash: 'sha256' }).bytes);
    files.push(join(dir, 'Sha256.Delay.dll'), join(dir, 'Sha256.Signed.dll'));
    // An enhanced strong name: identity key, attribute with the signature key and its counter-signature; delay-signed,
    // then signed with the signature key.
    const identity = parseStrongNameKeyFile(createStrongNameKeyPair(2048));
    const signature = parseStrongNameKeyFile(createStrongNameKeyPair(2048));
    writeFileSync(join(dir, 'identity_public.snk'), identity.publicKey.blob);
    const counter = Buffer.from(createSign('sha1').update(signature.publicKey.blob).sign(identity.privateKey!)).reverse().toString('hex');
    writeFileSync(
      join(dir, 'esn.cs'),
      `[assembly: System.Reflection.AssemblySignatureKey("${Buffer.from(signature.publicKey.blob).toString('hex')}", "${counter}")]\npublic class Esn { }`,
    );
    esnDelay = join(dir, 'Esn.Delay.dll');
    execFileSync('mcs', ['-nologo', '-target:library', '-delaysign+', `-keyfile:${join(dir, 'identity_public.snk')}`, `-out:${esnDelay}`, join(dir, 'esn.cs')]);
    files.push(esnDelay);
    esnSigned = join(dir, 'Esn.Signed.dll');
    writeFileSync(esnSigned, signedBy(new Uint8Array(readFileSync(esnDelay)), signature));
    files.push(esnSigned);
  });

  test('each shape is what it should be, and SRM reads every field and state the same', async () => {
    const info = Object.fromEntries(files.map((f) => [f.split('/').pop()!, inspectAssembly(readFileSync(f), f, { verify: true })]));
    expect(info['Shapes.References.dll']!.references).toEqual(
      expect.arrayContaining([
        { name: 'FullKey', version: '1.2.3.4', culture: '', publicKeyToken: 'b03f5f7f11d50a3a' },
        { name: 'Strings.resources', version: '1.0.0.0', culture: 'de-DE', publicKeyToken: null },
        { name: 'NoToken', version: '2.0.0.0', culture: '', publicKeyToken: null },
      ]),
    );
    const types = info['Shapes.Attributes.dll']!.attributes.map((a) => a.type);
    expect(types).toEqual(expect.arrayContaining(['Shapes.Outer/NestedAttribute', 'Shapes.GenericAttribute`1']));
    expect(info['Sha256.Delay.dll']!.strongName).toMatchObject({ state: 'delay-signed', hashAlgorithm: 'sha256' });
    expect(info['Sha256.Signed.dll']!.strongName).toMatchObject({ state: 'signed', hashAlgorithm: 'sha256' });
    expect(info['Esn.Delay.dll']!.strongName!.state).toBe('delay-signed');
    expect(info['Esn.Signed.dll']!.strongName).toMatchObject({ state: 'signed', details: ['signature-key-attribute'] });
    const agreement = await agreeWithSrm(files);
    expect(agreement.disagreements).toEqual([]);
  });
});

/**
 * Signs an enhanced-strong-named assembly with its signature key, as a signer does (signAssembly refuses such an
 * assembly; the signature covers the same bytes as any other).
 */
function signedBy(bytes: Uint8Array, key: StrongNameKeyFile): Uint8Array {
  const out = Uint8Array.from(bytes);
  const module = readModule(out);
  const slot = getSignatureSlot(parsePeImage(out), module.corHeader)!;
  new DataView(out.buffer).setUint32(module.corHeader.flagsFileOffset, module.corHeader.flags | 0x8, true);
  const signer = createSign(key.publicKey.hashAlgorithm);
  for (const chunk of signedContent(parsePeImage(out), slot)) signer.update(chunk);
  out.set(Buffer.from(signer.sign(key.privateKey!)).reverse(), slot.fileOffset);
  return out;
}
