// The user PIN of a token: from the URI's `pin-source` file or variable, else SIGNGATE_PKCS11_PIN, never from the URI.
// A PIN file is read through the reader that the process gave (readPkcs11PinFilesWith: the command line, the
// service, the library's entry): this layer reads no file itself. No message ever holds the PIN.
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeyError } from '../../core/errors.js';
import { PKCS11_PIN_ENV, showUri, uriError, type Env, type Pkcs11Uri } from './uri.js';

/** Where the PIN comes from, for messages (never the PIN). */
function pinOrigin(uri: Pkcs11Uri): { kind: 'file'; path: string } | { kind: 'env'; name: string } {
  const source = uri.pinSource;
  if (source === undefined) return { kind: 'env', name: PKCS11_PIN_ENV };
  if (/^env:/i.test(source)) return { kind: 'env', name: source.slice(4) };
  if (/^file:/i.test(source)) {
    try {
      return { kind: 'file', path: source.startsWith('file://') ? fileURLToPath(source) : source.slice(5) };
    } catch {
      throw uriError(uri.text, `pin-source ${source} is not a file: URI`, 'Write pin-source=file:/absolute/path.');
    }
  }
  if (isAbsolute(source)) return { kind: 'file', path: source };
  throw uriError(uri.text, `pin-source ${source} is neither file:<absolute path> nor env:<variable>`);
}

function pinError(message: string, hint: string): KeyError {
  return new KeyError('SG_ERR_PKCS11_PIN', `${message}. ${hint}`);
}

/** Reads a `pin-source` file's text (the caller's file system). */
export type PinFileReader = (path: string) => string;
let pinFileReader: PinFileReader | undefined;

/**
 * Gives this process's keys in tokens the reader of their `pin-source` files. PKCS#11 state is the process's (one
 * login for every session), and so is this: the command line and the service set it before they open a key, and
 * the library's reader entry (src/reader-api.ts) when it is loaded. Without it a `pin-source` file cannot be read.
 */
export function readPkcs11PinFilesWith(read: PinFileReader): void {
  pinFileReader = read;
}

/**
 * The user PIN of the URI's token: the first line of the `pin-source` file, the `env:` variable, or
 * SIGNGATE_PKCS11_PIN. Errors name where it was looked for, never what was found.
 * @throws KeyError SG_ERR_PKCS11_PIN, SG_ERR_PKCS11_URI
 */
export function readPkcs11Pin(uri: Pkcs11Uri, env: Env = process.env): string {
  const origin = pinOrigin(uri);
  if (origin.kind === 'env') {
    const pin = env[origin.name];
    if (!pin)
      throw pinError(
        `no PIN for ${showUri(uri.text)}: ${origin.name} is not set`,
        `Set ${origin.name} to the token's user PIN, or add pin-source=file:/path to the URI (a file only the service's user can read).`,
      );
    return pin;
  }
  const hint = "Write the user PIN on its first line and let the service's user read it (chmod 600).";
  const readFile = pinFileReader;
  if (!readFile)
    throw pinError(
      `the PIN file ${origin.path} of ${showUri(uri.text)} cannot be read (this process gave no reader of PIN files: readPkcs11PinFilesWith)`,
      hint,
    );
  let text: string;
  try {
    text = readFile(origin.path);
  } catch (cause) {
    throw pinError(`the PIN file ${origin.path} of ${showUri(uri.text)} cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, hint);
  }
  const pin = text.replace(/^\uFEFF/, '').split(/\r?\n/)[0]!;
  if (!pin) throw pinError(`the PIN file ${origin.path} of ${showUri(uri.text)} is empty`, 'Write the user PIN on its first line.');
  return pin;
}

/** Where the PIN was taken from, for messages: the URI's pin-source, or SIGNGATE_PKCS11_PIN. */
export function pinPlace(uri: Pkcs11Uri): string {
  return uri.pinSource ? `pin-source of ${showUri(uri.text)}` : PKCS11_PIN_ENV;
}

/** The token's user PIN counters (CK_TOKEN_INFO flags), read before every login. */
export type TokenPinState = 'ok' | 'count-low' | 'final-try' | 'locked';

const CKF_USER_PIN_COUNT_LOW = 0x10000;
const CKF_USER_PIN_FINAL_TRY = 0x20000;
const CKF_USER_PIN_LOCKED = 0x40000;

/** The PIN counters of a token's CK_TOKEN_INFO flags. */
export function pinStateOf(flags: number): TokenPinState {
  if (flags & CKF_USER_PIN_LOCKED) return 'locked';
  if (flags & CKF_USER_PIN_FINAL_TRY) return 'final-try';
  return flags & CKF_USER_PIN_COUNT_LOW ? 'count-low' : 'ok';
}
