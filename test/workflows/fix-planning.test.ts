// fix decides a set from each file's headers and metadata: a file that stays as it is, whatever its signature holds
// (another publisher's, naming nothing that gets a strong name), is not read whole, and its signature is not
// checked, which the result says (signatureVerified: false). A file whose fate depends on its signature (one of the
// key given) is still read whole and verified.
import fs from 'node:fs';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { parseCorHeader } from '../../src/pe/cor-header.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { getSignatureSlot } from '../../src/strongname/signed-content.js';
import { signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { fix } from '../../src/workflows/fix.js';
import { readAssemblyParts } from '../../src/workflows/assembly-parts.js';
import { fixture, fixturePath } from '../helpers/fixtures.js';

const UNSIGNED_LIB = fixturePath('sdk/bin/wrong-turns/UnsignedReference/UnsignedLib.dll');

/** fixtures/bench/LargeAddin.dll (516 KiB, delay-signed with option 12345's key) signed with `keyFile`'s pair. */
function largeSigned(keyFile: string): Uint8Array {
  return signAssembly(readModule(new Uint8Array(readFileSync(fixturePath('bench/LargeAddin.dll')))), parseStrongNameKeyFile(fixture(keyFile)));
}

/** The bytes with garbage in the IL between the CLI header and the metadata: the signature no longer verifies. */
function withGarbageInIl(bytes: Uint8Array): Uint8Array {
  const out = Uint8Array.from(bytes);
  const cor = parseCorHeader(parsePeImage(out));
  const metadataAt = readModule(out).root.fileOffset;
  const middle = Math.floor((cor.fileOffset + 0x48 + metadataAt) / 2);
  expect(metadataAt - (cor.fileOffset + 0x48)).toBeGreaterThan(64 * 1024);
  out.fill(0xcc, middle, middle + 16);
  expect(verifyStrongName(readModule(out)).valid).toBe(false);
  return out;
}

/**
 * Every byte the file system hands out through readSync and readFileSync (the ways `fix` reads), each once: Node's
 * readFileSync may read through readSync itself.
 */
let bytesRead = 0;
let inReadFile = 0;
const original = { readSync: fs.readSync, readFileSync: fs.readFileSync };
beforeEach(() => {
  bytesRead = 0;
  fs.readSync = ((...args: Parameters<typeof fs.readSync>) => {
    const n = original.readSync(...args);
    if (inReadFile === 0) bytesRead += n;
    return n;
  }) as typeof fs.readSync;
  fs.readFileSync = ((...args: Parameters<typeof fs.readFileSync>) => {
    inReadFile++;
    try {
      const r = original.readFileSync(...args);
      bytesRead += r.length;
      return r;
    } finally {
      inReadFile--;
    }
  }) as typeof fs.readFileSync;
  syncBuiltinESMExports();
});
afterEach(() => {
  Object.assign(fs, original);
  syncBuiltinESMExports();
});

describe('fix plans from headers and metadata', () => {
  test("another publisher's large assembly that stays as it is is not read whole, and its signature is not checked", async () => {
    const folder = mkdtempSync(join(tmpdir(), 'signgate-fix-plan-'));
    const big = join(folder, 'LargeAddin.dll');
    writeFileSync(big, withGarbageInIl(largeSigned('test-keys/12345_keypair.snk')));
    writeFileSync(join(folder, 'UnsignedLib.dll'), readFileSync(UNSIGNED_LIB));
    const size = statSync(big).size;
    bytesRead = 0;
    const result = await fix({ paths: [folder], key: fixturePath('test-keys/other_keypair.snk'), dryRun: true, cwd: folder });
    // Read whole (as before), the two files and the key come to more than the large file; its parts, to a few KiB.
    expect(bytesRead).toBeLessThan(size / 8);
    const large = result.files.find((f) => f.path === 'LargeAddin.dll')!;
    // The garbage is not seen: the file is reported as its headers say, and as not verified.
    expect(large).toMatchObject({ outcome: 'unchanged', before: 'signed', signatureVerified: false, name: 'LargeAddin', publicKeyToken: '5d004f218731cd20' });
    expect(result.files.find((f) => f.path === 'UnsignedLib.dll')).toMatchObject({ outcome: 'strong-named', before: 'unsigned' });
    expect(result.files.find((f) => f.path === 'UnsignedLib.dll')!.signatureVerified).toBeUndefined();
  });

  test('an assembly of the key given is read whole: a broken signature is found and signed again', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'signgate-fix-plan-'));
    const big = join(folder, 'LargeAddin.dll');
    // The same add-in, signed with option 12345's pair and its IL then damaged, fixed with that pair.
    writeFileSync(big, withGarbageInIl(largeSigned('test-keys/12345_keypair.snk')));
    bytesRead = 0;
    const result = await fix({ paths: [big], key: fixturePath('test-keys/12345_keypair.snk'), dryRun: true, cwd: folder });
    expect(bytesRead).toBeGreaterThanOrEqual(statSync(big).size);
    expect(result.files[0]).toMatchObject({ outcome: 'signed', before: 'invalid-signature' });
    expect(result.files[0]!.signatureVerified).toBeUndefined();
  });

  test('a large file that cannot be read is refused with the error that reading it whole gives', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'signgate-fix-plan-'));
    const good = readFileSync(fixturePath('bench/LargeAddin.dll'));
    const metadataAt = readModule(new Uint8Array(good)).root.fileOffset;
    const variants: Record<string, Uint8Array> = {
      'Garbage.dll': Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) & 0xff),
      'Truncated.dll': good.subarray(0, 300_000),
      'BadLfanew.dll': Uint8Array.from(good).fill(0xf0, 0x3c, 0x40),
      'NoBsjb.dll': Uint8Array.from(good).fill(0x58, metadataAt, metadataAt + 4),
    };
    for (const [name, bytes] of Object.entries(variants)) writeFileSync(join(folder, name), bytes);
    const result = await fix({ paths: [folder], key: fixturePath('test-keys/other_keypair.snk'), dryRun: true, cwd: folder });
    for (const [name, bytes] of Object.entries(variants)) {
      let whole: { code: string; message: string } | undefined;
      try {
        readModule(bytes);
      } catch (error) {
        whole = { code: (error as { code: string }).code, message: (error as Error).message };
      }
      expect(whole, name).toBeDefined();
      expect(
        result.files.find((f) => f.path === name),
        name,
      ).toMatchObject({ outcome: 'refused', reason: whole });
    }
  });

  test('readAssemblyParts reads the headers, the CLI header and the signature slot, then the metadata as it is asked for, and reads a small file whole', () => {
    const folder = mkdtempSync(join(tmpdir(), 'signgate-fix-plan-'));
    const big = join(folder, 'LargeAddin.dll');
    const bytes = largeSigned('test-keys/12345_keypair.snk');
    writeFileSync(big, bytes);
    bytesRead = 0;
    const parts = readAssemblyParts(big, 'LargeAddin.dll');
    expect(parts.whole).toBe(false);
    expect(parts.bytesRead).toBe(bytesRead);
    const whole = readModule(bytes);
    // The headers, not the metadata yet.
    expect(parts.bytes.subarray(whole.root.fileOffset, whole.root.fileOffset + whole.root.size).every((b) => b === 0)).toBe(true);
    const module = parts.metadata(parsePeImage(parts.bytes));
    expect(module.assembly!.name).toBe('LargeAddin');
    const slot = getSignatureSlot(module.image, module.corHeader)!;
    const signature = bytes.subarray(slot.fileOffset, slot.fileOffset + slot.size);
    expect(signature.some((b) => b !== 0)).toBe(true);
    expect(parts.bytes.subarray(slot.fileOffset, slot.fileOffset + slot.size)).toEqual(signature);
    expect(module.assemblyReferences).toEqual(whole.assemblyReferences);
    expect(module.assemblyAttributes).toEqual(whole.assemblyAttributes);
    expect(module.manifestResources).toEqual(whole.manifestResources);
    parts.close();
    expect(parts.bytesRead).toBe(bytesRead);
    expect(parts.bytesRead).toBeLessThan(bytes.length / 8);
    const small = readAssemblyParts(UNSIGNED_LIB, 'UnsignedLib.dll');
    expect(small.whole).toBe(true);
    expect(Buffer.from(small.bytes).equals(readFileSync(UNSIGNED_LIB))).toBe(true);
  });
});
