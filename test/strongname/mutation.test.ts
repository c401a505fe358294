// Seeded mutation test: flip and truncate bytes of real assemblies; only typed errors may come out.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixture } from '../helpers/fixtures.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, removeTestPki } from '../helpers/authenticode.js';
import { getCertificateTable } from '../../src/pe/pe-image.js';

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const sources = [
  'assemblies/delay-1024.dll',
  'assemblies/signed-2048.dll',
  'assemblies/pe32plus-signed.dll',
  'assemblies/al-delay.dll',
  'addin/SampleAddin.dll',
];
const VARIANTS_PER_SOURCE = 1000;
const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));

describe('mutated assemblies', () => {
  test.each(sources)(`%s: ${VARIANTS_PER_SOURCE} variants give a result or a typed error, never a crash`, (name) => {
    const original = fixture(name);
    const random = rng(0x5167 + name.length);
    const codes = new Map<string, number>();
    for (let i = 0; i < VARIANTS_PER_SOURCE; i++) {
      let bytes = Uint8Array.from(original);
      const kind = random();
      if (kind < 0.15) {
        bytes = bytes.subarray(0, Math.floor(random() * bytes.length));
      } else {
        // Flip 1-8 bytes, half of them in the first 1 KiB where the headers and metadata root are dense.
        const flips = 1 + Math.floor(random() * 8);
        for (let f = 0; f < flips; f++) {
          const at = random() < 0.5 ? Math.floor(random() * Math.min(1024, bytes.length)) : Math.floor(random() * bytes.length);
          bytes[at] = Math.floor(random() * 256);
        }
      }
      const info = inspectAssembly(bytes, `variant-${i}`);
      if (info.error) {
        expect(info.error.code).toMatch(/^SG_ERR_(PE|CLI|MD|KEY|SN|AC)_/);
        codes.set(info.error.code, (codes.get(info.error.code) ?? 0) + 1);
      }
      for (const a of info.attributes) if (a.error) expect(a.error.code).toMatch(/^SG_ERR_MD_/);
      // The signer must refuse cleanly too.
      try {
        signAssembly(new ModuleMetadata(parsePeImage(bytes)), pair);
      } catch (error) {
        expect(isSignGateError(error), String(error)).toBe(true);
      }
    }
    // The mutations really reached the parsers: several distinct error codes came out.
    expect(codes.size).toBeGreaterThan(3);
  });
});

describe.skipIf(!hasOsslsigncode)('mutated Authenticode certificate tables', () => {
  const sources = new Map<string, Uint8Array>();
  beforeAll(async () => {
    const pki = await makeTestPki();
    const sn = join(pki.dir, 'sn.dll');
    writeFileSync(sn, signAssembly(new ModuleMetadata(parsePeImage(fixture('addin/SampleAddin.dll'))), pair));
    await authenticodeSign(pki, sn, join(pki.dir, 'signed.dll'));
    await authenticodeSign(pki, join(pki.dir, 'signed.dll'), join(pki.dir, 'nested.dll'), { nest: true, hash: 'sha1' });
    for (const name of ['signed.dll', 'nested.dll']) sources.set(name, new Uint8Array(readFileSync(join(pki.dir, name))));
    removeTestPki(pki);
  });

  const VARIANTS = 500;
  test.each(['signed.dll', 'nested.dll'])(`%s: ${VARIANTS} variants give a verdict or a typed error; a covered byte changed is never valid`, (name) => {
    const original = sources.get(name)!;
    const table = getCertificateTable(parsePeImage(original))!;
    const random = rng(0xac + name.length);
    const states = new Map<string, number>();
    for (let i = 0; i < VARIANTS; i++) {
      let bytes = Uint8Array.from(original);
      const kind = random();
      let covered = false;
      if (kind < 0.1) {
        // Cut inside the certificate table.
        bytes = bytes.subarray(0, table.fileOffset + Math.floor(random() * table.size));
      } else if (kind < 0.85) {
        // Flip 1-4 bytes of the table: its headers, the ASN.1 lengths and tags, the certificates, the signatures.
        const flips = 1 + Math.floor(random() * 4);
        for (let f = 0; f < flips; f++) bytes[table.fileOffset + Math.floor(random() * table.size)] = Math.floor(random() * 256);
      } else {
        // One byte the image hash covers (not the checksum, not the certificate directory entry, not the table).
        const image = parsePeImage(original);
        const skip = (at: number) =>
          (at >= image.checkSumFileOffset && at < image.checkSumFileOffset + 4) ||
          (at >= image.dataDirectories[4]!.entryFileOffset && at < image.dataDirectories[4]!.entryFileOffset + 8);
        let at = Math.floor(random() * table.fileOffset);
        while (skip(at)) at = Math.floor(random() * table.fileOffset);
        bytes[at] = (bytes[at]! + 1 + Math.floor(random() * 255)) & 0xff;
        covered = true;
      }
      const info = inspectAssembly(bytes, `variant-${i}`);
      const ac = info.authenticode;
      if (!ac) {
        expect(info.error?.code).toMatch(/^SG_ERR_PE_/);
        continue;
      }
      if (ac.error) expect(ac.error.code).toMatch(/^SG_ERR_AC_/);
      if (covered) expect(ac.state, `variant ${i}`).not.toBe('valid');
      states.set(ac.state, (states.get(ac.state) ?? 0) + 1);
    }
    // The mutations reached every verdict: some stayed valid (bytes no signature covers), some broke, some do not parse.
    expect([...states.keys()].sort()).toEqual(['invalid', 'unreadable', 'valid']);
  });
});
