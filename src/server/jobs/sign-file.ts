// The CPU-heavy part of a job's files, alone in a module so that a pool thread loads only what it needs: sign
// with the key pair, check the signature the way a verifier would, and prepare the file's entry of the result
// package (CRC-32 and deflate), so that the service's own thread only lays the package out.
import { createHash } from 'node:crypto';
import type { StrongNameKeyFile } from '../../strongname/key-blob.js';
import { readModule } from '../../strongname/well-formed.js';
import { signAssembly, verifyStrongName } from '../../strongname/strong-name.js';
import { prepareZipEntry, type PreparedZipData } from '../../zip/write-zip.js';

/**
 * Signs `bytes` with `keyPair` (a key in a PKCS#11 token through the module's owner); returns the signed image,
 * or undefined when its signature does not verify.
 */
export function signAndVerify(bytes: Uint8Array, keyPair: StrongNameKeyFile): Uint8Array | undefined {
  const signed = signAssembly(readModule(bytes), keyPair);
  return verifyStrongName(readModule(signed), { expectedKey: keyPair.publicKey }).valid ? signed : undefined;
}

/** A signed file, its SHA-256 (for the signature record) and its entry of the result package. */
export interface SignedFile {
  readonly signed: Uint8Array;
  /** SHA-256 of `signed`, lowercase hex. */
  readonly sha256: string;
  readonly entry: PreparedZipData;
}

/** Signs `bytes` and prepares the signed file's package entry; undefined when the signature does not verify. */
export function signAndPack(bytes: Uint8Array, keyPair: StrongNameKeyFile): SignedFile | undefined {
  const signed = signAndVerify(bytes, keyPair);
  return signed && { signed, sha256: createHash('sha256').update(signed).digest('hex'), entry: prepareZipEntry(signed) };
}

/** Whether `bytes` is the whole of its memory, so that moving it to another thread takes nothing else along. */
export function ownsItsMemory(bytes: Uint8Array): boolean {
  return bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
}

/** Signs the files of a job and prepares their package entries, in the service's thread or a pool of worker threads. */
export interface FileSigner {
  /** How many files of a job may be handed over before the one being finished (0: one at a time). */
  readonly ahead: number;
  /**
   * Signs a file and prepares its package entry. A pool may take `bytes` away from the calling thread (they are
   * moved, not copied): the caller must not use them afterwards.
   */
  sign(bytes: Uint8Array, keyPair: StrongNameKeyFile): Promise<SignedFile | undefined>;
  /** Prepares the package entry of a file returned as it was uploaded; `bytes` may be taken away as for sign(). */
  pack(bytes: Uint8Array): Promise<PreparedZipData>;
}

/** Signs in the calling thread, one file at a time. */
export const inProcessSigner: FileSigner = {
  ahead: 0,
  sign: async (bytes, keyPair) => signAndPack(bytes, keyPair),
  pack: async (bytes) => prepareZipEntry(bytes),
};
