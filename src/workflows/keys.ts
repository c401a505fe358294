// Reading key files and key maps from disk, with the file name in every error.
import { readFileSync } from 'node:fs';
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { KeyError, SignGateError } from '../core/errors.js';
import { decodeText } from '../core/text-encoding.js';
import { recordPublicKey, type RecordVerifier } from '../record/checkpoint.js';
import type { ExpectedKey } from '../rules/types.js';
import { parseStrongNameKeyFile, type StrongNameKeyFile } from '../strongname/key-blob.js';
import { isPkcs11Uri } from '../strongname/pkcs11/uri.js';
import { readPkcs11PinFilesWith } from '../strongname/pkcs11/pin.js';
import { openPkcs11Key, type Pkcs11KeyPair } from '../strongname/pkcs11/signer.js';
import { parseMonoKeyMap } from '../strongname/key-map.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { readInputFile } from './files.js';
import { displayPath } from './input-paths.js';

/** The service's record public key: the verifier key's text itself, or a file that holds it. */
export function readRecordPublicKey(fileOrKey: string): RecordVerifier {
  return recordPublicKey(fileOrKey, readText);
}

/** Reads and parses a .snk file; errors name the file and say what was expected. */
export function loadKeyFile(path: string): StrongNameKeyFile {
  const shown = displayPath(resolve(path));
  const bytes = readInputFile(resolve(path), shown);
  try {
    return parseStrongNameKeyFile(bytes);
  } catch (error) {
    if (error instanceof SignGateError) {
      throw new KeyError(error.code, `${shown}: ${error.message}`, { cause: error, file: shown });
    }
    throw error;
  }
}

/**
 * The key that signs: a `.snk` file (relative to `cwd`), or the key a `pkcs11:` URI names in a PKCS#11 token
 * (opened now: module, token, PIN and key are checked, and its public key read from the module).
 * @throws KeyError naming the file, or SG_ERR_PKCS11_* saying what of the token is missing (never the PIN)
 */
export function loadSigningKey(pathOrUri: string, cwd: string = process.cwd()): StrongNameKeyFile {
  return isPkcs11Uri(pathOrUri) ? openTokenKey(pathOrUri) : loadKeyFile(resolve(cwd, pathOrUri));
}

/** The key a `pkcs11:` URI names, opened now; its `pin-source` file, if any, read from disk (now and at later logins). */
export function openTokenKey(uri: string): Pkcs11KeyPair {
  readPkcs11PinFilesWith(readText);
  return openPkcs11Key(uri);
}

/** A text file read whole. */
/** A text file (a record key, a PIN) as Windows tools write it too: UTF-8 or UTF-16 with a byte-order mark. */
function readText(file: string): string {
  return decodeText(readFileSync(file)).text;
}

/** Reads a Mono machine.config into a key map, or returns undefined when no path is given. */
export function loadKeyMap(path: string | undefined): Map<string, Uint8Array> | undefined {
  if (!path) return undefined;
  const shown = displayPath(resolve(path));
  return parseMonoKeyMap(readInputFile(resolve(path), shown).toString('utf8'));
}

const OPTION_ID = /^(\d+)_public\.snk$/i;

/** The option id a key file's name carries (`12345_public.snk`, any case of `_public`). */
export function optionIdFromKeyFile(path: string): number | null {
  const m = OPTION_ID.exec(basename(path));
  return m ? Number(m[1]) : null;
}

/** An option's public key file as the rules expect it: option id, where it came from, key and token. */
export function loadExpectedKey(path: string): ExpectedKey {
  const key = loadKeyFile(path);
  const source = displayPath(resolve(path));
  const optionId = optionIdFromKeyFile(path);
  const token = publicKeyToken(key.publicKey.blob);
  // A key pair is SG205 (the check's key files), an error in every build.
  const pair = key.privateKey ? { keyPair: true } : {};
  // As the project names it: relative to the folder the check runs in (a build runs it in the project's folder).
  const fromHere = relative(process.cwd(), resolve(path)).split(sep).join('/');
  const fileName = isAbsolute(fromHere) ? resolve(path) : fromHere;
  return { optionId, source, fileName, publicKey: key.publicKey, token, ...pair };
}
