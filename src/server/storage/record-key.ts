// The record key: the Ed25519 key with which the service signs the checkpoints of its signature record
// (core/checkpoint.ts). It is the service's own, never an option's signing key: <data-dir>/record-key.pem (PKCS#8,
// private to the service's user), made at the first start, and beside it record-key.pub, the C2SP verifier key that
// verifiers need (also printed by `serve record public-key`). Nodes of one deployment must sign with the same key:
// copy record-key.pem into each node's data directory before its first start.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { formatVerifierKey, recordPrivateKey, verifierOf, type RecordVerifier } from '../../core/checkpoint.js';
export { readRecordPublicKey } from '../../core/checkpoint.js';
import { writeFileAtomicSync } from './fs-atomic.js';

export const RECORD_KEY_FILE = 'record-key.pem';
export const RECORD_PUBLIC_KEY_FILE = 'record-key.pub';

export interface RecordKey {
  readonly privateKey: KeyObject;
  readonly verifier: RecordVerifier;
  /** Where the private key is, for messages. */
  readonly path: string;
}

/**
 * The data directory's record key; made (with its .pub) when `create` and there is none.
 * @throws UsageError when the file is no Ed25519 private key, or (without `create`) when there is none
 */
export function loadRecordKey(dataDir: string, create = false): RecordKey {
  const path = join(dataDir, RECORD_KEY_FILE);
  if (!existsSync(path)) {
    if (!create) throw new UsageError(`there is no record key at ${path}`, 'The service makes it at its first start on this data directory; pass the data directory the service uses (--data-dir).', 'SG_ERR_CONFIG');
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileAtomicSync(path, privateKey.export({ type: 'pkcs8', format: 'pem' }));
  }
  let privateKey: KeyObject;
  try {
    privateKey = recordPrivateKey(readFileSync(path));
  } catch (error) {
    throw new UsageError(`${path} is not a private key (${(error as Error).message})`, 'Restore the record key from its backup; without it the service cannot sign checkpoints.', 'SG_ERR_CONFIG');
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new UsageError(`${path} is an ${privateKey.asymmetricKeyType} key, not Ed25519`, 'The record key is an Ed25519 key; restore it from its backup, or move it aside to let the service make a new one.', 'SG_ERR_CONFIG');
  const verifier = verifierOf(privateKey);
  const pub = join(dataDir, RECORD_PUBLIC_KEY_FILE);
  const text = `${formatVerifierKey(verifier)}\n`;
  if (!existsSync(pub) || readFileSync(pub, 'utf8') !== text) writeFileAtomicSync(pub, text);
  return { privateKey, verifier, path };
}
