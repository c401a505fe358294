// Public keys seen before: a build tree or an SDK shares a handful of keys among thousands of files, so the parsed
// key, its token, its hex text and its node:crypto KeyObject are made once per distinct key blob, not once per file.
import type { KeyObject } from 'node:crypto';
import { toHex } from '../binary/byte-cursor.js';
import { parsePublicKeyBlob, toPublicKeyObject, type PublicKeyInfo } from './key-blob.js';
import { publicKeyToken } from './key-token.js';

/** What a public key blob stands for; the blob is a copy, never a view of the file it was read from. */
export interface KnownKey {
  readonly key: PublicKeyInfo;
  /** The 16-character public key token. */
  readonly token: string;
  /** The blob as lower-case hex. */
  readonly hex: string;
}

interface Entry extends KnownKey {
  keyObject: KeyObject | undefined;
}

/** Distinct keys kept; a scan over more than this many starts the cache afresh (a bound on memory, not a limit). */
export const MAX_KNOWN_KEYS = 256;

const known = new Map<string, Entry>();

function entryOf(blob: Uint8Array): Entry {
  // latin1 maps each byte to one character: an exact and cheap Map key for a blob of a few hundred bytes.
  const id = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength).toString('latin1');
  let entry = known.get(id);
  if (!entry) {
    const copy = Uint8Array.from(blob);
    // Throws KeyError for a bad blob (the fault of the file that holds it): nothing is kept, and the next file with
    // that blob gets the same error.
    const key = parsePublicKeyBlob(copy, 'input');
    if (known.size >= MAX_KNOWN_KEYS) known.clear();
    entry = { key, token: publicKeyToken(copy), hex: toHex(copy), keyObject: undefined };
    known.set(id, entry);
  }
  return entry;
}

/**
 * The parsed key, token and hex text of a PublicKeyBlob, made once per distinct blob.
 * @throws KeyError SG_ERR_KEY_BAD_BLOB as parsePublicKeyBlob
 */
export function knownKey(blob: Uint8Array): KnownKey {
  return entryOf(blob);
}

/**
 * The node:crypto public key of a (non-ECMA) key, made once per distinct blob.
 * @throws KeyError SG_ERR_KEY_ECMA for the ECMA neutral key, SG_ERR_KEY_BAD_BLOB
 */
export function knownKeyObject(key: PublicKeyInfo): KeyObject {
  const entry = entryOf(key.blob);
  return (entry.keyObject ??= toPublicKeyObject(entry.key));
}

/**
 * Forgets every key seen so far. The one-file executable's start-up snapshot is taken after a warm-up `check`
 * (scripts/build-sea.js): a live KeyObject cannot be in a snapshot, and nothing of that run is to be kept.
 */
export function forgetKnownKeys(): void {
  known.clear();
}
