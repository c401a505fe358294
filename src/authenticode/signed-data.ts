// PKCS#7 SignedData as Authenticode uses it (Microsoft "Windows Authenticode Portable Executable Signature Format"):
// contentType SPC_INDIRECT_DATA (1.3.6.1.4.1.311.2.1.4) whose DigestInfo holds the image hash; one SignerInfo with
// authenticated attributes; unsigned attributes for timestamps (RFC 3161 1.3.6.1.4.1.311.3.3.1, legacy
// countersignature 1.2.840.113549.1.9.6) and nested signatures (1.3.6.1.4.1.311.2.4.1).
//
// The rooms: content-info.ts (ContentInfo and SignedData), signer-info.ts (SignerInfo), certificates.ts (embedded
// certificates), signer-check.ts (digest and signature), timestamp.ts and tst-info.ts (RFC 3161, countersignature),
// chain.ts (trust), asn1-read.ts (what they share); this module puts one signature and its nested ones together.
//
// ASN.1 paths, kept as they are: the structure is walked in place (der.ts), and a value is read over the DER where
// asn1js is known to accept the part (asn1-accept.ts) and its shape is the usual one; else from asn1js's tree, and a
// SignerInfo or TSTInfo of another shape by pkijs. One path was weighed and not taken: asn1js and pkijs are the
// judges the verdicts rest on (their refusals and pkijs's messages are reported), so the DER reader alone would
// have to re-implement both; the libraries alone would parse every blob whole again (the speed the in-place walk
// won) and judge some hostile blobs differently (an end-of-contents with a length is accepted alone, refused
// inside the SET of an unsigned attribute). scanBer (ber-guard.ts) bounds depth and elements before asn1js.
import type { X509Certificate } from 'node:crypto';
import type * as asn1js from 'asn1js';
import { FormatError } from '../core/errors.js';
import { asn1jsAccepts, oidString } from './asn1-accept.js';
import { accept, asn, bytesOf, childrenOf, type Context, malformed, Oid, tree } from './asn1-read.js';
import { described, findSigner, readCertificates, type AuthenticodeCertificate } from './certificates.js';
import { readSignedData } from './content-info.js';
import { DerTag, type Der } from './der.js';
import * as lib from './libraries.js';
import { checkSignerInfo, digestName, SIGNATURES } from './signer-check.js';
import { attributeDer, readSignerInfo, type SignerFields } from './signer-info.js';
import { readCountersignature, readRfc3161, timeOf, type AuthenticodeTimestamp } from './timestamp.js';

export type { AuthenticodeCertificate } from './certificates.js';
export type { AuthenticodeTimestamp } from './timestamp.js';

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

/** The content octets of an element (what follows its tag and length). */
function contentOctets(element: asn1js.AsnType): Uint8Array {
  const whole = bytesOf(element.valueBeforeDecodeView);
  const header = element.idBlock.blockLength + element.lenBlock.blockLength;
  return whole.subarray(header, whole.length - (element.lenBlock.isIndefiniteForm ? 2 : 0));
}

function hexUpper(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex').toUpperCase();
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
