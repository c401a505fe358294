// A signing pool thread (run by piscina): one task signs one file and prepares its package entry, or only prepares
// the entry of a file returned unchanged. A key in a PKCS#11 token signs through the service's thread, which owns
// the module (one C_Initialize and one login per process). What it makes is moved back to the service's thread, not copied.
import type { MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { isSignGateError, type ErrorFault } from '../../core/errors.js';
import type { StrongNameKeyFile } from '../../strongname/key-blob.js';
import { prepareZipEntry, type PreparedZipData } from '../../zip/write-zip.js';
import { withPkcs11Broker } from '../../strongname/pkcs11/signer.js';
import { ownsItsMemory, signAndPack, type SignedFile } from './sign-file.js';

export interface SignTask {
  readonly bytes?: Uint8Array;
  /** Absent: the file is returned as it is, only its package entry is prepared. */
  readonly keyPair?: StrongNameKeyFile;
  /**
   * For a key in a PKCS#11 token: the port to the service's thread, which owns the module and makes the RSA
   * operation of the DigestInfo hashed here (servePkcs11Broker).
   */
  readonly broker?: MessagePort;
}

/** An error of ours, as it crosses back to the service's thread (an Error loses its code on the way). */
export interface SignTaskFailure {
  readonly failed: { readonly code: string; readonly message: string; readonly fault: ErrorFault };
}

export type SignTaskResult = SignedFile | PreparedZipData | SignTaskFailure | undefined;

/**
 * `value`, with the memory of `buffers` moved to the receiving thread (each buffer once) where a buffer is the whole
 * of its memory; a view into shared memory (Node's pool of small Buffers) is copied instead.
 */
function moving<T>(value: T, buffers: readonly Uint8Array[]): T {
  const transfer = [...new Set(buffers.filter(ownsItsMemory).map((b) => b.buffer))];
  const transferable = {
    get [Piscina.transferableSymbol]() {
      return transfer;
    },
    get [Piscina.valueSymbol]() {
      return value;
    },
  };
  return Piscina.move(transferable as unknown as Parameters<typeof Piscina.move>[0]) as unknown as T;
}

export default function signTask(task: SignTask): SignTaskResult {
  try {
    return run(task);
  } catch (error) {
    if (isSignGateError(error)) return { failed: { code: error.code, message: error.message, fault: error.fault } };
    throw error;
  }
}

function run({ bytes, keyPair, broker }: SignTask): SignTaskResult {
  if (!bytes) return undefined;
  if (!keyPair) {
    const entry = prepareZipEntry(bytes);
    return moving(entry, [entry.data]);
  }
  const signed = withPkcs11Broker(broker, () => signAndPack(bytes, keyPair));
  return signed && moving(signed, [signed.signed, signed.entry.data]);
}
