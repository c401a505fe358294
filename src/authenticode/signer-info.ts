// A SignerInfo (RFC 5652 5.3): what is signed and read of it, and its unsigned attributes (timestamps, nested
// signatures) as views. Read over the DER when asn1js is known to accept it and its shape is the usual one, else
// from the asn1js tree, else by pkijs, which also words the refusal of a shape that is no SignerInfo.
import type * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { asn1jsAccepts, asn1jsAcceptsEach, oidString } from './asn1-accept.js';
import { accept, algorithmOf, algorithmOfDer, asn, bytesOf, childrenOf, type Context, der, is, isName, isNameDer, malformed, oidOf } from './asn1-read.js';
import { derAt, derChildren, derEncode, DerTag, type Der } from './der.js';
import * as lib from './libraries.js';

interface Attribute {
  readonly type: string;
  readonly values: readonly Der[];
}

/** What is read of a SignerInfo (RFC 5652 5.3). */
export interface SignerFields {
  readonly digestAlgorithm: string;
  readonly signatureAlgorithm: string;
  /** The authenticated attributes, and their DER as signed: a SET OF (tag 0x31), not the [0] IMPLICIT that carries them. */
  readonly signedAttrs: { readonly attributes: readonly Attribute[]; readonly encoded: Uint8Array } | undefined;
  readonly signature: Uint8Array;
}

/** The first value of the first authenticated attribute of a type. */
export function attributeDer(attrs: SignerFields['signedAttrs'], oid: string): Der | undefined {
  return attrs?.attributes.find((a) => a.type === oid)?.values[0];
}

/** SET OF Attribute { type, SET OF value } with at least one of each, or null for another shape. */
function attributesOf(list: readonly asn1js.AsnType[]): Attribute[] | null {
  const out: Attribute[] = [];
  for (const a of list) {
    const [type, values, ...more] = is(a, lib.asn1js().Sequence, true) ? a.valueBlock.value : [];
    if (!is(type, lib.asn1js().ObjectIdentifier, false) || !is(values, lib.asn1js().Set, true) || values.valueBlock.value.length === 0 || more.length > 0)
      return null;
    out.push({ type: type.valueBlock.toString(), values: values.valueBlock.value.map((v) => derAt(der(v))) });
  }
  return out.length > 0 ? out : null;
}

/**
 * A SignerInfo of the usual shape (issuer and serial number, no unsigned attributes), read from the asn1js tree:
 * a shape pkijs's schema accepts, without its cost. Null for any other shape: pkijs then judges it.
 */
function signerFieldsOf(e: asn1js.AsnType): SignerFields | null {
  const A = lib.asn1js();
  const f = is(e, A.Sequence, true) ? e.valueBlock.value : [];
  const attrs = f[3];
  const signed = is(attrs, A.Constructed, true) && attrs.idBlock.tagClass === 3 && attrs.idBlock.tagNumber === 0 ? attrs : undefined;
  if (f.length !== (signed ? 6 : 5)) return null;
  const [version, sid, digest] = f;
  const [sigAlg, signature] = f.slice(signed ? 4 : 3);
  const issuerAndSerial = is(sid, A.Sequence, true) ? sid.valueBlock.value : [];
  if (
    !is(version, A.Integer, false) ||
    issuerAndSerial.length !== 2 ||
    !isName(issuerAndSerial[0]) ||
    !is(issuerAndSerial[1], A.Integer, false) ||
    !is(signature, A.OctetString, false)
  )
    return null;
  const digestAlgorithm = algorithmOf(digest);
  const signatureAlgorithm = algorithmOf(sigAlg);
  const attributes = signed ? attributesOf(signed.valueBlock.value) : undefined;
  if (!digestAlgorithm || !signatureAlgorithm || attributes === null) return null;
  const encoded = signed ? Uint8Array.from(der(signed)) : undefined;
  if (encoded) encoded[0] = 0x31;
  return {
    digestAlgorithm,
    signatureAlgorithm,
    signedAttrs: attributes && encoded && { attributes, encoded },
    signature: bytesOf(signature.valueBlock.valueHexView),
  };
}

/** attributesOf over the DER of `[0] IMPLICIT SET OF Attribute`. */
function attributesOfDer(set: Der): Attribute[] | null {
  const out: Attribute[] = [];
  for (const a of derChildren(set)) {
    const [type, values, ...more] = childrenOf(a, DerTag.sequence);
    const oid = type?.tag === DerTag.oid ? oidString(type) : undefined;
    const list = childrenOf(values, DerTag.set);
    if (oid === undefined || list.length === 0 || more.length > 0) return null;
    out.push({ type: oid, values: list });
  }
  return out.length > 0 ? out : null;
}

