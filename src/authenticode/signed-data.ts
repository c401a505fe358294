// PKCS#7 SignedData as Authenticode uses it (Microsoft "Windows Authenticode Portable Executable Signature Format"):
// contentType SPC_INDIRECT_DATA (1.3.6.1.4.1.311.2.1.4) whose DigestInfo holds the image hash; one SignerInfo with
// authenticated attributes; unsigned attributes for timestamps (RFC 3161 1.3.6.1.4.1.311.3.3.1, legacy
// countersignature 1.2.840.113549.1.9.6) and nested signatures (1.3.6.1.4.1.311.2.4.1).
// The structure is walked in place (der.ts); asn1js and pkijs read only the parts whose values are used (the
// SignerInfo without its unsigned attributes, the content, TSTInfo), and each distinct certificate once per process;
// node:crypto checks digests and signatures, X509Certificate reads certificates.
import { createHash, verify as cryptoVerify, X509Certificate } from 'node:crypto';
import type * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { FormatError } from '../core/errors.js';
import { asn1jsAccepts, asn1jsAcceptsEach, oidString, timeValue } from './asn1-accept.js';
import { parseBer, scanBer, type BlobOrigin } from './ber-guard.js';
import { derAt, derChildren, derEncode, DerTag, type Der } from './der.js';
import type { AuthenticodeLimits } from './limits.js';
import * as lib from './libraries.js';

export const Oid = {
  signedData: '1.2.840.113549.1.7.2',
  spcIndirectData: '1.3.6.1.4.1.311.2.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  counterSignature: '1.2.840.113549.1.9.6',
  rfc3161Timestamp: '1.3.6.1.4.1.311.3.3.1',
  nestedSignature: '1.3.6.1.4.1.311.2.4.1',
  spcSpOpusInfo: '1.3.6.1.4.1.311.2.1.12',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
} as const;

