// Comparing an assembly's public key with the organization's key files.
import type { PublicKeyInfo } from '../strongname/key-blob.js';

/** Byte-for-byte equality of two public key blobs, header included. */
export function sameKeyBlob(a: PublicKeyInfo, b: PublicKeyInfo): boolean {
  return Buffer.compare(Buffer.from(a.blob), Buffer.from(b.blob)) === 0;
}
