// PKCS#7 SignedData as Authenticode uses it (Microsoft "Windows Authenticode Portable Executable Signature Format"):
// contentType SPC_INDIRECT_DATA (1.3.6.1.4.1.311.2.1.4) whose DigestInfo holds the image hash; one SignerInfo with
// authenticated attributes; unsigned attributes for timestamps (RFC 3161 1.3.6.1.4.1.311.3.3.1, legacy
// countersignature 1.2.840.113549.1.9.6) and nested signatures (1.3.6.1.4.1.311.2.4.1).
// pkijs reads the CMS structures, node:crypto checks digests and signatures, X509Certificate reads certificates.
import { createHash, verify as cryptoVerify, X509Certificate } from 'node:crypto';
import type * as asn1js from 'asn1js';
import type * as pkijs from 'pkijs';
import { FormatError } from '../core/errors.js';
import { parseBer, type BlobOrigin } from './ber-guard.js';
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
  /** Certificates already read in this file, by their DER (base64). */
  readonly x509Cache: Map<string, X509Certificate>;
}

function malformed(ctx: Context, what: string, cause?: unknown): FormatError {
  return new FormatError('SG_ERR_AC_BAD_SIGNATURE', `${ctx.origin.structure}: ${what}`, { structure: ctx.origin.structure, fileOffset: ctx.origin.fileOffset }, cause === undefined ? undefined : { cause });
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

function attribute(attrs: pkijs.SignedAndUnsignedAttributes | undefined, oid: string): pkijs.Attribute[] {
  return (attrs?.attributes ?? []).filter((a) => a.type === oid);
}

/** A SignedData as its parts (RFC 5652 5.1), read from the asn1js tree without re-encoding anything. */
interface SignedDataParts {
  readonly eContentType: string;
  /** The content inside encapContentInfo's [0] EXPLICIT, when present. */
  readonly eContent: asn1js.AsnType | undefined;
  /** Each entry of `certificates [0] IMPLICIT`. */
  readonly certificates: readonly asn1js.AsnType[];
  readonly signerInfos: readonly asn1js.AsnType[];
}

const isContext = (e: asn1js.AsnType | undefined, tag: number): e is asn1js.Constructed => e instanceof lib.asn1js().Constructed && e.idBlock.tagClass === 3 && e.idBlock.tagNumber === tag;

/**
 * ContentInfo { contentType, [0] EXPLICIT content } holding a SignedData, taken apart.
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE
 */
function readSignedData(ctx: Context, element: asn1js.AsnType, what: string): SignedDataParts {
  const ci = element instanceof lib.asn1js().Sequence ? element.valueBlock.value : [];
  const type = ci[0];
  if (!(type instanceof lib.asn1js().ObjectIdentifier)) throw malformed(ctx, `${what} is not a PKCS#7 ContentInfo`);
  if (type.valueBlock.toString() !== Oid.signedData) throw malformed(ctx, `${what}: the content type is ${type.valueBlock.toString()}, not SignedData (${Oid.signedData})`);
  const wrapped = ci[1];
  const sd = isContext(wrapped, 0) ? wrapped.valueBlock.value[0] : undefined;
  const fields = sd instanceof lib.asn1js().Sequence ? sd.valueBlock.value : [];
  const encap = fields[2] instanceof lib.asn1js().Sequence ? fields[2].valueBlock.value : [];
  const eType = encap[0];
  const signerInfos = fields[fields.length - 1];
  if (!(fields[0] instanceof lib.asn1js().Integer) || !(fields[1] instanceof lib.asn1js().Set) || !(eType instanceof lib.asn1js().ObjectIdentifier) || !(signerInfos instanceof lib.asn1js().Set) || fields.length < 4) {
    throw malformed(ctx, `${what} is not a well-formed SignedData (version, digestAlgorithms, encapContentInfo, signerInfos)`);
  }
  const certs = fields.slice(3, -1).find((f) => isContext(f, 0));
  const eWrapper = encap[1];
  return {
    eContentType: eType.valueBlock.toString(),
    eContent: isContext(eWrapper, 0) ? eWrapper.valueBlock.value[0] : undefined,
    certificates: certs instanceof lib.asn1js().Constructed ? certs.valueBlock.value : [],
    signerInfos: signerInfos.valueBlock.value,
  };
}

/** An embedded certificate: node's reading of its DER, and the DER of its issuer and serial number for matching. */
interface EmbeddedCertificate {
  readonly x509: X509Certificate;
  readonly issuer: Uint8Array;
  readonly serial: Uint8Array;
}

const der = (e: asn1js.AsnType) => bytesOf(e.valueBeforeDecodeView);
const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));

