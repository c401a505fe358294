// The record key: the Ed25519 key with which the service signs the checkpoints of its signature record
// (core/checkpoint.ts). It is the service's own, never an option's signing key: <data-dir>/record-key.pem (PKCS#8,
// private to the service's user), made at the first start, and beside it record-key.pub, the C2SP verifier key that
// verifiers need (also printed by `serve record public-key`). Nodes of one deployment must sign with the same key:
// copy record-key.pem into each node's data directory before its first start.
//
// record-key.pub is written only by the service's start: the one that makes the key, or one that finds a key copied
// in with no .pub beside it. The commands that only read the key (`serve record public-key`, `serve record
// checkpoint`) never write. A .pub that disagrees with the .pem is never replaced except by the start that made a
// new key: anyone else refuses it, naming both files, since auditors may hold either (the .pub handed out, or the
// key that signs).

import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { formatVerifierKey, parseVerifierKey, recordPrivateKey, verifierOf, type RecordVerifier } from '../../core/checkpoint.js';
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
 * The data directory's record key; made (with its .pub) when `create` (the service's start) and there is none. With
 * `create` a missing .pub is written too; a .pub of another key is replaced only when the key was made just now.
 * @throws UsageError when the file is no Ed25519 private key, (without `create`) when there is none, or when the
 * .pub beside it is not its verifier key
 */
export function loadRecordKey(dataDir: string, create = false): RecordKey {
  const path = join(dataDir, RECORD_KEY_FILE);
  const made = !existsSync(path);
  if (made) {
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
  const expected = formatVerifierKey(verifier);
  const found = existsSync(pub) ? readFileSync(pub, 'utf8').trim() : undefined;
  if (found !== expected) {
    // The start that made the key writes its .pub, over whatever was there; a start completes a key copied in alone.
    if (made || (found === undefined && create)) writeFileAtomicSync(pub, `${expected}\n`);
    else if (found !== undefined) throw publicKeyMismatch(pub, path, found, verifier);
  }
  return { privateKey, verifier, path };
}

/** The refusal of a .pub (`pub`, holding `found`) that is not the verifier key of the record key at `path`. */
function publicKeyMismatch(pub: string, path: string, found: string, verifier: RecordVerifier): UsageError {
  let named: string;
  try {
    const other = parseVerifierKey(found, pub);
    named = `it is the record key ${other.name} (key id ${other.keyId.toString('hex')})`;
  } catch {
    named = 'it is not a record public key';
  }
  const key = `${path} is the key ${verifier.name} (key id ${verifier.keyId.toString('hex')})`;
  return new UsageError(
    `${pub} does not match ${path}: ${named}, but ${key}; auditors given ${RECORD_PUBLIC_KEY_FILE} would refuse the checkpoints it signs`,
    `If ${RECORD_KEY_FILE} is the service's key, move ${pub} aside: the next start of the service writes it again from the key ` +
      `(\`signgate serve record public-key\` prints it meanwhile). If ${RECORD_PUBLIC_KEY_FILE} is the key auditors hold, restore ${path} from its backup.`,
    'SG_ERR_CONFIG',
  );
}
