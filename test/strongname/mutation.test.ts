// Seeded mutation test: flip and truncate bytes of real assemblies; only typed errors may come out.
import { describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixture } from '../helpers/fixtures.js';

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const sources = ['assemblies/delay-1024.dll', 'assemblies/signed-2048.dll', 'assemblies/pe32plus-signed.dll', 'assemblies/al-delay.dll', 'addin/SampleAddin.dll'];
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
        expect(info.error.code).toMatch(/^SG_ERR_(PE|CLI|MD|KEY|SN)_/);
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
