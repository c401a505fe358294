// Enhanced strong naming (AssemblySignatureKeyAttribute) verified as the runtime does: the attribute's signature
// key decides the signature, also when the identity key is one a verifier substitutes (the ECMA key's platform
// key); the substitute stands in for the identity key only for the counter-signature. Proven on Microsoft's
// .NET Framework 4.8 reference assemblies (ECMA key, 2048-bit SHA-256 signature key) and on assemblies built
// here with Mono's mcs and signed in the test.
import { execFileSync } from 'node:child_process';
import { createSign } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { createStrongNameKeyPair, parseStrongNameKeyFile, type StrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { getSignatureSlot, signedContent } from '../../src/strongname/signed-content.js';
import { classifyStrongName } from '../../src/strongname/strong-name.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { fixturePath, has } from '../helpers/fixtures.js';

// Restored by `dotnet restore fixtures/sdk/SdkFixtures.sln` (.ci/run), which builds net48 against them.
const REFERENCE_ASSEMBLIES = join(
  process.env.NUGET_PACKAGES ?? join(homedir(), '.nuget', 'packages'),
  'microsoft.netframework.referenceassemblies.net48',
  '1.0.3',
  'build',
  '.NETFramework',
  'v4.8',
);
const hasReferenceAssemblies = existsSync(REFERENCE_ASSEMBLIES);
if (process.env.CI && !hasReferenceAssemblies)
  throw new Error(`CI is set but ${REFERENCE_ASSEMBLIES} is missing; .ci/run restores fixtures/sdk, which brings it`);

describe.runIf(hasReferenceAssemblies || process.env.CI)('Microsoft.NETFramework.ReferenceAssemblies.net48 1.0.3 (build/.NETFramework/v4.8)', () => {
  test.each([['System.AddIn.dll'], ['System.Transactions.dll']])('%s: ECMA key, enhanced strong name: signed with the attribute key', (name) => {
    const status = classifyStrongName(readModule(readFileSync(join(REFERENCE_ASSEMBLIES, name))));
    expect(status.state).toBe('signed');
    expect(status.details).toContain('signature-key-attribute');
    expect(status.publicKeyToken).toBe('b77a5c561934e089');
    expect(status.keyBits).toBe(2048);
    expect(status.hashAlgorithm).toBe('sha256');
  });

  test('no assembly of the folder is reported invalid', () => {
    const states = new Map<string, number>();
    for (const name of readdirSync(REFERENCE_ASSEMBLIES).filter((n) => n.endsWith('.dll'))) {
      let state: string;
      try {
        state = classifyStrongName(readModule(readFileSync(join(REFERENCE_ASSEMBLIES, name)))).state;
      } catch {
        state = 'unreadable';
      }
      states.set(state, (states.get(state) ?? 0) + 1);
    }
    expect(states.get('invalid-signature') ?? 0).toBe(0);
    expect(states.get('signed')).toBeGreaterThan(100);
  });
});

const hasMcs = has('mcs');
if (process.env.CI && !hasMcs) throw new Error('CI is set but mcs is not installed; .ci/run must apt-get install mono-devel');

/** The counter-signature as the attribute carries it: the key's signature over the signature key's blob, reversed, in hex. */
function counterSignature(signatureKey: StrongNameKeyFile, by: StrongNameKeyFile): string {
  const signature = createSign(by.publicKey.hashAlgorithm).update(signatureKey.publicKey.blob).sign(by.privateKey!);
  return Buffer.from(signature).reverse().toString('hex');
}

/** The assembly strong-name signed with `key` (the slot's own key), as a signer with the signature key does. */
function signWith(bytes: Uint8Array, key: StrongNameKeyFile): Uint8Array {
  const out = Uint8Array.from(bytes);
  const image = parsePeImage(out);
  const module = readModule(out);
  const slot = getSignatureSlot(image, module.corHeader)!;
  new DataView(out.buffer).setUint32(module.corHeader.flagsFileOffset, module.corHeader.flags | 0x8, true);
  out.fill(0, slot.fileOffset, slot.fileOffset + slot.size);
  const signer = createSign(key.publicKey.hashAlgorithm);
  for (const chunk of signedContent(parsePeImage(out), slot)) signer.update(chunk);
  out.set(Buffer.from(signer.sign(key.privateKey!)).reverse(), slot.fileOffset);
  return out;
}

describe.runIf(hasMcs || process.env.CI)('enhanced strong names built here', () => {
  // identity: the assembly's key (2048 bits, so the compiler reserves the signature key's 256 bytes);
  // platform: what a verifier substitutes for the identity key (as for the ECMA key); signature: the attribute's key.
  let identity: StrongNameKeyFile;
  let platform: StrongNameKeyFile;
  let signature: StrongNameKeyFile;
  let dir: string;
  const build = (name: string, counterBy: StrongNameKeyFile) => {
    const source = join(dir, `${name}.cs`);
    writeFileSync(
      source,
      `[assembly: System.Reflection.AssemblySignatureKey("${Buffer.from(signature.publicKey.blob).toString('hex')}", "${counterSignature(signature, counterBy)}")]\npublic class ${name} { }\n`,
    );
    const out = join(dir, `${name}.dll`);
    execFileSync('mcs', ['-target:library', '-delaysign+', `-keyfile:${join(dir, 'identity_public.snk')}`, `-out:${out}`, source]);
    return readFileSync(out);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signgate-esn-'));
    const pair = createStrongNameKeyPair(2048);
    identity = parseStrongNameKeyFile(pair);
    writeFileSync(join(dir, 'identity_public.snk'), identity.publicKey.blob);
    platform = parseStrongNameKeyFile(readFileSync(fixturePath('test-keys/other_keypair.snk')));
    signature = parseStrongNameKeyFile(createStrongNameKeyPair(2048));
  });

  test('counter-signed by the identity key: signed with the attribute key; delay-signed before signing', () => {
    const delaySigned = build('ByIdentity', identity);
    expect(classifyStrongName(readModule(delaySigned)).state).toBe('delay-signed');
    const status = classifyStrongName(readModule(signWith(delaySigned, signature)));
    expect(status.state).toBe('signed');
    expect(status.details).toEqual(['signature-key-attribute']);
  });

  test('on the substituted-key path (as the ECMA key): the counter-signature by the substitute, the signature by the attribute key', () => {
    const signed = signWith(build('ByPlatform', platform), signature);
    const keyMap = new Map([[publicKeyToken(identity.publicKey.blob), platform.publicKey.blob]]);
    const status = classifyStrongName(readModule(signed), { keyMap });
    expect(status.state).toBe('signed');
    expect(status.details).toContain('signature-key-attribute');
    // Without the substitute, the identity key did not make that counter-signature.
    const unmapped = classifyStrongName(readModule(signed));
    expect(unmapped.state).toBe('invalid-signature');
    expect(unmapped.failure).toContain('counter-signature');
  });

  test('signed with the identity key instead of the attribute key: invalid', () => {
    const wrong = signWith(build('WrongSigner', identity), identity);
    expect(classifyStrongName(readModule(wrong)).state).toBe('invalid-signature');
  });
});