/**
 * The embedded certificates, each read once per file (nested signatures and timestamps repeat them). Entries of
 * other formats (attribute certificates, RFC 5652 10.2.2) are skipped.
 */
function readCertificates(ctx: Context, parts: SignedDataParts): EmbeddedCertificate[] {
  const out: EmbeddedCertificate[] = [];
  for (const c of parts.certificates) {
    if (!(c instanceof lib.asn1js().Sequence)) continue;
    // Certificate { tbsCertificate { [0] version?, serialNumber, signature, issuer, ... }, ... }
    const tbs = c.valueBlock.value[0];
    const t = tbs instanceof lib.asn1js().Sequence ? tbs.valueBlock.value : [];
    const at = isContext(t[0], 0) ? 1 : 0;
    const serial = t[at];
    const issuer = t[at + 2];
    if (!(serial instanceof lib.asn1js().Integer) || !(issuer instanceof lib.asn1js().Sequence)) throw malformed(ctx, 'an embedded certificate has no serial number and issuer');
    const bytes = der(c);
    const key = Buffer.from(bytes).toString('base64');
    let x509 = ctx.x509Cache.get(key);
    if (!x509) {
      try {
        x509 = new X509Certificate(bytes);
      } catch (error) {
        throw malformed(ctx, `an embedded certificate cannot be read (${error instanceof Error ? error.message : String(error)})`, error);
      }
      ctx.x509Cache.set(key, x509);
    }
    out.push({ x509, issuer: der(issuer), serial: der(serial) });
  }
  return out;
}

/** The certificate the SignerInfo names by issuer and serial number (DER compared byte for byte), or null. */
function findSigner(certs: readonly EmbeddedCertificate[], signerInfo: asn1js.AsnType): X509Certificate | null {
  const sid = signerInfo instanceof lib.asn1js().Sequence ? signerInfo.valueBlock.value[1] : undefined;
  const [issuer, serial] = sid instanceof lib.asn1js().Sequence ? sid.valueBlock.value : [];
  if (!issuer || !serial) return null; // a subjectKeyIdentifier [0]: not used by Authenticode
  return certs.find((c) => sameBytes(c.issuer, der(issuer)) && sameBytes(c.serial, der(serial)))?.x509 ?? null;
}