const DIGESTS: Readonly<Record<string, string>> = {
  '1.2.840.113549.2.5': 'md5',
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Signature algorithms whose digest is given apart (digestAlgorithm), or implied by the OID. */
const SIGNATURES: Readonly<Record<string, { name: string; digest?: string }>> = {
  '1.2.840.113549.1.1.1': { name: 'rsa' },
  '1.2.840.113549.1.1.5': { name: 'rsa', digest: 'sha1' },
  '1.2.840.113549.1.1.11': { name: 'rsa', digest: 'sha256' },
  '1.2.840.113549.1.1.12': { name: 'rsa', digest: 'sha384' },
  '1.2.840.113549.1.1.13': { name: 'rsa', digest: 'sha512' },
  '1.2.840.10045.2.1': { name: 'ecdsa' },
  '1.2.840.10045.4.3.2': { name: 'ecdsa', digest: 'sha256' },
  '1.2.840.10045.4.3.3': { name: 'ecdsa', digest: 'sha384' },
  '1.2.840.10045.4.3.4': { name: 'ecdsa', digest: 'sha512' },
};

/** The node:crypto name of a digest OID, or undefined. */
export function digestName(oid: string): string | undefined {
  return DIGESTS[oid];
}

/** One certificate as embedded in the signature. */
export interface AuthenticodeCertificate {
  /** `CN=…, O=…` in the certificate's order. */
  readonly subject: string;
  readonly issuer: string;
  /** Serial number, upper-case hex. */
  readonly serialNumber: string;
  readonly notBefore: string;
  readonly notAfter: string;
  /** SHA-256 of the DER, lower-case hex. */
  readonly sha256: string;
}

export interface AuthenticodeTimestamp {
  readonly kind: 'rfc3161' | 'countersignature';
  /** ISO 8601 UTC. */
  readonly time: string;
  /** The time-stamping authority's certificate subject, when the token embeds it. */
  readonly signer: string | null;
  /** The token covers this signature's value and its own signature verifies with the embedded certificate. */
  readonly verified: boolean;
  readonly problem: string | null;
}

/** One parsed SignedData, before the image hash is compared. */
export interface ParsedSignature {
  /** 0 for a table entry's signature, 1 for a signature nested in it, ... */
  readonly nesting: number;
  readonly digestAlgorithm: string;
  readonly digestAlgorithmOid: string;
  /** The image hash the signature covers (SpcIndirectDataContent's DigestInfo). */
  readonly signedImageHash: Uint8Array;
  readonly signer: AuthenticodeCertificate | null;
  readonly certificates: readonly AuthenticodeCertificate[];
  readonly signatureAlgorithm: string;
  /** The SignerInfo's signature verifies with the signer certificate over the authenticated attributes, and their message digest matches the content. */
  readonly signatureValid: boolean;
  readonly signatureProblem: string | null;
  /** signingTime among the authenticated attributes: the signer's own claim, not a timestamp. */
  readonly claimedSigningTime: string | null;
  readonly timestamp: AuthenticodeTimestamp | null;
  readonly programName: string | null;
  /** DER of the signer certificate and of every embedded certificate (for chain building). */
  readonly signerCertificate: X509Certificate | null;
  readonly embedded: readonly X509Certificate[];
}

interface Context {
  readonly origin: BlobOrigin;
  readonly limits: AuthenticodeLimits;
  /** Signatures parsed so far in this file (shared by every entry and nesting level). */
  count: { value: number };
}

function malformed(ctx: Context, what: string, cause?: unknown): FormatError {
  return new FormatError(
    'SG_ERR_AC_BAD_SIGNATURE',
    `${ctx.origin.structure}: ${what}`,
    { structure: ctx.origin.structure, fileOffset: ctx.origin.fileOffset },
    cause === undefined ? undefined : { cause },
  );
}

function bytesOf(view: ArrayBuffer | Uint8Array): Uint8Array {
  return view instanceof Uint8Array ? view : new Uint8Array(view);
}

/** The content octets of an element (what follows its tag and length). */
function contentOctets(element: asn1js.AsnType): Uint8Array {
  const whole = bytesOf(element.valueBeforeDecodeView);
  const header = element.idBlock.blockLength + element.lenBlock.blockLength;
  return whole.subarray(header, whole.length - (element.lenBlock.isIndefiniteForm ? 2 : 0));
}

function hexUpper(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase();
}

function describeCertificate(x: X509Certificate): AuthenticodeCertificate {
  const oneLine = (dn: string) => dn.split('\n').filter(Boolean).join(', ');
  return {
    subject: oneLine(x.subject),
    issuer: oneLine(x.issuer),
    serialNumber: x.serialNumber.toUpperCase(),
    notBefore: new Date(x.validFrom).toISOString(),
    notAfter: new Date(x.validTo).toISOString(),
    sha256: x.fingerprint256.replace(/:/g, '').toLowerCase(),
  };
}

/** The first value of the first authenticated attribute of a type. */
function attributeDer(attrs: SignerFields['signedAttrs'], oid: string): Der | undefined {
  return attrs?.attributes.find((a) => a.type === oid)?.values[0];
}

/** An attribute value read by asn1js (which accepted it with the rest of the attributes). */
const tree = (value: Der | undefined): asn1js.AsnType | undefined => value && lib.asn1js().fromBER(value.whole).result;

/**
 * asn1js's reading of one part of the blob. The whole blob used to go through asn1js: every part is still read by it
 * (or by the certificate cache) once, so what it refused is still refused.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE when asn1js refuses the part
 */
function asn(ctx: Context, element: Der): asn1js.AsnType {
  return parseBer(element.whole, ctx.origin, ctx.limits);
}

/** Parts nothing reads, passed through asn1js all the same (asn1-accept.ts knows the answer for most). */
function accept(ctx: Context, elements: ReadonlyArray<Der | undefined>): void {
  for (const e of elements) if (e && !asn1jsAccepts(e)) asn(ctx, e);
}

function oidOf(ctx: Context, element: Der): string {
  return oidString(element) ?? (asn(ctx, element) as asn1js.ObjectIdentifier).valueBlock.toString();
}

/** A SignedData as its parts (RFC 5652 5.1), views of the blob. */
interface SignedDataParts {
  readonly eContentType: string;
  /** The content inside encapContentInfo's [0] EXPLICIT, when present. */
  readonly eContent: Der | undefined;
  /** Each entry of `certificates [0] IMPLICIT`. */
  readonly certificates: readonly Der[];
  readonly signerInfos: readonly Der[];
}

const childrenOf = (e: Der | undefined, tag: number): Der[] => (e?.tag === tag ? derChildren(e) : []);

/**
 * ContentInfo { contentType, [0] EXPLICIT content } holding a SignedData, taken apart.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE
 */
function readSignedData(ctx: Context, element: Der, what: string): SignedDataParts {
  const ci = childrenOf(element, DerTag.sequence);
  const type = ci[0];
  if (type?.tag !== DerTag.oid) throw malformed(ctx, `${what} is not a PKCS#7 ContentInfo`);
  const typeOid = oidOf(ctx, type);
  if (typeOid !== Oid.signedData) throw malformed(ctx, `${what}: the content type is ${typeOid}, not SignedData (${Oid.signedData})`);
  const sd = childrenOf(ci[1], DerTag.context0)[0];
  const fields = childrenOf(sd, DerTag.sequence);
  const encap = childrenOf(fields[2], DerTag.sequence);
  const eType = encap[0];
  const signerInfos = fields[fields.length - 1];
  if (fields[0]?.tag !== DerTag.integer || fields[1]?.tag !== DerTag.set || eType?.tag !== DerTag.oid || signerInfos?.tag !== DerTag.set || fields.length < 4) {
    throw malformed(ctx, `${what} is not a well-formed SignedData (version, digestAlgorithms, encapContentInfo, signerInfos)`);
  }
  const certs = fields.slice(3, -1).find((f) => f.tag === DerTag.context0);
  accept(ctx, [...ci.slice(2), fields[0], fields[1], ...fields.slice(3, -1).filter((f) => f !== certs), ...encap.slice(2)]);
  return {
    eContentType: oidOf(ctx, eType),
    eContent: childrenOf(encap[1], DerTag.context0)[0],
    certificates: childrenOf(certs, DerTag.context0),
    signerInfos: derChildren(signerInfos),
  };
}

/** An embedded certificate: node's reading of its DER, and the DER of its issuer and serial number for matching. */
interface EmbeddedCertificate {
  readonly x509: X509Certificate;
  readonly issuer: Uint8Array;
  readonly serial: Uint8Array;
  /** describeCertificate's result, made on first use (it throws for a date out of range). */
  description?: AuthenticodeCertificate;
}

const described = (c: EmbeddedCertificate): AuthenticodeCertificate => (c.description ??= describeCertificate(c.x509));

const der = (e: asn1js.AsnType) => bytesOf(e.valueBeforeDecodeView);
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

/**
 * Certificates read so far in this process, found by their length and last bytes (their signature's), then compared
 * whole with their DER: files signed by the same publisher and timestamped by the same authority carry the same few
 * chains, each read once. Emptied when full (a stream of distinct certificates).
 */
const certificateCache = new Map<string, Array<{ readonly der: Buffer; readonly cert: EmbeddedCertificate }>>();
let certificatesCached = 0;
const CERTIFICATE_CACHE_ENTRIES = 1024;
const CERTIFICATE_TAIL_BYTES = 24;

function cachedCertificate(ctx: Context, c: Der): EmbeddedCertificate {
  const whole = Buffer.from(c.whole.buffer, c.whole.byteOffset, c.whole.length);
  const key = `${whole.length}:${whole.toString('latin1', Math.max(0, whole.length - CERTIFICATE_TAIL_BYTES))}`;
  const known = certificateCache.get(key);
  const found = known?.find((k) => k.der.equals(whole));
  if (found) return found.cert;
  const cert = readCertificate(ctx, c);
  if (certificatesCached >= CERTIFICATE_CACHE_ENTRIES) {
    certificateCache.clear();
    certificatesCached = 0;
  }
  // A copy: the cache outlives the file's bytes.
  const entry = { der: Buffer.from(whole), cert };
  if (known && certificateCache.has(key)) known.push(entry);
  else certificateCache.set(key, [entry]);
  certificatesCached++;
  return cert;
}

/** The serial number and issuer of a certificate asn1js is known to accept, over its DER; null for another shape. */
function serialAndIssuerOfDer(element: Der): { serial: Uint8Array; issuer: Uint8Array } | null {
  const t = childrenOf(childrenOf(element, DerTag.sequence)[0], DerTag.sequence);
  const at = t[0]?.tag === DerTag.context0 ? 1 : 0;
  const serial = t[at];
  const issuer = t[at + 2];
  // Copies: the cache outlives the file's bytes.
  return serial?.tag === DerTag.integer && issuer?.tag === DerTag.sequence ? { serial: serial.whole.slice(), issuer: issuer.whole.slice() } : null;
}

function x509Of(ctx: Context, element: Der): X509Certificate {
  try {
    return new X509Certificate(element.whole);
  } catch (error) {
    throw malformed(ctx, `an embedded certificate cannot be read (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

function readCertificate(ctx: Context, element: Der): EmbeddedCertificate {
  const known = asn1jsAccepts(element) ? serialAndIssuerOfDer(element) : null;
  if (known) return { x509: x509Of(ctx, element), ...known };
  // Certificate { tbsCertificate { [0] version?, serialNumber, signature, issuer, ... }, ... }
  const c = asn(ctx, element) as asn1js.Sequence;
  const tbs = c.valueBlock.value[0];
  const t = tbs instanceof lib.asn1js().Sequence ? tbs.valueBlock.value : [];
  const at = t[0] instanceof lib.asn1js().Constructed && t[0].idBlock.tagClass === 3 && t[0].idBlock.tagNumber === 0 ? 1 : 0;
  const serial = t[at];
  const issuer = t[at + 2];
  if (!(serial instanceof lib.asn1js().Integer) || !(issuer instanceof lib.asn1js().Sequence))
    throw malformed(ctx, 'an embedded certificate has no serial number and issuer');
  return { x509: x509Of(ctx, element), issuer: der(issuer), serial: der(serial) };
}

/** The embedded certificates. Entries of other formats (attribute certificates, RFC 5652 10.2.2) are skipped. */
function readCertificates(ctx: Context, parts: SignedDataParts): EmbeddedCertificate[] {
  const out: EmbeddedCertificate[] = [];
  for (const c of parts.certificates) {
    if (c.tag === DerTag.sequence) out.push(cachedCertificate(ctx, c));
    else accept(ctx, [c]); // an entry of another format (an attribute certificate, ...), skipped once accepted
  }
  return out;
}

/** The certificate the SignerInfo names by issuer and serial number (DER compared byte for byte), or null. */
function findSigner(certs: readonly EmbeddedCertificate[], signerInfo: Der): EmbeddedCertificate | null {
  const [issuer, serial] = childrenOf(childrenOf(signerInfo, DerTag.sequence)[1], DerTag.sequence);
  if (!issuer || !serial) return null; // a subjectKeyIdentifier [0]: not used by Authenticode
  return certs.find((c) => sameBytes(c.issuer, issuer.whole) && sameBytes(c.serial, serial.whole)) ?? null;
}

interface Attribute {
  readonly type: string;
  readonly values: readonly Der[];
}

/** What is read of a SignerInfo (RFC 5652 5.3). */
interface SignerFields {
  readonly digestAlgorithm: string;
  readonly signatureAlgorithm: string;
  /** The authenticated attributes, and their DER as signed: a SET OF (tag 0x31), not the [0] IMPLICIT that carries them. */
  readonly signedAttrs: { readonly attributes: readonly Attribute[]; readonly encoded: Uint8Array } | undefined;
  readonly signature: Uint8Array;
}

const is = <T extends abstract new (...args: never[]) => asn1js.AsnType>(e: unknown, type: T, constructed: boolean): e is InstanceType<T> =>
  e instanceof type && (e as asn1js.AsnType).idBlock.isConstructed === constructed;

/** AlgorithmIdentifier { algorithm, parameters ANY OPTIONAL }: the OID, or null for another shape. */
function algorithmOf(e: asn1js.AsnType | undefined): string | null {
  const f = is(e, lib.asn1js().Sequence, true) ? e.valueBlock.value : [];
  return (f.length === 1 || f.length === 2) && is(f[0], lib.asn1js().ObjectIdentifier, false) ? f[0].valueBlock.toString() : null;
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

/** Name: SEQUENCE OF SET OF { type OID, value }. */
function isName(e: asn1js.AsnType | undefined): boolean {
  const A = lib.asn1js();
  return (
    is(e, A.Sequence, true) &&
    e.valueBlock.value.every(
      (rdn) =>
        is(rdn, A.Set, true) &&
        rdn.valueBlock.value.length > 0 &&
        rdn.valueBlock.value.every(
          (atv) => is(atv, A.Sequence, true) && atv.valueBlock.value.length === 2 && is(atv.valueBlock.value[0], A.ObjectIdentifier, false),
        ),
    )
  );
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

/** algorithmOf over the DER: the OID, or null for another shape. */
function algorithmOfDer(e: Der | undefined): string | null {
  const f = childrenOf(e, DerTag.sequence);
  return (f.length === 1 || f.length === 2) && f[0]!.tag === DerTag.oid ? (oidString(f[0]!) ?? null) : null;
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

/** isName over the DER. */
const isNameDer = (e: Der | undefined): boolean =>
  e?.tag === DerTag.sequence &&
  derChildren(e).every((rdn) => {
    const atvs = childrenOf(rdn, DerTag.set);
    return (
      atvs.length > 0 &&
      atvs.every((atv) => {
        const pair = childrenOf(atv, DerTag.sequence);
        return pair.length === 2 && pair[0]!.tag === DerTag.oid;
      })
    );
  });

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
function readSignerInfo(ctx: Context, element: Der, what: string): { info: SignerFields; unsigned: UnsignedAttribute[] } {
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
function readSignerInfoOnly(ctx: Context, element: Der, what: string): SignerFields {
  const { info, unsigned } = readSignerInfo(ctx, element, what);
  for (const a of unsigned) accept(ctx, a.values);
  return info;
}

interface SignerCheck {
  readonly valid: boolean;
  readonly problem: string | null;
  readonly digest: string | null;
}

/**
 * Checks one SignerInfo: the message digest attribute against `content` and the signature with `cert`.
 * Without authenticated attributes the signature covers the content itself.
 */
function checkSignerInfo(info: SignerFields, content: Uint8Array, cert: X509Certificate | null): SignerCheck {
  const digest = digestName(info.digestAlgorithm);
  if (!digest) return { valid: false, problem: `unsupported digest algorithm ${info.digestAlgorithm}`, digest: null };
  const sigAlg = SIGNATURES[info.signatureAlgorithm];
  if (!sigAlg) return { valid: false, problem: `unsupported signature algorithm ${info.signatureAlgorithm}`, digest };
  if (!cert) return { valid: false, problem: 'the signer certificate is not among the embedded certificates', digest };
  let signedBytes: Uint8Array;
  if (info.signedAttrs) {
    const value = attributeDer(info.signedAttrs, Oid.messageDigest);
    // A primitive OCTET STRING's value is its content octets; asn1js reads any other form.
    const md = value?.tag === DerTag.octetString ? value.content : tree(value);
    const expected = md instanceof Uint8Array ? md : md instanceof lib.asn1js().OctetString ? md.valueBlock.valueHexView : undefined;
    if (!expected) return { valid: false, problem: 'no message digest among the authenticated attributes', digest };
    const actual = createHash(digest).update(content).digest();
    if (!actual.equals(expected)) return { valid: false, problem: 'the authenticated message digest does not match the signed content', digest };
    signedBytes = info.signedAttrs.encoded;
  } else {
    signedBytes = content;
  }
  const signature = info.signature;
  let ok: boolean;
  try {
    ok = cryptoVerify(sigAlg.digest ?? digest, signedBytes, cert.publicKey, signature);
  } catch (error) {
    return { valid: false, problem: `the signature cannot be checked (${error instanceof Error ? error.message : String(error)})`, digest };
  }
  return ok ? { valid: true, problem: null, digest } : { valid: false, problem: 'the signature does not verify with the signer certificate', digest };
}

function timeOf(element: Der | undefined): Date | null {
  const known = element && timeValue(element);
  if (known) return known;
  const value = tree(element);
  if (value instanceof lib.asn1js().UTCTime || value instanceof lib.asn1js().GeneralizedTime) return value.toDate();
  return null;
}

/**
 * The bytes of an OCTET STRING, or undefined for another type. A primitive one is read in place: asn1js refuses none
 * that the scan let through (what it may find inside is only a guess), and the TSTInfo inside is parsed next anyway.
 */
function octets(ctx: Context, element: Der | undefined): Uint8Array | undefined {
  if (element?.tag === DerTag.octetString) return element.content;
  const value = element && asn(ctx, element);
  return value instanceof lib.asn1js().OctetString ? bytesOf(value.getValue()) : undefined;
}

/** What is read of an RFC 3161 TSTInfo. */
interface TimestampFields {
  readonly imprintAlgorithm: string;
  readonly imprint: Buffer;
  readonly genTime: Date;
}

const pkijsTimestampFields = (tst: pkijs.TSTInfo): TimestampFields => ({
  imprintAlgorithm: tst.messageImprint.hashAlgorithm.algorithmId,
  imprint: Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView),
  genTime: tst.genTime,
});

/**
 * A TSTInfo of the usual shape (RFC 3161 2.4.2: accuracy, ordering, nonce and a directoryName tsa at most, no
 * extensions), read from the asn1js tree: a shape pkijs's schema accepts, without its cost. Null for any other shape.
 */
function timestampFieldsOf(e: asn1js.AsnType): TimestampFields | null {
  const A = lib.asn1js();
  const f = is(e, A.Sequence, true) ? e.valueBlock.value : [];
  const [version, policy, messageImprint, serial, genTime] = f;
  const [algorithm, imprint, ...more] = is(messageImprint, A.Sequence, true) ? messageImprint.valueBlock.value : [];
  const imprintAlgorithm = algorithmOf(algorithm);
  if (!is(version, A.Integer, false) || !is(policy, A.ObjectIdentifier, false) || !imprintAlgorithm || !is(imprint, A.OctetString, false) || more.length > 0)
    return null;
  if (!is(serial, A.Integer, false) || !is(genTime, A.GeneralizedTime, false)) return null;
  let at = 5;
  const optional = (test: (x: asn1js.AsnType | undefined) => boolean) => test(f[at]) && ++at;
  const context = (x: asn1js.AsnType | undefined, tag: number, constructed: boolean) =>
    x?.idBlock.tagClass === 3 && x.idBlock.tagNumber === tag && x.idBlock.isConstructed === constructed;
  optional((x) => {
    // Accuracy { seconds INTEGER OPTIONAL, millis [0] OPTIONAL, micros [1] OPTIONAL }
    const a = is(x, A.Sequence, true) ? x.valueBlock.value : null;
    let i = 0;
    if (a && is(a[i], A.Integer, false)) i++;
    if (a && context(a[i], 0, false)) i++;
    if (a && context(a[i], 1, false)) i++;
    return a !== null && i === a.length;
  });
  optional((x) => is(x, A.Boolean, false));
  optional((x) => is(x, A.Integer, false));
  optional((x) => {
    // tsa [0] GeneralName: directoryName [4] Name
    const names = context(x, 0, true) ? (x as asn1js.Constructed).valueBlock.value : [];
    const name = names[0];
    return (
      names.length === 1 &&
      context(name, 4, true) &&
      (name as asn1js.Constructed).valueBlock.value.length === 1 &&
      isName((name as asn1js.Constructed).valueBlock.value[0])
    );
  });
  if (at !== f.length) return null;
  return { imprintAlgorithm, imprint: Buffer.from(imprint.valueBlock.valueHexView), genTime: genTime.toDate() };
}

/**
 * timestampFieldsOf over the DER of a TSTInfo that asn1js is known to accept (short tags only: each identifier
 * octet tested is the asn1js class and form timestampFieldsOf tests). Null for any other shape or time form.
 */
function timestampFieldsOfDer(e: Der): TimestampFields | null {
  const f = childrenOf(e, DerTag.sequence);
  const [version, policy, messageImprint, serial, genTime] = f;
  const [algorithm, imprint, ...more] = childrenOf(messageImprint, DerTag.sequence);
  const imprintAlgorithm = algorithmOfDer(algorithm);
  if (version?.tag !== DerTag.integer || policy?.tag !== DerTag.oid || !imprintAlgorithm || imprint?.tag !== DerTag.octetString || more.length > 0) return null;
  const time = genTime?.tag === DerTag.generalizedTime ? timeValue(genTime) : undefined;
  if (serial?.tag !== DerTag.integer || !time) return null;
  let at = 5;
  const optional = (test: (x: Der | undefined) => boolean) => test(f[at]) && ++at;
  optional((x) => {
    // Accuracy { seconds INTEGER OPTIONAL, millis [0] OPTIONAL, micros [1] OPTIONAL }
    const a = x?.tag === DerTag.sequence ? derChildren(x) : null;
    let i = 0;
    if (a && a[i]?.tag === DerTag.integer) i++;
    if (a && a[i]?.tag === 0x80) i++;
    if (a && a[i]?.tag === 0x81) i++;
    return a !== null && i === a.length;
  });
  optional((x) => x?.tag === DerTag.boolean);
  optional((x) => x?.tag === DerTag.integer);
  optional((x) => {
    // tsa [0] GeneralName: directoryName [4] Name
    const names = childrenOf(x, DerTag.context0);
    const name = childrenOf(names[0], 0xa4);
    return names.length === 1 && name.length === 1 && isNameDer(name[0]);
  });
  if (at !== f.length) return null;
  return { imprintAlgorithm, imprint: Buffer.from(imprint.content.buffer, imprint.content.byteOffset, imprint.content.length), genTime: time };
}

function readRfc3161(ctx: Context, value: Der, signatureValue: Uint8Array): AuthenticodeTimestamp {
  const parts = readSignedData(ctx, value, 'the RFC 3161 timestamp token');
  const tstBytes = octets(ctx, parts.eContent);
  if (parts.eContentType !== Oid.tstInfo || !tstBytes) throw malformed(ctx, `the RFC 3161 timestamp token holds ${parts.eContentType}, not TSTInfo`);
  let tst: TimestampFields;
  try {
    const origin = { structure: `${ctx.origin.structure} TSTInfo`, fileOffset: -1 };
    const element = derAt(tstBytes.subarray(0, scanBer(tstBytes, origin, ctx.limits)));
    const known = asn1jsAccepts(element) ? timestampFieldsOfDer(element) : null;
    if (known) tst = known;
    else {
      const parsed = parseBer(tstBytes, origin, ctx.limits);
      tst = timestampFieldsOf(parsed) ?? pkijsTimestampFields(new (lib.pkijs().TSTInfo)({ schema: parsed }));
    }
  } catch (error) {
    if (error instanceof FormatError) throw error;
    throw malformed(ctx, 'the RFC 3161 TSTInfo cannot be read', error);
  }
  const certs = readCertificates(ctx, parts);
  const [signerElement, ...otherSigners] = parts.signerInfos;
  accept(ctx, otherSigners);
  const cert = signerElement ? findSigner(certs, signerElement) : null;
  const imprintDigest = digestName(tst.imprintAlgorithm);
  let problem: string | null = null;
  if (!imprintDigest) problem = `unsupported message imprint digest ${tst.imprintAlgorithm}`;
  else if (!createHash(imprintDigest).update(signatureValue).digest().equals(tst.imprint)) {
    problem = "the timestamp's message imprint does not match this signature";
  }
  if (problem)
    accept(ctx, [signerElement]); // not read below
  else if (!signerElement) problem = 'the timestamp token has no signer';
  else {
    const check = checkSignerInfo(readSignerInfoOnly(ctx, signerElement, 'the timestamp signer'), tstBytes, cert?.x509 ?? null);
    if (!check.valid) problem = `timestamp: ${check.problem}`;
  }
  return { kind: 'rfc3161', time: tst.genTime.toISOString(), signer: cert ? described(cert).subject : null, verified: problem === null, problem };
}

function readCountersignature(ctx: Context, value: Der, signatureValue: Uint8Array, certs: readonly EmbeddedCertificate[]): AuthenticodeTimestamp {
  const info = readSignerInfoOnly(ctx, value, 'the countersignature');
  const time = timeOf(attributeDer(info.signedAttrs, Oid.signingTime));
  if (!time) throw malformed(ctx, 'the countersignature has no signing time');
  const cert = findSigner(certs, value);
  const check = checkSignerInfo(info, signatureValue, cert?.x509 ?? null);
  return { kind: 'countersignature', time: time.toISOString(), signer: cert ? described(cert).subject : null, verified: check.valid, problem: check.problem };
}

/**
 * Program names read so far, by the DER of their SpcSpOpusInfo (one per publisher and product), each at most
 * PROGRAM_NAME_KEY_BYTES long (a larger one is read every time: the cache stays within 4 MiB). Emptied when full.
 */
const programNames = new Map<string, string | null>();
const PROGRAM_NAME_ENTRIES = 1_024;
const PROGRAM_NAME_KEY_BYTES = 4_096;

function readProgramName(info: SignerFields): string | null {
  const value = attributeDer(info.signedAttrs, Oid.spcSpOpusInfo);
  if (!value) return null;
  if (value.whole.length > PROGRAM_NAME_KEY_BYTES) return programNameOf(tree(value));
  const key = Buffer.from(value.whole.buffer, value.whole.byteOffset, value.whole.length).toString('latin1');
  let name = programNames.get(key);
  if (name === undefined) {
    name = programNameOf(tree(value));
    if (programNames.size >= PROGRAM_NAME_ENTRIES) programNames.clear();
    programNames.set(key, name);
  }
  return name;
}

function programNameOf(opus: asn1js.AsnType | undefined): string | null {
  // SpcSpOpusInfo ::= SEQUENCE { programName [0] EXPLICIT SpcString OPTIONAL, moreInfo [1] ... }
  if (!(opus instanceof lib.asn1js().Sequence)) return null;
  const first = opus.valueBlock.value[0];
  if (!(first instanceof lib.asn1js().Constructed) || first.idBlock.tagClass !== 3 || first.idBlock.tagNumber !== 0) return null;
  const spcString = first.valueBlock.value[0];
  if (!spcString || spcString.idBlock.tagClass !== 3) return null;
  const raw = contentOctets(spcString);
  // [0] IMPLICIT BMPString (UTF-16BE) or [1] IMPLICIT IA5String.
  if (spcString.idBlock.tagNumber === 0) return raw.length % 2 === 0 ? Buffer.from(raw).swap16().toString('utf16le') : null;
  return Buffer.from(raw).toString('latin1');
}

/**
 * The DigestInfo of SpcIndirectDataContent ::= SEQUENCE { data SpcAttributeTypeAndOptionalValue, messageDigest DigestInfo }.
 * Read over the DER when asn1js is known to accept it and the shape is the usual one (short tags, so each identifier
 * octet is the asn1js class tested below), else through asn1js as before.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE
 */
function imageDigestOf(ctx: Context, content: Der): { digestOid: string; imageHash: Uint8Array } {
  if (asn1jsAccepts(content)) {
    const digestInfo = childrenOf(content, DerTag.sequence)[1];
    const [algId, hashValue] = childrenOf(digestInfo, DerTag.sequence);
    const algOid = childrenOf(algId, DerTag.sequence)[0];
    const digestOid = algOid?.tag === DerTag.oid ? oidString(algOid) : undefined;
    if (digestOid !== undefined && hashValue?.tag === DerTag.octetString) return { digestOid, imageHash: hashValue.content };
  }
  const indirect = asn(ctx, content);
  const fields = indirect instanceof lib.asn1js().Sequence ? indirect.valueBlock.value : [];
  const digestInfo = fields[1];
  const algId = digestInfo instanceof lib.asn1js().Sequence ? digestInfo.valueBlock.value[0] : undefined;
  const algOid = algId instanceof lib.asn1js().Sequence ? algId.valueBlock.value[0] : undefined;
  const hashValue = digestInfo instanceof lib.asn1js().Sequence ? digestInfo.valueBlock.value[1] : undefined;
  if (!(algOid instanceof lib.asn1js().ObjectIdentifier) || !(hashValue instanceof lib.asn1js().OctetString)) {
    throw malformed(ctx, 'SpcIndirectDataContent has no DigestInfo (algorithm and image hash)');
  }
  return { digestOid: algOid.valueBlock.toString(), imageHash: bytesOf(hashValue.valueBlock.valueHexView) };
}

/**
 * Parses one Authenticode ContentInfo (a table entry or a nested signature) and everything nested in it.
 * @returns the signature and its nested signatures, outermost first
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE, SG_ERR_AC_BUDGET
 */
export function parseSignedData(element: Der, ctx: Context, nesting = 0): ParsedSignature[] {
  if (++ctx.count.value > ctx.limits.maxSignatures) {
    throw new FormatError('SG_ERR_AC_BUDGET', `${ctx.origin.structure} holds more than ${ctx.limits.maxSignatures} signatures (nested ones counted)`, {
      structure: ctx.origin.structure,
      fileOffset: ctx.origin.fileOffset,
    });
  }
  const parts = readSignedData(ctx, element, 'the signature');
  if (parts.eContentType !== Oid.spcIndirectData || !parts.eContent) {
    throw malformed(ctx, `the signed content is ${parts.eContentType}, not SpcIndirectDataContent (${Oid.spcIndirectData})`);
  }
  const { digestOid, imageHash } = imageDigestOf(ctx, parts.eContent);
  const signerElement = parts.signerInfos[0];
  if (!signerElement || parts.signerInfos.length !== 1)
    throw malformed(ctx, `Authenticode needs exactly one SignerInfo; this one has ${parts.signerInfos.length}`);
  const { info: signerInfo, unsigned } = readSignerInfo(ctx, signerElement, 'the signer');
  const certs = readCertificates(ctx, parts);
  const cert = findSigner(certs, signerElement);
  const check = checkSignerInfo(signerInfo, parts.eContent.content, cert?.x509 ?? null);
  const signatureValue = signerInfo.signature;
  let timestamp: AuthenticodeTimestamp | null = null;
  const nested: ParsedSignature[] = [];
  for (const attr of unsigned) {
    for (const value of attr.values) {
      if (attr.type === Oid.rfc3161Timestamp && !timestamp) timestamp = readRfc3161(ctx, value, signatureValue);
      else if (attr.type === Oid.counterSignature && !timestamp) timestamp = readCountersignature(ctx, value, signatureValue, certs);
      else if (attr.type === Oid.nestedSignature) nested.push(...parseSignedData(value, ctx, nesting + 1));
      else accept(ctx, [value]);
    }
  }
  const claimed = timeOf(attributeDer(signerInfo.signedAttrs, Oid.signingTime));
  const sigAlg = SIGNATURES[signerInfo.signatureAlgorithm];
  return [
    {
      nesting,
      digestAlgorithm: digestName(digestOid) ?? digestOid,
      digestAlgorithmOid: digestOid,
      signedImageHash: imageHash,
      signer: cert ? described(cert) : null,
      certificates: certs.map(described),
      signatureAlgorithm: sigAlg ? `${sigAlg.name}-${sigAlg.digest ?? check.digest ?? '?'}` : signerInfo.signatureAlgorithm,
      signatureValid: check.valid,
      signatureProblem: check.problem,
      claimedSigningTime: claimed ? claimed.toISOString() : null,
      timestamp,
      programName: readProgramName(signerInfo),
      signerCertificate: cert?.x509 ?? null,
      embedded: certs.map((c) => c.x509),
    },
    ...nested,
  ];
}

export { hexUpper };
