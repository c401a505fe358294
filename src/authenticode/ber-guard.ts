// A bounded pre-scan of BER before asn1js parses it: asn1js recurses without a depth limit, so nesting
// depth and element count are checked first by an explicit-stack walk that never recurses itself.
import type * as asn1js from 'asn1js';
import { FormatError, hex } from '../core/errors.js';
import type { AuthenticodeLimits } from './limits.js';
import * as lib from './libraries.js';

/** Where a blob sits in the file, for error messages. */
export interface BlobOrigin {
  readonly structure: string;
  readonly fileOffset: number;
}

function bad(origin: BlobOrigin, at: number, what: string): FormatError {
  return new FormatError('SG_ERR_AC_BAD_SIGNATURE', `${origin.structure}: ${what} at byte ${at} of the blob`, {
    structure: origin.structure,
    fileOffset: origin.fileOffset >= 0 ? origin.fileOffset + at : -1,
  });
}

/**
 * Walks the TLV structure of the first element of `bytes` (definite and indefinite lengths) and checks depth and
 * element count (into `counted`, when given).
 * @returns the length of that first element
 * @throws FormatError SG_ERR_AC_BUDGET over a limit, SG_ERR_AC_BAD_SIGNATURE for a malformed encoding
 */
export function scanBer(
  bytes: Uint8Array,
  origin: BlobOrigin,
  limits: Pick<AuthenticodeLimits, 'maxAsn1Depth' | 'maxAsn1Elements'>,
  counted?: { elements: number },
): number {
  // Each frame is the end of an enclosing constructed element (-1: indefinite, ends at end-of-contents).
  // The first frame stands for the blob: it ends after its first element (what follows is padding).
  const ends: number[] = [bytes.length];
  let at = 0;
  let elements = 0;
  while (ends.length > 0) {
    if (elements > 0 && ends.length === 1) break;
    const end = ends[ends.length - 1]!;
    if (end >= 0 && at === end) {
      ends.pop();
      continue;
    }
    if (at >= bytes.length || (end >= 0 && at > end)) throw bad(origin, at, 'an element runs past its enclosing element');
    if (end < 0 && bytes[at] === 0 && bytes[at + 1] === 0) {
      at += 2;
      ends.pop();
      continue;
    }
    if (++elements > limits.maxAsn1Elements) {
      throw new FormatError('SG_ERR_AC_BUDGET', `${origin.structure} holds more than ${limits.maxAsn1Elements} ASN.1 elements`, {
        structure: origin.structure,
        fileOffset: origin.fileOffset,
      });
    }
    const first = bytes[at++]!;
    const constructed = (first & 0x20) !== 0;
    if ((first & 0x1f) === 0x1f) {
      let n = 0;
      while (at < bytes.length && bytes[at]! & 0x80) if (++n > 4 || at++ >= bytes.length) throw bad(origin, at, 'a tag number too long');
      at++;
    }
    if (at >= bytes.length) throw bad(origin, at, 'a truncated length');
    const lenByte = bytes[at++]!;
    let length: number;
    if (lenByte < 0x80) length = lenByte;
    else if (lenByte === 0x80) {
      if (!constructed) throw bad(origin, at, 'an indefinite length on a primitive element');
      length = -1;
    } else {
      const n = lenByte & 0x7f;
      if (n > 4 || at + n > bytes.length) throw bad(origin, at, `a length of ${n} bytes`);
      length = 0;
      for (let i = 0; i < n; i++) length = length * 256 + bytes[at++]!;
    }
    const limit = end >= 0 ? end : bytes.length;
    if (length >= 0 && at + length > limit) throw bad(origin, at, `a length of ${length} bytes past the end (${limit - at} left)`);
    if (!constructed) {
      at += length;
      continue;
    }
    if (ends.length > limits.maxAsn1Depth) {
      throw new FormatError(
        'SG_ERR_AC_BUDGET',
        `${origin.structure} nests ASN.1 elements more than ${limits.maxAsn1Depth} deep (at ${hex(origin.fileOffset + at)})`,
        {
          structure: origin.structure,
          fileOffset: origin.fileOffset >= 0 ? origin.fileOffset + at : -1,
        },
      );
    }
    ends.push(length < 0 ? -1 : at + length);
  }
  if (counted) counted.elements = elements;
  return at;
}

/**
 * Scans, then parses one BER element with asn1js.
 * @throws FormatError SG_ERR_AC_BUDGET, SG_ERR_AC_BAD_SIGNATURE
 */
export function parseBer(bytes: Uint8Array, origin: BlobOrigin, limits: AuthenticodeLimits): asn1js.AsnType {
  const end = scanBer(bytes, origin, limits);
  const parsed = lib.asn1js().fromBER(bytes.subarray(0, end));
  if (parsed.offset === -1) throw bad(origin, 0, `not valid BER (${parsed.result.error || 'asn1js refused it'})`);
  return parsed.result;
}