function parseSignerInfo(ctx: Context, element: asn1js.AsnType, what: string): pkijs.SignerInfo {
  try {
    return new (lib.pkijs().SignerInfo)({ schema: element });
  } catch (error) {
    throw malformed(ctx, `${what} is not a SignerInfo (${error instanceof Error ? error.message : String(error)})`, error);
  }
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
function checkSignerInfo(info: pkijs.SignerInfo, content: Uint8Array, cert: X509Certificate | null): SignerCheck {
  const digest = digestName(info.digestAlgorithm.algorithmId);
  if (!digest) return { valid: false, problem: `unsupported digest algorithm ${info.digestAlgorithm.algorithmId}`, digest: null };
  const sigAlg = SIGNATURES[info.signatureAlgorithm.algorithmId];
  if (!sigAlg) return { valid: false, problem: `unsupported signature algorithm ${info.signatureAlgorithm.algorithmId}`, digest };
  if (!cert) return { valid: false, problem: 'the signer certificate is not among the embedded certificates', digest };
  let signedBytes: Uint8Array;
  if (info.signedAttrs) {
    const md = attribute(info.signedAttrs, Oid.messageDigest)[0]?.values[0];
    if (!(md instanceof lib.asn1js().OctetString)) return { valid: false, problem: 'no message digest among the authenticated attributes', digest };
    const actual = createHash(digest).update(content).digest();
    if (!actual.equals(Buffer.from(md.valueBlock.valueHexView))) return { valid: false, problem: 'the authenticated message digest does not match the signed content', digest };
    // The attributes are signed as a SET OF (tag 0x31), not as the [0] IMPLICIT that carries them.
    signedBytes = Uint8Array.from(bytesOf(info.signedAttrs.encodedValue));
    signedBytes[0] = 0x31;
  } else {
    signedBytes = content;
  }
  const signature = bytesOf(info.signature.valueBlock.valueHexView);
  let ok = false;
  try {
    ok = cryptoVerify(sigAlg.digest ?? digest, signedBytes, cert.publicKey, signature);
  } catch (error) {
    return { valid: false, problem: `the signature cannot be checked (${error instanceof Error ? error.message : String(error)})`, digest };
  }
  return ok ? { valid: true, problem: null, digest } : { valid: false, problem: 'the signature does not verify with the signer certificate', digest };
}

function timeOf(value: unknown): Date | null {
  if (value instanceof lib.asn1js().UTCTime || value instanceof lib.asn1js().GeneralizedTime) return value.toDate();
  return null;
}

function readRfc3161(ctx: Context, value: asn1js.AsnType, signatureValue: Uint8Array): AuthenticodeTimestamp {
  const parts = readSignedData(ctx, value, 'the RFC 3161 timestamp token');
  if (parts.eContentType !== Oid.tstInfo || !(parts.eContent instanceof lib.asn1js().OctetString)) throw malformed(ctx, `the RFC 3161 timestamp token holds ${parts.eContentType}, not TSTInfo`);
  const tstBytes = bytesOf(parts.eContent.getValue());
  let tst: pkijs.TSTInfo;
  try {
    tst = new (lib.pkijs().TSTInfo)({ schema: parseBer(tstBytes, { structure: `${ctx.origin.structure} TSTInfo`, fileOffset: -1 }, ctx.limits) });
  } catch (error) {
    if (error instanceof FormatError) throw error;
    throw malformed(ctx, 'the RFC 3161 TSTInfo cannot be read', error);
  }
  const certs = readCertificates(ctx, parts);
  const signerElement = parts.signerInfos[0];
  const cert = signerElement ? findSigner(certs, signerElement) : null;
  const imprintDigest = digestName(tst.messageImprint.hashAlgorithm.algorithmId);
  let problem: string | null = null;
  if (!imprintDigest) problem = `unsupported message imprint digest ${tst.messageImprint.hashAlgorithm.algorithmId}`;
  else if (!createHash(imprintDigest).update(signatureValue).digest().equals(Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView))) {
    problem = "the timestamp's message imprint does not match this signature";
  } else if (!signerElement) problem = 'the timestamp token has no signer';
  else {
    const check = checkSignerInfo(parseSignerInfo(ctx, signerElement, 'the timestamp signer'), tstBytes, cert);
    if (!check.valid) problem = `timestamp: ${check.problem}`;
  }
  return { kind: 'rfc3161', time: tst.genTime.toISOString(), signer: cert ? describeCertificate(cert).subject : null, verified: problem === null, problem };
}

function readCountersignature(ctx: Context, value: asn1js.AsnType, signatureValue: Uint8Array, certs: readonly EmbeddedCertificate[]): AuthenticodeTimestamp {
  const info = parseSignerInfo(ctx, value, 'the countersignature');
  const time = timeOf(attribute(info.signedAttrs, Oid.signingTime)[0]?.values[0]);
  if (!time) throw malformed(ctx, 'the countersignature has no signing time');
  const cert = findSigner(certs, value);
  const check = checkSignerInfo(info, signatureValue, cert);
  return { kind: 'countersignature', time: time.toISOString(), signer: cert ? describeCertificate(cert).subject : null, verified: check.valid, problem: check.problem };
}

