import { describe, expect, test } from 'vitest';
import { computePeChecksum } from '../../src/pe/checksum.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { fixture } from '../helpers/fixtures.js';

describe('PE checksum (strong-naming.md 7.8)', () => {
  test('matches the vectors of the spec', () => {
    const ramp = (n: number) => Uint8Array.from({ length: n }, (_, i) => i & 0xff);
    expect(computePeChecksum(ramp(1001), 0x40)).toBe(0x103df);
    expect(computePeChecksum(ramp(1000), 0x40)).toBe(0x102f6);
  });

  test.each(['assemblies/signed-1024.dll', 'assemblies/pe32plus-signed.dll', 'vendor/Contoso.AddinApi.dll'])(
    'equals the checksum mcs wrote into %s',
    (name) => {
      const bytes = fixture(name);
      const image = parsePeImage(bytes);
      expect(image.checkSum).not.toBe(0);
      expect(computePeChecksum(bytes, image.checkSumFileOffset)).toBe(image.checkSum);
    },
  );
});

describe('PE checksum: every alignment of the bytes gives the reference sum', () => {
  // The imagehlp algorithm word by word, folding the carry at each step: the reference for the fast paths.
  const reference = (bytes: Uint8Array, at: number): number => {
    let sum = 0;
    for (let i = 0; i < bytes.length; i += 2) {
      if (i >= at && i < at + 4) continue;
      sum += bytes[i]! | ((bytes[i + 1] ?? 0) << 8);
      sum = (sum & 0xffff) + (sum >>> 16);
    }
    return ((sum & 0xffff) + bytes.length) >>> 0;
  };
  const random = (n: number, seed: number) => {
    const out = new Uint8Array(n);
    let x = seed;
    for (let i = 0; i < n; i++) out[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
    return out;
  };
  test.each([4000, 4001, 4002, 4003, 65537])('%i bytes at byte offsets 0 to 3 of their buffer', (n) => {
    const data = random(n, n);
    const expected = reference(data, 0x40);
    for (let offset = 0; offset < 4; offset++) {
      const buffer = new Uint8Array(n + 4);
      buffer.set(data, offset);
      expect(computePeChecksum(buffer.subarray(offset, offset + n), 0x40), `offset ${offset}`).toBe(expected);
    }
  });
});
