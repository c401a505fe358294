// Chain trust, asked only with a trust store: from the signer certificate through the embedded certificates to one
// of the store, each link valid at the given time and its signature checked once per (certificate, issuer) pair.
import type { X509Certificate } from 'node:crypto';
import type { ParsedSignature } from './signed-data.js';

/** Whether a chain from the signer reaches a certificate of the trust store (asked only with a trust store). */
export interface AuthenticodeTrust {
  readonly trusted: boolean;
  /** Subjects from the signer up to the trusted certificate (or as far as the chain could be built). */
  readonly chain: readonly string[];
  readonly problem: string | null;
}

function validAt(cert: X509Certificate, at: Date): boolean {
  return new Date(cert.validFrom) <= at && at <= new Date(cert.validTo);
}

function subjectLine(cert: X509Certificate): string {
  return cert.subject.split('\n').filter(Boolean).join(', ');
}

/**
 * Whether `issuer` issued `cert` (names and signature), remembered per pair: embedded certificates are shared from file
 * to file (certificates.ts reads each once), so a chain that recurs is checked once.
 */
const issuedBy = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();

function isIssuedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  let known = issuedBy.get(cert);
  if (!known) issuedBy.set(cert, (known = new WeakMap()));
  let issued = known.get(issuer);
  if (issued === undefined) {
    issued = cert.checkIssued(issuer) && cert.verify(issuer.publicKey);
    known.set(issuer, issued);
  }
  return issued;
}

/** Builds a chain from the signer through the embedded certificates to one of the trust store. */
export function chainTrust(sig: ParsedSignature, store: readonly X509Certificate[], at: Date, maxLength: number): AuthenticodeTrust {
  if (!sig.signerCertificate) return { trusted: false, chain: [], problem: 'no signer certificate' };
  const storeFingerprints = new Set(store.map((c) => c.fingerprint256));
  const pool = [...store, ...sig.embedded];
  const chain: X509Certificate[] = [sig.signerCertificate];
  for (;;) {
    const current = chain[chain.length - 1]!;
    if (!validAt(current, at)) return { trusted: false, chain: chain.map(subjectLine), problem: `${subjectLine(current)} is not valid at ${at.toISOString()}` };
    if (storeFingerprints.has(current.fingerprint256)) return { trusted: true, chain: chain.map(subjectLine), problem: null };
    if (chain.length >= maxLength) return { trusted: false, chain: chain.map(subjectLine), problem: `no trusted certificate within ${maxLength} links` };
    const issuer = pool.find((c) => !chain.includes(c) && isIssuedBy(current, c));
    if (!issuer) {
      const selfSigned = current.checkIssued(current);
      return {
        trusted: false,
        chain: chain.map(subjectLine),
        problem: selfSigned
          ? `the root ${subjectLine(current)} is not in the trust store`
          : `no certificate of issuer ${current.issuer.split('\n').join(', ')} is embedded or trusted`,
      };
    }
    chain.push(issuer);
  }
}
