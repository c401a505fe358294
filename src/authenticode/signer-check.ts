// The verification of a SignerInfo: its message digest attribute against the signed content and its signature with
// the signer certificate (node:crypto); the digest and signature algorithms known by their OIDs.
import { createHash, verify as cryptoVerify, type X509Certificate } from 'node:crypto';
import { Oid, tree } from './asn1-read.js';
import { DerTag } from './der.js';
import * as lib from './libraries.js';
import { attributeDer, type SignerFields } from './signer-info.js';

const DIGESTS: Readonly<Record<string, string>> = {
  '1.2.840.113549.2.5': 'md5',
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
};

/** Signature algorithms whose digest is given apart (digestAlgorithm), or implied by the OID. */
export const SIGNATURES: Readonly<Record<string, { name: string; digest?: string }>> = {
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

interface SignerCheck {
  readonly valid: boolean;
  readonly problem: string | null;
  readonly digest: string | null;
}

/**
 * Checks one SignerInfo: the message digest attribute against `content` and the signature with `cert`.
 * Without authenticated attributes the signature covers the content itself.
 */
export function checkSignerInfo(info: SignerFields, content: Uint8Array, cert: X509Certificate | null): SignerCheck {
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
