// Files that must not leave the build machine in an upload: a strong-name key pair, a certificate store or PEM
// private key, and text that holds an access token. `pack` and `sign --archive` refuse them before anything is
// written or sent; the service would store them with the job.
import { looksLikeToken } from './secrets.js';

export interface SecretFile {
  /** The file's name or path as the user knows it. */
  readonly name: string;
  /** What it holds, in words. */
  readonly what: string;
  /** A private key: never packed, whatever the options. */
  readonly privateKey: boolean;
}

/** How much of a file is read for a token: configuration and text files are far smaller. */
export const SECRET_SCAN_BYTES = 64 * 1024;

/**
 * What secret `bytes` (the file's first SECRET_SCAN_BYTES bytes or more) hold, or undefined.
 * A key pair is recognized by its blob (PRIVATEKEYBLOB, version 2, RSA2 magic), whatever its name.
 */
export function secretFile(name: string, bytes: Uint8Array): SecretFile | undefined {
  const lower = name.toLowerCase();
  if (bytes.length >= 12 && bytes[0] === 0x07 && bytes[1] === 0x02 && String.fromCharCode(...bytes.subarray(8, 12)) === 'RSA2') {
    return { name, what: 'a strong-name key pair (it holds the private key)', privateKey: true };
  }
  if (/\.(pfx|p12)$/.test(lower)) return { name, what: 'a PKCS#12 certificate store (it may hold a private key)', privateKey: true };
  // Assemblies are what the upload is for; their strings are the add-in's business.
  if (/\.(dll|exe|netmodule)$/.test(lower)) return undefined;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, SECRET_SCAN_BYTES)).toString('latin1');
  if (/-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/.test(text)) return { name, what: 'a PEM private key', privateKey: true };
  if (looksLikeToken(text)) return { name, what: 'text shaped like an access token (a signing-service token or a JWT)', privateKey: false };
  return undefined;
}
