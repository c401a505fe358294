// A signing pool thread (run by piscina): one task signs one file. The signed image is moved back, not copied.
import { Piscina } from 'piscina';
import type { StrongNameKeyFile } from '../strongname/key-blob.js';
import { signAndVerify } from './sign-file.js';

export interface SignTask {
  readonly bytes: Uint8Array;
  readonly keyPair: StrongNameKeyFile;
}

export default function signTask({ bytes, keyPair }: SignTask): Uint8Array | undefined {
  const signed = signAndVerify(bytes, keyPair);
  return signed && (Piscina.move(signed) as Uint8Array);
}
