// The per-key cache behind inspect and verify, and verify's lean path (verifyAssemblyBytes): a key seen before must
// never stand in for the verification of the file in hand, and the lean path must give what the full reader gives.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { parsePublicKeyBlob, toPublicKeyObject } from '../../src/strongname/key-blob.js';
import { knownKey, knownKeyObject } from '../../src/strongname/known-keys.js';
import { getSignatureSlot } from '../../src/strongname/signed-content.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { verifyAssemblyBytes, verifyFile } from '../../src/workflows/scan-file.js';
import { fixture, fixturePath, fixturesDir, hasMono, runMono } from '../helpers/fixtures.js';

const load = (bytes: Uint8Array) => new ModuleMetadata(parsePeImage(bytes));

describe('known keys', () => {
  test('the cache keeps a copy of the blob, not a view of the file it came from', () => {
    const bytes = fixture('assemblies/signed-2048.dll');
    const view = load(bytes).assembly!.publicKey;
    const original = Uint8Array.from(view);
    const first = knownKey(view);
    view.fill(0x5a); // the file's buffer is reused or changed after the call
    const again = knownKey(original);
    expect(again).toBe(first);
    expect(Buffer.from(again.key.blob).equals(Buffer.from(original))).toBe(true);
    expect(again.token).toBe(publicKeyToken(original));
    expect(again.hex).toBe(Buffer.from(original).toString('hex'));
    expect(knownKeyObject(again.key).equals(toPublicKeyObject(parsePublicKeyBlob(original)))).toBe(true);
  });

  test('a bad blob throws every time and is not kept', () => {
    const bad = Uint8Array.from(load(fixture('assemblies/signed-1024.dll')).assembly!.publicKey);
    bad[8] = 0xff; // cbPublicKey no longer matches the blob
    expect(() => knownKey(bad)).toThrow(/cbPublicKey/);
    expect(() => knownKey(bad)).toThrow(/cbPublicKey/);
  });

  test('a file signed with a cached key is still verified: a changed covered byte fails after a valid file with that key', () => {
    const bytes = fixture('assemblies/signed-1024.dll');
    expect(verifyAssemblyBytes(bytes, 'a.dll')).toMatchObject({ valid: true, state: 'signed' });
    const module = load(bytes);
    const slot = getSignatureSlot(module.image, module.corHeader)!;
    const tampered = Uint8Array.from(bytes);
    const at = module.root.fileOffset + 4; // inside the metadata, covered by the signature
    expect(at < slot.fileOffset || at >= slot.fileOffset + slot.size).toBe(true);
    tampered[at] ^= 0x01;
    expect(verifyAssemblyBytes(tampered, 'b.dll')).toMatchObject({
      valid: false,
      state: 'invalid-signature',
      reason: expect.stringContaining('does not match'),
    });
    expect(verifyAssemblyBytes(bytes, 'a.dll')).toMatchObject({ valid: true, state: 'signed' });
  });
});

describe('verify reads what it prints', () => {
  const dirs = ['assemblies', 'variants', 'corrupt', 'modules'];
  const files = dirs.flatMap((d) =>
    readdirSync(join(fixturesDir, d))
      .filter((n) => /\.(dll|exe|netmodule)$/i.test(n))
      .map((n) => `${d}/${n}`),
  );

  test('there are fixtures of every kind', () => {
    expect(files.length).toBeGreaterThan(40);
  });

  test.each(files)('%s: verifyAssemblyBytes gives the record verifyFile gives, and the state inspect gives', (name) => {
    const bytes = fixture(name);
    const record = verifyAssemblyBytes(bytes, name);
    expect(verifyFile({ absolutePath: fixturePath(name), displayPath: name })).toEqual(record);
    const info = inspectAssembly(bytes, name);
    if (record.error) {
      // inspect reads more (attributes, references), so it may fail where verify does not; never the reverse.
      // A native image is inspect's `managed: false`, verify's error.
      expect(info.error !== null || !info.managed).toBe(true);
      return;
    }
    if (info.error) return;
    expect(record.state).toBe(info.strongName?.state ?? null);
    expect(record.publicKeyToken).toBe(info.assembly?.publicKeyToken ?? null);
    expect(record.keyBits).toBe(info.strongName?.keyBits ?? null);
  });

  test.skipIf(!hasMono).each(files.filter((f) => !f.startsWith('corrupt/')))('%s: valid exactly when Mono sn -vf accepts it', (name) => {
    const record = verifyAssemblyBytes(fixture(name), name);
    const sn = runMono('sn', ['-q', '-vf', fixturePath(name)]);
    // Mono's sn accepts a signature made with the ECMA key's platform key only through its own key map.
    if (record.state === 'signed') expect(sn.status).toBe(0);
    if (record.state === 'invalid-signature') expect(sn.status).not.toBe(0);
  });
});