function readProgramName(info: pkijs.SignerInfo): string | null {
  // SpcSpOpusInfo ::= SEQUENCE { programName [0] EXPLICIT SpcString OPTIONAL, moreInfo [1] ... }
  const opus = attribute(info.signedAttrs, Oid.spcSpOpusInfo)[0]?.values[0];
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
 * Parses one Authenticode ContentInfo (a table entry or a nested signature) and everything nested in it.
 * @returns the signature and its nested signatures, outermost first
 * @throws FormatError SG_ERR_AC_BAD_SIGNATURE, SG_ERR_AC_BUDGET
 */
export function parseSignedData(element: asn1js.AsnType, ctx: Context, nesting = 0): ParsedSignature[] {
  if (++ctx.count.value > ctx.limits.maxSignatures) {
    throw new FormatError('SG_ERR_AC_BUDGET', `${ctx.origin.structure} holds more than ${ctx.limits.maxSignatures} signatures (nested ones counted)`, { structure: ctx.origin.structure, fileOffset: ctx.origin.fileOffset });
  }
  const parts = readSignedData(ctx, element, 'the signature');
  if (parts.eContentType !== Oid.spcIndirectData || !parts.eContent) {
    throw malformed(ctx, `the signed content is ${parts.eContentType}, not SpcIndirectDataContent (${Oid.spcIndirectData})`);
  }
  // SpcIndirectDataContent ::= SEQUENCE { data SpcAttributeTypeAndOptionalValue, messageDigest DigestInfo }
  const indirect = parts.eContent;
  const fields = indirect instanceof lib.asn1js().Sequence ? indirect.valueBlock.value : [];
  const digestInfo = fields[1];
  const algId = digestInfo instanceof lib.asn1js().Sequence ? digestInfo.valueBlock.value[0] : undefined;
  const algOid = algId instanceof lib.asn1js().Sequence ? algId.valueBlock.value[0] : undefined;
  const hashValue = digestInfo instanceof lib.asn1js().Sequence ? digestInfo.valueBlock.value[1] : undefined;
  if (!(algOid instanceof lib.asn1js().ObjectIdentifier) || !(hashValue instanceof lib.asn1js().OctetString)) {
    throw malformed(ctx, 'SpcIndirectDataContent has no DigestInfo (algorithm and image hash)');
  }
  const digestOid = algOid.valueBlock.toString();
  const signerElement = parts.signerInfos[0];
  if (!signerElement || parts.signerInfos.length !== 1) throw malformed(ctx, `Authenticode needs exactly one SignerInfo; this one has ${parts.signerInfos.length}`);
  const signerInfo = parseSignerInfo(ctx, signerElement, 'the signer');
  const certs = readCertificates(ctx, parts);
  const cert = findSigner(certs, signerElement);
  const check = checkSignerInfo(signerInfo, contentOctets(indirect), cert);
  const signatureValue = bytesOf(signerInfo.signature.valueBlock.valueHexView);
  let timestamp: AuthenticodeTimestamp | null = null;
  const nested: ParsedSignature[] = [];
  for (const attr of signerInfo.unsignedAttrs?.attributes ?? []) {
    for (const value of attr.values as asn1js.AsnType[]) {
      if (attr.type === Oid.rfc3161Timestamp && !timestamp) timestamp = readRfc3161(ctx, value, signatureValue);
      else if (attr.type === Oid.counterSignature && !timestamp) timestamp = readCountersignature(ctx, value, signatureValue, certs);
      else if (attr.type === Oid.nestedSignature) nested.push(...parseSignedData(value, ctx, nesting + 1));
    }
  }
  const claimed = timeOf(attribute(signerInfo.signedAttrs, Oid.signingTime)[0]?.values[0]);
  const sigAlg = SIGNATURES[signerInfo.signatureAlgorithm.algorithmId];
  return [
    {
      nesting,
      digestAlgorithm: digestName(digestOid) ?? digestOid,
      digestAlgorithmOid: digestOid,
      signedImageHash: bytesOf(hashValue.valueBlock.valueHexView),
      signer: cert ? describeCertificate(cert) : null,
      certificates: certs.map((c) => describeCertificate(c.x509)),
      signatureAlgorithm: sigAlg ? `${sigAlg.name}-${sigAlg.digest ?? check.digest ?? '?'}` : signerInfo.signatureAlgorithm.algorithmId,
      signatureValid: check.valid,
      signatureProblem: check.problem,
      claimedSigningTime: claimed ? claimed.toISOString() : null,
      timestamp,
      programName: readProgramName(signerInfo),
      signerCertificate: cert,
      embedded: certs.map((c) => c.x509),
    },
    ...nested,
  ];
}

export { hexUpper, type Context as SignatureContext };
