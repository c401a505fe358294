// Whether asn1js would accept an element, known without building its tree where that is certain: every part of a
// signature still goes through asn1js's judgement (what it refused is refused), but the parts that recur from file
// to file (names, algorithm identifiers, attributes of one publisher) are judged once per process, and the parts that
// cannot be refused (a primitive INTEGER or OCTET STRING) are not parsed at all.
//
// What this rests on (asn1js 3.1, build/index.js), for an element that scanBer let through (every length fits, no
// depth over the limits), of definite length and at most SMALL_ELEMENT_BYTES long:
// - a SEQUENCE, SET or context-specific constructed element is accepted exactly when each of its children is, each
//   read with its own length (LocalConstructedValueBlock.fromBER; Sequence and Set add nothing to Constructed);
// - a primitive INTEGER is always accepted (LocalIntegerValueBlock.fromBER: the bytes, and a number from at most 3);
// - a primitive OCTET STRING is always accepted (what it may find inside is tried in a try/catch and never fails it);
// - a primitive BIT STRING is accepted when it is empty or its first octet (unused bits) is at most 7 (what may be
//   inside is tried as for an OCTET STRING);
// - a context-specific primitive element is always accepted (Primitive: its bytes, nothing more);
// - a primitive UTCTime is always accepted (UTCTime.fromString notes a string it cannot read, and fails nothing);
// - a primitive GeneralizedTime of the form YYYYMMDDhhmmss[.f+]Z is accepted (GeneralizedTime.fromString throws
//   only for other forms);
// - any other element is accepted inside its parent exactly when it is accepted alone and, read alone, ends where its
//   length says (an end-of-contents with a length does not: its parent would read on from inside it); only the node
//   count (10,000 per fromBER) and nesting depth (100) are shared, an element of n bytes counts at most n nodes (one
//   per start of an element, each position read once), and the nesting judged here stays below asn1js's limit.
// Each rule above also reads exactly the element's length (checked by test/authenticode/asn1-accept.test.ts on
// thousands of damaged signatures).
// Anything else (indefinite lengths, long tags, a refusal) answers false: the caller then parses with asn1js as
// before, which gives the same result and the same error.
import type * as Asn1js from 'asn1js';
import * as lib from './libraries.js';

/** Above this many bytes an element is not judged here (asn1js's node limit is 10,000 per parse). */
const SMALL_ELEMENT_BYTES = 4_096;
/** Nesting judged here; asn1js refuses more than 100. */
const MAX_DEPTH = 64;
/** Elements accepted by asn1js alone, by their bytes. Emptied when full. */
const acceptedAlone = new Set<string>();
const ACCEPTED_ENTRIES = 4_096;

const key = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');

/** One element (tag, length and content of definite length), as views of `whole`. */
interface Element {
  readonly tag: number;
  readonly whole: Uint8Array;
  readonly content: Uint8Array;
}

/** Whether every element of bytes[from, to) is known to be accepted (offsets, no views made on the way). */
function acceptsAll(bytes: Buffer, from: number, to: number, depth: number): boolean {
  if (depth > MAX_DEPTH) return false;
  for (let at = from; at < to; ) {
    const tag = bytes[at]!;
    if ((tag & 0x1f) === 0x1f || at + 1 >= to) return false;
    const lenByte = bytes[at + 1]!;
    if (lenByte === 0x80) return false;
    let contentAt = at + 2;
    let length = lenByte;
    if (lenByte > 0x80) {
      length = 0;
      contentAt += lenByte & 0x7f;
      for (let i = at + 2; i < contentAt; i++) length = length * 256 + bytes[i]!;
    }
    const end = contentAt + length;
    if (end > to) return false;
    if (!accepts(tag, bytes, at, contentAt, end, depth)) return false;
    at = end;
  }
  return true;
}

/** Whether the element bytes[at, end) with the given tag, its content from contentAt, is known to be accepted. */
function accepts(tag: number, bytes: Buffer, at: number, contentAt: number, end: number, depth: number): boolean {
  if (tag === 0x02 || tag === 0x04 || tag === 0x17) return true;
  if (tag === 0x18 && generalizedTime(bytes.subarray(contentAt, end)) !== undefined) return true;
  if (tag === 0x03) return end === contentAt || bytes[contentAt]! <= 7;
  if ((tag & 0xe0) === 0x80) return true;
  if (tag === 0x30 || tag === 0x31 || (tag & 0xe0) === 0xa0) return acceptsAll(bytes, contentAt, end, depth + 1);
  const k = bytes.toString('latin1', at, end);
  if (acceptedAlone.has(k)) return true;
  // Read alone, it must also end where its length says: inside a parent, the next element is read from there.
  if (!readAloneToItsEnd(new Uint8Array(bytes.buffer, bytes.byteOffset + at, end - at))) return false;
  if (acceptedAlone.size >= ACCEPTED_ENTRIES) acceptedAlone.clear();
  acceptedAlone.add(k);
  return true;
}

