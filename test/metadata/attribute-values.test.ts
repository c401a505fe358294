// Attribute values. Strings are decoded from views of the file without a copy: the text must be what Buffer's UTF-8
// decoding gives, a leading BOM and malformed sequences included (they reach the JSON output as they are).
import { describe, expect, test } from 'vitest';
import { ByteCursor } from '../../src/binary/byte-cursor.js';
import { decodeCustomAttributeValue } from '../../src/metadata/custom-attribute-value.js';
import type { TypeSig } from '../../src/metadata/signatures.js';

const stringParam: TypeSig[] = [{ kind: 'string' } as TypeSig];
const resolver = { typeName: () => 'X', enumUnderlyingType: () => undefined };

/** A CustomAttrib blob with one string argument holding `utf8` and no named arguments. */
function blobWith(utf8: number[]): Uint8Array {
  return Uint8Array.from([0x01, 0x00, utf8.length, ...utf8, 0x00, 0x00]);
}

describe('SerString text', () => {
  test.each([
    ['a leading BOM', [0xef, 0xbb, 0xbf, 0x41]],
    ['a lone continuation byte', [0x41, 0x80, 0x42]],
    ['a surrogate encoded in UTF-8', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0x41, 0xe2, 0x82]],
    ['an overlong NUL', [0xc0, 0x80]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['an emoji', [0xf0, 0x9f, 0x98, 0x80]],
  ])('%s decodes as Buffer decodes it', (_, utf8) => {
    const bytes = blobWith(utf8);
    const value = decodeCustomAttributeValue(new ByteCursor(bytes, { structure: 'blob', errorCode: 'SG_ERR_MD_TRUNCATED' }), stringParam, resolver);
    expect(value.fixedArguments[0]!.value).toBe(Buffer.from(utf8).toString('utf8'));
  });
});

describe('enums defined in other assemblies: the size is guessed', () => {
  // A constructor taking one enum of another assembly (underlying type unknown here).
  const enumParam: TypeSig[] = [{ kind: 'valuetype', type: { table: 1, rid: 1 } } as TypeSig];
  const cursor = (bytes: number[]) => new ByteCursor(Uint8Array.from(bytes), { structure: 'blob', errorCode: 'SG_ERR_MD_TRUNCATED' });

  test.each([
    ['int32', [0x01, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00], 7],
    ['one byte', [0x01, 0x00, 0x05, 0x00, 0x00], 5],
    ['two bytes', [0x01, 0x00, 0x34, 0x12, 0x00, 0x00], 0x1234],
    ['eight bytes', [0x01, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00], '2'],
  ])('a blob that fits %s decodes with it', (_, bytes, value) => {
    expect(decodeCustomAttributeValue(cursor(bytes), enumParam, resolver).fixedArguments[0]!.value).toBe(value);
  });

  test('a blob no size fits throws the int32 guess error, with a stack, and leaves stack traces on', () => {
    const limit = Error.stackTraceLimit;
    expect(limit).toBeGreaterThan(0);
    const bytes = [0x01, 0x00, 0x01, 0x02, 0x03]; // 3 bytes: not 1, 2, 4 or 8 plus the named-argument count
    let thrown: unknown;
    try {
      decodeCustomAttributeValue(cursor(bytes), enumParam, resolver);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const e = thrown as Error & { code: string };
    expect(e.code).toMatch(/^SG_ERR_MD_/);
    // The error of the first guess (int32), which needs 4 bytes where 3 remain; not that of the last (int64).
    expect(e.message).toBe('blob: needed 4 bytes at 0x2, but only 3 remain');
    expect(e.stack?.split('\n').filter((l) => /^\s+at /.test(l)).length).toBeGreaterThan(0);
    expect(Error.stackTraceLimit).toBe(limit);
  });
});
