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