/** asn1js accepts the element alone (without throwing: a GeneralizedTime of another form throws) and reads it all. */
function readAloneToItsEnd(element: Uint8Array): boolean {
  try {
    const parsed = lib.asn1js().fromBER(element);
    return parsed.offset === element.length && parsed.result.blockLength === element.length;
  } catch {
    return false;
  }
}

/**
 * True when asn1js is known to accept the element (one that scanBer let through); false when that is not known, and
 * the caller must ask asn1js itself.
 */
export function asn1jsAccepts(element: Element): boolean {
  const { tag, whole } = element;
  if (whole.length > SMALL_ELEMENT_BYTES || (tag & 0x1f) === 0x1f || whole[1] === 0x80) return false;
  const bytes = Buffer.from(whole.buffer, whole.byteOffset, whole.length);
  return accepts(tag, bytes, 0, whole.length - element.content.length, whole.length, 0);
}

/**
 * asn1jsAccepts for a SEQUENCE made of these elements (definite length): each is known to be accepted, and all of
 * them fit in an element this module judges.
 */
export function asn1jsAcceptsEach(elements: readonly Element[]): boolean {
  let bytes = 4; // the SEQUENCE's tag and a length of up to 3 bytes
  for (const e of elements) bytes += e.whole.length;
  return bytes <= SMALL_ELEMENT_BYTES && elements.every((e) => asn1jsAccepts(e));
}

/** OIDs read so far, by their DER. */
const oids = new Map<string, string>();
const OID_ENTRIES = 1_024;

/**
 * The dotted OID of a primitive OBJECT IDENTIFIER element, as asn1js reads it, remembered by its bytes; undefined
 * when asn1js refuses it or it is of another type (the caller then asks asn1js itself).
 */
export function oidString(element: Element): string | undefined {
  if (element.tag !== 0x06 || element.whole.length > SMALL_ELEMENT_BYTES) return undefined;
  const k = key(element.whole);
  let oid = oids.get(k);
  if (oid === undefined) {
    let parsed: ReturnType<typeof Asn1js.fromBER>;
    try {
      parsed = lib.asn1js().fromBER(element.whole);
    } catch {
      return undefined;
    }
    if (parsed.offset === -1 || !(parsed.result instanceof lib.asn1js().ObjectIdentifier)) return undefined;
    oid = parsed.result.valueBlock.toString();
    if (oids.size >= OID_ENTRIES) oids.clear();
    oids.set(k, oid);
  }
  return oid;
}

const digitsAt = (b: Uint8Array, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) if (b[i]! < 0x30 || b[i]! > 0x39) return false;
  return true;
};
const numberAt = (b: Uint8Array, at: number, digits: number): number => {
  let n = 0;
  for (let i = at; i < at + digits; i++) n = n * 10 + b[i]! - 0x30;
  return n;
};

/**
 * The time of a GeneralizedTime's content of the form YYYYMMDDhhmmss[.f+]Z, computed as asn1js's
 * GeneralizedTime.fromString and toDate compute it; undefined for any other form.
 */
function generalizedTime(c: Uint8Array): Date | undefined {
  const n = c.length;
  if (n < 15 || c[n - 1] !== 0x5a || !digitsAt(c, 0, 14)) return undefined;
  let millisecond = 0;
  if (n > 15) {
    if (c[14] !== 0x2e || n < 17 || !digitsAt(c, 15, n - 1)) return undefined;
    millisecond = Math.floor(1000 * Number(`0${String.fromCharCode(...c.subarray(14, n - 1))}`));
  }
  return new Date(
    Date.UTC(numberAt(c, 0, 4), numberAt(c, 4, 2) - 1, numberAt(c, 6, 2), numberAt(c, 8, 2), numberAt(c, 10, 2), numberAt(c, 12, 2), millisecond),
  );
}

/** The time of a UTCTime's content of the form YYMMDDhhmmssZ, as asn1js's UTCTime computes it; undefined otherwise. */
function utcTime(c: Uint8Array): Date | undefined {
  if (c.length !== 13 || c[12] !== 0x5a || !digitsAt(c, 0, 12)) return undefined;
  const year = numberAt(c, 0, 2);
  return new Date(
    Date.UTC(year >= 50 ? 1900 + year : 2000 + year, numberAt(c, 2, 2) - 1, numberAt(c, 4, 2), numberAt(c, 6, 2), numberAt(c, 8, 2), numberAt(c, 10, 2)),
  );
}

/**
 * The date of a primitive UTCTime or GeneralizedTime element of the usual form, as asn1js's toDate gives it;
 * undefined for anything else (the caller then asks asn1js).
 */
export function timeValue(element: Element): Date | undefined {
  if (element.tag === 0x17) return utcTime(element.content);
  if (element.tag === 0x18) return generalizedTime(element.content);
  return undefined;
}
