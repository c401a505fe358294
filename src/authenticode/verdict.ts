// One file's Authenticode in a few fields: what verify, sign and audit show beside the strong name.
import { parsePeImage } from '../pe/pe-image.js';
import { readAuthenticode, type AuthenticodeInfo, type AuthenticodeOptions, type AuthenticodeState } from './authenticode.js';

/** One file's Authenticode in a few fields: what verify, sign and audit report. */
export interface AuthenticodeVerdict {
  readonly state: AuthenticodeState;
  /** The primary signature's signer subject. */
  readonly publisher: string | null;
  /** The primary signature's issuer subject. */
  readonly issuer: string | null;
  readonly serialNumber: string | null;
  readonly digestAlgorithm: string | null;
  /** The primary signature's timestamp time (RFC 3161 or countersignature), ISO 8601; null when not timestamped. */
  readonly timestamp: string | null;
  readonly timestampVerified: boolean | null;
  /** Signatures in all, nested ones counted. */
  readonly signatures: number;
  /** Why invalid or unreadable, in words; null otherwise. */
  readonly reason: string | null;
  /** Chain to the trust store; null when no trust store was given or nothing is signed. */
  readonly trusted: boolean | null;
  readonly trustProblem: string | null;
}

/** The short verdict of a full read. */
export function authenticodeVerdict(info: AuthenticodeInfo): AuthenticodeVerdict {
  const first = info.signatures[0];
  const untrusted = info.signatures.find((s) => s.trust && !s.trust.trusted);
  return {
    state: info.state,
    publisher: info.publisher,
    issuer: first?.signer?.issuer ?? null,
    serialNumber: first?.signer?.serialNumber ?? null,
    digestAlgorithm: first?.digestAlgorithm ?? null,
    timestamp: first?.timestamp?.time ?? null,
    timestampVerified: first?.timestamp ? first.timestamp.verified : null,
    signatures: info.signatures.length,
    reason: info.reason,
    trusted: info.state === 'absent' ? null : info.trusted,
    trustProblem: untrusted?.trust?.problem ?? null,
  };
}

/** Reads one file's Authenticode verdict from its bytes; null when the bytes are not a PE image. */
export function authenticodeOf(bytes: Uint8Array, options: AuthenticodeOptions = {}): AuthenticodeVerdict | null {
  let image;
  try {
    image = parsePeImage(bytes);
  } catch {
    return null;
  }
  return authenticodeVerdict(readAuthenticode(image, options));
}

/** The verdict in words: `valid, CN=…, timestamp 2026-… (verified)`, `absent`, `invalid: why`. */
export function describeAuthenticodeVerdict(v: AuthenticodeVerdict): string {
  if (v.state === 'absent') return 'absent';
  const parts: string[] = [v.state === 'valid' ? 'valid' : `${v.state}: ${v.reason}`];
  if (v.publisher) parts.push(`signer ${v.publisher}`);
  if (v.digestAlgorithm) parts.push(v.digestAlgorithm);
  if (v.signatures > 1) parts.push(`${v.signatures} signatures (nested)`);
  parts.push(v.timestamp ? `timestamp ${v.timestamp}${v.timestampVerified ? '' : ' (not verified)'}` : 'no timestamp');
  if (v.trusted !== null) parts.push(v.trusted ? 'trusted' : `not trusted: ${v.trustProblem}`);
  return parts.join(', ');
}
