// The timestamp of a signature, from its unsigned attributes: an RFC 3161 token (1.3.6.1.4.1.311.3.3.1), whose
// message imprint must be this signature's value and whose own SignerInfo must verify, or a legacy countersignature
// (1.2.840.113549.1.9.6), a SignerInfo over the signature's value with a signing time.
import { createHash } from 'node:crypto';
import { timeValue } from './asn1-accept.js';
import { accept, asn, bytesOf, type Context, malformed, Oid, tree } from './asn1-read.js';
import { described, findSigner, readCertificates, type EmbeddedCertificate } from './certificates.js';
import { readSignedData } from './content-info.js';
import { DerTag, type Der } from './der.js';
import * as lib from './libraries.js';
import { checkSignerInfo, digestName } from './signer-check.js';
import { attributeDer, readSignerInfoOnly } from './signer-info.js';
import { readTstInfo } from './tst-info.js';

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

export function timeOf(element: Der | undefined): Date | null {
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

export function readRfc3161(ctx: Context, value: Der, signatureValue: Uint8Array): AuthenticodeTimestamp {
  const parts = readSignedData(ctx, value, 'the RFC 3161 timestamp token');
  const tstBytes = octets(ctx, parts.eContent);
  if (parts.eContentType !== Oid.tstInfo || !tstBytes) throw malformed(ctx, `the RFC 3161 timestamp token holds ${parts.eContentType}, not TSTInfo`);
  const tst = readTstInfo(ctx, tstBytes);
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

export function readCountersignature(ctx: Context, value: Der, signatureValue: Uint8Array, certs: readonly EmbeddedCertificate[]): AuthenticodeTimestamp {
  const info = readSignerInfoOnly(ctx, value, 'the countersignature');
  const time = timeOf(attributeDer(info.signedAttrs, Oid.signingTime));
  if (!time) throw malformed(ctx, 'the countersignature has no signing time');
  const cert = findSigner(certs, value);
  const check = checkSignerInfo(info, signatureValue, cert?.x509 ?? null);
  return { kind: 'countersignature', time: time.toISOString(), signer: cert ? described(cert).subject : null, verified: check.valid, problem: check.problem };
}
