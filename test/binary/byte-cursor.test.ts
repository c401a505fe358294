import { describe, expect, test } from 'vitest';
import { ByteCursor, toHex } from '../../src/binary/byte-cursor.js';
import { FormatError } from '../../src/core/errors.js';

const cursor = (bytes: number[]) => new ByteCursor(Uint8Array.from(bytes), { structure: 'test blob', errorCode: 'SG_ERR_MD_TRUNCATED' });

describe('compressed unsigned integers (ECMA-335 II.23.2)', () => {
  test.each([
    [[0x03], 0x03],
    [[0x7f], 0x7f],
    [[0x80, 0x80], 0x80],
    [[0xae, 0x57], 0x2e57],
    [[0xbf, 0xff], 0x3fff],
    [[0xc0, 0x00, 0x40, 0x00], 0x4000],
    [[0xdf, 0xff, 0xff, 0xff], 0x1fffffff],
    [[0x80, 0x05], 5], // non-minimal encodings are accepted, as SRM does
  ])('%j decodes to %i', (bytes, value) => {
    const c = cursor(bytes);
    expect(c.compressedU32()).toBe(value);
    expect(c.remaining).toBe(0);
  });

  test.each([[[0xe0]], [[0xff, 0, 0, 0]], [[0x80]], [[0xc0, 0, 0]]])('%j is rejected with a typed error', (bytes) => {
    const c = cursor(bytes);
    expect(() => c.compressedU32()).toThrowError(expect.objectContaining({ code: 'SG_ERR_MD_BAD_COMPRESSED_INT' }));
  });
});

describe('ByteCursor bounds', () => {
  test('reads little-endian values in order', () => {
    const c = cursor([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07]);
    expect(c.u8()).toBe(0x01);
    expect(c.u16()).toBe(0x0302);
    expect(c.u32()).toBe(0x07060504);
    expect(c.remaining).toBe(0);
  });

  test('a read past the end names the structure, offset and sizes', () => {
    const c = new ByteCursor(Uint8Array.from([1, 2, 3]), { structure: 'COFF header', errorCode: 'SG_ERR_PE_TRUNCATED', fileOffsetBase: 0x80 });
    c.u16();
    try {
      c.u32();
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(FormatError);
      const e = error as FormatError;
      expect(e.code).toBe('SG_ERR_PE_TRUNCATED');
      expect(e.structure).toBe('COFF header');
      expect(e.fileOffset).toBe(0x82);
      expect(e.needed).toBe(4);
      expect(e.available).toBe(1);
      expect(e.message).toContain('0x82');
    }
  });

  test('a child slice cannot reach outside its parent', () => {
    const c = cursor([1, 2, 3, 4]);
    expect(() => c.slice(2, 3)).toThrowError(expect.objectContaining({ code: 'SG_ERR_MD_TRUNCATED' }));
    const child = c.slice(1, 2);
    expect(child.u16()).toBe(0x0302);
    expect(() => child.u8()).toThrow(FormatError);
  });
});

describe('toHex', () => {
  test('every length and byte value gives what Buffer gives, views included', () => {
    const all = Uint8Array.from({ length: 300 }, (_, i) => (i * 151 + 7) & 0xff);
    for (let length = 0; length <= 70; length++) {
      for (const offset of [0, 1, 255]) {
        const view = all.subarray(offset, offset + length);
        expect(toHex(view)).toBe(Buffer.from(view).toString('hex'));
      }
    }
    expect(toHex(Uint8Array.from({ length: 256 }, (_, i) => i))).toBe(Buffer.from(Uint8Array.from({ length: 256 }, (_, i) => i)).toString('hex'));
  });
});
