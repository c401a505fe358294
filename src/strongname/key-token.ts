// Public key token (strong-naming.md section 5): the last 8 bytes of SHA-1 over the whole blob, reversed.
import { createHash } from 'node:crypto';
import { toHex } from '../binary/byte-cursor.js';

/** The 16-character lower-case hex token of a public key blob (any HashAlgID: always SHA-1). */
export function publicKeyToken(publicKeyBlob: Uint8Array): string {
  const digest = createHash('sha1').update(publicKeyBlob).digest();
  return Buffer.from(digest.subarray(digest.length - 8))
    .reverse()
    .toString('hex');
}

/**
 * The token of an AssemblyRef's PublicKeyOrToken blob: computed from a full key (flag 0x1),
 * taken as-is from an 8-byte token, or null when the reference carries none.
 */
export function referenceToken(publicKeyOrToken: Uint8Array, flags: number): string | null {
  if (publicKeyOrToken.length === 0) return null;
  if (flags & 0x1) return publicKeyToken(publicKeyOrToken);
  return toHex(publicKeyOrToken);
}
