// The CPU-heavy part of signing one file (RSA and hashing), alone in a module so that a pool thread loads only
// what it needs: sign with the key pair, then check the signature the way a verifier would.
import type { StrongNameKeyFile } from '../strongname/key-blob.js';
import { readModule } from '../strongname/assembly-info.js';
import { signAssembly, verifyStrongName } from '../strongname/strong-name.js';

/** Signs `bytes` with `keyPair`; returns the signed image, or undefined when its signature does not verify. */
export function signAndVerify(bytes: Uint8Array, keyPair: StrongNameKeyFile): Uint8Array | undefined {
  const signed = signAssembly(readModule(bytes), keyPair);
  return verifyStrongName(readModule(signed), { expectedKey: keyPair.publicKey }).valid ? signed : undefined;
}

/** Signs the files of a job; the service signs in its own thread or in a pool of worker threads. */
export interface FileSigner {
  /** How many files of a job may be handed over before the one being finished (0: one at a time). */
  readonly ahead: number;
  sign(bytes: Uint8Array, keyPair: StrongNameKeyFile): Promise<Uint8Array | undefined>;
}

/** Signs in the calling thread, one file at a time. */
export const inProcessSigner: FileSigner = {
  ahead: 0,
  sign: async (bytes, keyPair) => signAndVerify(bytes, keyPair),
};