/**
 * signerFieldsOf over the fields of a SignerInfo that asn1js is known to accept (asn1-accept.ts): with short tags only,
 * each identifier octet tested here is the asn1js class and form signerFieldsOf tests, so the same shape gives the
 * same fields. Null for any other shape: asn1js and signerFieldsOf (or pkijs) then judge it as before.
 */
function signerFieldsOfDer(f: readonly Der[]): SignerFields | null {
  const signed = f[3]?.tag === DerTag.context0 ? f[3] : undefined;
  if (f.length !== (signed ? 6 : 5)) return null;
  const [version, sid, digest] = f;
  const [sigAlg, signature] = f.slice(signed ? 4 : 3);
  const issuerAndSerial = childrenOf(sid, DerTag.sequence);
  if (
    version!.tag !== DerTag.integer ||
    issuerAndSerial.length !== 2 ||
    !isNameDer(issuerAndSerial[0]) ||
    issuerAndSerial[1]!.tag !== DerTag.integer ||
    signature!.tag !== DerTag.octetString
  )
    return null;
  const digestAlgorithm = algorithmOfDer(digest);
  const signatureAlgorithm = algorithmOfDer(sigAlg);
  const attributes = signed ? attributesOfDer(signed) : undefined;
  if (!digestAlgorithm || !signatureAlgorithm || attributes === null) return null;
  const encoded = signed ? Uint8Array.from(signed.whole) : undefined;
  if (encoded) encoded[0] = 0x31;
  return { digestAlgorithm, signatureAlgorithm, signedAttrs: attributes && encoded && { attributes, encoded }, signature: signature!.content };
}

function parseSignerInfo(ctx: Context, element: asn1js.AsnType, what: string): pkijs.SignerInfo {
  try {
    return new (lib.pkijs().SignerInfo)({ schema: element });
  } catch (error) {
    throw malformed(ctx, `${what} is not a SignerInfo (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

interface UnsignedAttribute {
  readonly type: string;
  readonly values: readonly Der[];
}

/** `[1] IMPLICIT SET OF Attribute { type, SET OF value }`, or null for another shape. */
function readAttributes(ctx: Context, set: Der): UnsignedAttribute[] | null {
  const out: UnsignedAttribute[] = [];
  for (const a of derChildren(set)) {
    const [type, values, ...more] = childrenOf(a, DerTag.sequence);
    if (type?.tag !== DerTag.oid || values?.tag !== DerTag.set || more.length > 0) return null;
    out.push({ type: oidOf(ctx, type), values: derChildren(values) });
  }
  return out;
}

/**
 * A SignerInfo through pkijs, and its unsigned attributes (timestamps, nested signatures: most of its bytes) as views,
 * which pkijs does not see unless their shape is not the usual one.
 */
export function readSignerInfo(ctx: Context, element: Der, what: string): { info: SignerFields; unsigned: UnsignedAttribute[] } {
  const fields = childrenOf(element, DerTag.sequence);
  const last = fields[fields.length - 1];
  const unsigned = last?.tag === DerTag.context1 ? readAttributes(ctx, last) : null;
  // What is signed and read: the fields without the unsigned attributes, as one SEQUENCE (asn1js judges them so).
  const signedFields = unsigned ? fields.slice(0, -1) : fields;
  const known = (unsigned ? asn1jsAcceptsEach(signedFields) : asn1jsAccepts(element)) ? signerFieldsOfDer(signedFields) : null;
  if (known) return { info: known, unsigned: unsigned ?? [] };
  const signed =
    unsigned && last ? derAt(derEncode(DerTag.sequence, element.content.subarray(0, last.whole.byteOffset - element.content.byteOffset))) : element;
  const tree = asn(ctx, signed);
  const usual = signerFieldsOf(tree);
  if (usual) return { info: usual, unsigned: unsigned ?? [] };
  const info = parseSignerInfo(ctx, tree, what);
  const values = (a: pkijs.Attribute) => (a.values as asn1js.AsnType[]).map((v) => derAt(der(v)));
  return {
    info: {
      digestAlgorithm: info.digestAlgorithm.algorithmId,
      signatureAlgorithm: info.signatureAlgorithm.algorithmId,
      signedAttrs: info.signedAttrs && {
        attributes: info.signedAttrs.attributes.map((a) => ({ type: a.type, values: values(a) })),
        encoded: bytesOf(info.signedAttrs.encodedValue),
      },
      signature: bytesOf(info.signature.valueBlock.valueHexView),
    },
    unsigned: unsigned ?? (info.unsignedAttrs?.attributes ?? []).map((a) => ({ type: a.type, values: values(a) })),
  };
}

/** A SignerInfo whose unsigned attributes nothing reads (a timestamp's signer, a countersignature). */
export function readSignerInfoOnly(ctx: Context, element: Der, what: string): SignerFields {
  const { info, unsigned } = readSignerInfo(ctx, element, what);
  for (const a of unsigned) accept(ctx, a.values);
  return info;
}
