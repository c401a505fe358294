// Attribute strings are decoded from views of the file without a copy: the text must be what Buffer's UTF-8
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
