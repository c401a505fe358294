// The record key: the Ed25519 key with which the service signs the checkpoints of its signature record
// (record/checkpoint.ts). It is the service's own, never an option's signing key: <data-dir>/record-key.pem (PKCS#8,
// private to the service's user), made at the first start, and beside it record-key.pub, the C2SP verifier key that
// verifiers need (also printed by `serve record public-key`), or the file the configuration names ("recordKey" in
// server.json, `serve --record-key`; made once with `serve record key create`). Nodes of one deployment sign with one
// key: on PostgreSQL the first node records the key's public half in the database and a node with another refuses to
// start (postgres/pg-record-key.ts).
//
// record-key.pub is written only by whoever makes the key, or by a start that finds a key copied in with no .pub
// beside it. The commands that only read the key (`serve record public-key`, `serve record checkpoint`) never write.
// A .pub that disagrees with the .pem is never replaced except by the start that made a new key: anyone else refuses
// it, naming both files, since auditors may hold either (the .pub handed out, or the key that signs).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { formatVerifierKey, parseVerifierKey, recordPrivateKey, verifierOf, type RecordVerifier } from '../record/checkpoint.js';
import { mkdirPrivateSync, PRIVATE_FILE, writeFileAtomicSync } from './fs-atomic.js';

export const RECORD_KEY_FILE = 'record-key.pem';
export const RECORD_PUBLIC_KEY_FILE = 'record-key.pub';

export interface RecordKey {
  readonly privateKey: KeyObject;
  readonly verifier: RecordVerifier;
  /** Where the private key is, for messages. */
  readonly path: string;
}

/** Where the verifier key of a record key file is written: beside it, `.pem` replaced by `.pub`. */
export function publicKeyPathFor(keyFile: string): string {
  return `${keyFile.replace(/\.pem$/i, '')}.pub`;
}

/**
 * Makes a new record key at `path` (PKCS#8 PEM, 0600); never replaces a file: two processes that make it at once
 * end with one key, the first one's.
 * @returns whether this call made it (false: it was there)
 */
export function createRecordKeyFile(path: string): boolean {
  const { privateKey } = generateKeyPairSync('ed25519');
  mkdirPrivateSync(dirname(path));
  return createExclusive(path, privateKey.export({ type: 'pkcs8', format: 'pem' }), 'record key', "Choose a folder the service's user may write.");
}

/**
 * Writes `data` at `path` whole (a temporary file linked in, 0600) unless a file is there.
 * @returns whether this call made it
 * @throws UsageError naming `what` when it cannot be written
 */
function createExclusive(path: string, data: string | Buffer, what: string, hint: string): boolean {
  const temp = `${path}.tmp-${process.pid}-${Date.now()}`;
  writeFileSync(temp, data, { mode: PRIVATE_FILE });
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new UsageError(`cannot write the ${what} ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, hint, 'SG_ERR_CONFIG');
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * Reads a record key file (never writes).
 * @throws UsageError when it is missing or no Ed25519 private key
 */
export function readRecordKeyFile(path: string, missingHint: string): RecordKey {
  if (!existsSync(path)) throw new UsageError(`there is no record key at ${path}`, missingHint, 'SG_ERR_CONFIG');
  let privateKey: KeyObject;
  try {
    privateKey = recordPrivateKey(readFileSync(path));
  } catch (error) {
    throw new UsageError(
      `${path} is not a private key (${(error as Error).message})`,
      'Restore the record key from its backup; without it the service cannot sign checkpoints.',
      'SG_ERR_CONFIG',
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new UsageError(
      `${path} is an ${privateKey.asymmetricKeyType} key, not Ed25519`,
      'The record key is an Ed25519 key (signgate serve record key create makes one); restore it from its backup.',
      'SG_ERR_CONFIG',
    );
  return { privateKey, verifier: verifierOf(privateKey), path };
}

/**
 * Writes the verifier key of a record key just made at `pub`, which must not exist (`serve record key create`).
 * @returns whether this call made it (false: a file is there)
 */
export function createRecordPublicKeyFile(key: RecordKey, pub = publicKeyPathFor(key.path)): boolean {
  return createExclusive(pub, `${formatVerifierKey(key.verifier)}\n`, 'record public key', 'Choose a folder you may write.');
}

/** Writes the verifier key beside a record key file when it is not there as it should be (only its maker calls this). */
export function writeRecordPublicKey(key: RecordKey, pub = publicKeyPathFor(key.path)): void {
  const text = `${formatVerifierKey(key.verifier)}\n`;
  if (!existsSync(pub) || readFileSync(pub, 'utf8') !== text) writeFileAtomicSync(pub, text);
}

/** The record key of a data directory: the file a node makes at its first start when no key is configured. */
export function dataDirRecordKeyPath(dataDir: string): string {
  return join(dataDir, RECORD_KEY_FILE);
}

/**
 * The data directory's record key; made (with its .pub) when `create` (the service's start) and there is none. With
 * `create` a missing .pub is written too; a .pub of another key is replaced only when the key was made just now.
 * @throws UsageError when the file is no Ed25519 private key, (without `create`) when there is none, or when the
 * .pub beside it is not its verifier key
 */
export function loadRecordKey(dataDir: string, create = false): RecordKey {
  const path = dataDirRecordKeyPath(dataDir);
  const made = create && !existsSync(path) && createRecordKeyFile(path);
  const key = readRecordKeyFile(
    path,
    'The service makes it at its first start on this data directory; pass the data directory the service uses (--data-dir), or the record key file its configuration names (--record-key).',
  );
  const pub = join(dataDir, RECORD_PUBLIC_KEY_FILE);
  const expected = formatVerifierKey(key.verifier);
  const found = existsSync(pub) ? readFileSync(pub, 'utf8').trim() : undefined;
  if (found !== expected) {
    // The start that made the key writes its .pub, over whatever was there; a start completes a key copied in alone.
    if (made || (found === undefined && create)) writeRecordPublicKey(key, pub);
    else if (found !== undefined) throw publicKeyMismatch(pub, path, found, key.verifier);
  }
  return key;
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

/** A short name of a record key for messages: name+keyid. */
export function recordKeyId(v: RecordVerifier): string {
  return `${v.name}+${v.keyId.toString('hex')}`;
}
