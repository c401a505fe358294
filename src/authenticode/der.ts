// DER/BER elements read in place: tag, length and content as views of the blob, children read on demand. The
// blob has been through scanBer, so every length fits; asn1js then parses only the parts whose values are read.

/** One element: views of the blob, nothing copied. */
export interface Der {
  /** The first identifier octet: class, constructed bit and tag number (31: a longer tag follows). */
  readonly tag: number;
  /** Tag, length, content and, in the indefinite form, the end-of-contents octets. */
  readonly whole: Uint8Array;
  /** The content octets (without end-of-contents). */
  readonly content: Uint8Array;
}

/** First identifier octets of the types Authenticode's structure is made of. */
export const DerTag = {
  boolean: 0x01,
  integer: 0x02,
  octetString: 0x04,
  oid: 0x06,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
  context0: 0xa0,
  context1: 0xa1,
} as const;

/**
 * The element that starts at `at`.
 * @throws Error when it does not fit in `bytes` (scanBer has refused such a blob before)
 */
export function derAt(bytes: Uint8Array, at = 0): Der {
  let p = at;
  const tag = bytes[p++];
  if (tag === undefined) throw new Error(`no element at byte ${at}`);
  if ((tag & 0x1f) === 0x1f) while ((bytes[p++] ?? 0) & 0x80);
  const lenByte = bytes[p++];
  if (lenByte === undefined) throw new Error(`no length at byte ${at}`);
  let length = lenByte;
  if (lenByte === 0x80) {
    let q = p;
    while (q < bytes.length && !(bytes[q] === 0 && bytes[q + 1] === 0)) q += derAt(bytes, q).whole.length;
    if (q >= bytes.length) throw new Error(`no end-of-contents for the element at byte ${at}`);
    return { tag, whole: bytes.subarray(at, q + 2), content: bytes.subarray(p, q) };
  }
  if (lenByte > 0x80) {
    length = 0;
    for (let n = lenByte & 0x7f; n > 0; n--) length = length * 256 + (bytes[p++] ?? 0);
  }
  if (p + length > bytes.length) throw new Error(`the element at byte ${at} runs past its enclosing element`);
  return { tag, whole: bytes.subarray(at, p + length), content: bytes.subarray(p, p + length) };
}

/** The elements inside a constructed element; none for a primitive one. */
export function derChildren(element: Der): Der[] {
  if ((element.tag & 0x20) === 0) return [];
  const out: Der[] = [];
  for (let at = 0; at < element.content.length; ) {
    const child = derAt(element.content, at);
    out.push(child);
    at += child.whole.length;
  }
  return out;
}

/** `content` under a definite-length header with the identifier octet `tag`. */
export function derEncode(tag: number, content: Uint8Array): Uint8Array {
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : n < 0x10000 ? [0x82, n >> 8, n & 0xff] : [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff];
  const out = new Uint8Array(1 + length.length + n);
  out.set([tag, ...length]);
  out.set(content, 1 + length.length);
  return out;
}
