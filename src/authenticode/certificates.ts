// The certificates embedded in a SignedData: each read by node's X509Certificate once per process (a cache found by
// their last bytes), with the DER of its issuer and serial number, which name the signer of a SignerInfo.
import { X509Certificate } from 'node:crypto';
import type * as asn1js from 'asn1js';
import { asn1jsAccepts } from './asn1-accept.js';
import { accept, asn, childrenOf, type Context, der, malformed } from './asn1-read.js';
import type { SignedDataParts } from './content-info.js';
import { DerTag, type Der } from './der.js';
import * as lib from './libraries.js';

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

/** An embedded certificate: node's reading of its DER, and the DER of its issuer and serial number for matching. */
export interface EmbeddedCertificate {
  readonly x509: X509Certificate;
  readonly issuer: Uint8Array;
  readonly serial: Uint8Array;
  /** describeCertificate's result, made on first use (it throws for a date out of range). */
  description?: AuthenticodeCertificate;
}

export const described = (c: EmbeddedCertificate): AuthenticodeCertificate => (c.description ??= describeCertificate(c.x509));

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
export function readCertificates(ctx: Context, parts: SignedDataParts): EmbeddedCertificate[] {
  const out: EmbeddedCertificate[] = [];
  for (const c of parts.certificates) {
    if (c.tag === DerTag.sequence) out.push(cachedCertificate(ctx, c));
    else accept(ctx, [c]); // an entry of another format (an attribute certificate, ...), skipped once accepted
  }
  return out;
}

/** The certificate the SignerInfo names by issuer and serial number (DER compared byte for byte), or null. */
export function findSigner(certs: readonly EmbeddedCertificate[], signerInfo: Der): EmbeddedCertificate | null {
  const [issuer, serial] = childrenOf(childrenOf(signerInfo, DerTag.sequence)[1], DerTag.sequence);
  if (!issuer || !serial) return null; // a subjectKeyIdentifier [0]: not used by Authenticode
  return certs.find((c) => sameBytes(c.issuer, issuer.whole) && sameBytes(c.serial, serial.whole)) ?? null;
}
