// Strong-name keys held in a PKCS#11 token (an HSM, a smart card, SoftHSM): the key is named by an RFC 7512
// `pkcs11:` URI, its public key blob is read from the module, and the RSA operation happens in the module while
// the digest is computed here (CKM_RSA_PKCS over the DigestInfo, which gives the same bytes as an in-process
// PKCS#1 v1.5 signature with the same key). The PIN comes from a file or an environment variable, never from the
// URI, and no message ever holds it.
//
// Unlike the rest of this layer, this module touches the machine: it loads the native binding (pkcs11js, an
// optional dependency loaded only when a pkcs11: key is used) and the vendor's module. A PIN file is read through
// the reader that the process gave (readPkcs11PinFilesWith: the command line, the service, the library's entry).
// One thread of the process owns the modules (see "The module's owner" below); the service's pool threads sign
// through it.
import { createHash, randomBytes, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';
import type { MessagePort } from 'node:worker_threads';
// pkcs11js is optional: where its native build fails (no C++ compiler, as on most Windows machines) npm leaves it
// out, and `npm install` (whose prepare script runs tsc) must still build signgate. Its types are then `any`.
// @ts-ignore -- not an error where pkcs11js is installed; @ts-expect-error would be one there.
import type * as Pkcs11Js from 'pkcs11js';
import { isSignGateError, KeyError } from '../core/errors.js';
import type { ErrorCode } from '../core/error-codes.js';
import { parsePublicKeyBlob, rsaPublicKeyBlob, toPublicKeyObject, type HashAlgorithm, type PublicKeyInfo, type StrongNameKeyFile } from './key-blob.js';

/** Where the PIN comes from when the URI names no `pin-source`. */
export const PKCS11_PIN_ENV = 'SIGNGATE_PKCS11_PIN';
/** Where the module path comes from when the URI names no `module-path`. */
export const PKCS11_MODULE_ENV = 'SIGNGATE_PKCS11_MODULE';

/** A parsed `pkcs11:` URI (RFC 7512): which token, which key, which module, where the PIN is. */
export interface Pkcs11Uri {
  /** The URI as given (it never holds a PIN: `pin-value` is refused). */
  readonly text: string;
  /** Token attributes (CK_TOKEN_INFO): `token` is the label. Absent ones match any token. */
  readonly token?: string;
  readonly manufacturer?: string;
  readonly serial?: string;
  readonly model?: string;
  readonly slotId?: number;
  /** The key's CKA_LABEL (`object=`). */
  readonly object?: string;
  /** The key's CKA_ID (`id=`, percent-encoded bytes). */
  readonly id?: Uint8Array;
  /** The module (`module-path=`), else SIGNGATE_PKCS11_MODULE. */
  readonly modulePath?: string;
  /** `pin-source=`: `file:<path>` (or a plain absolute path), or `env:<NAME>`; else SIGNGATE_PKCS11_PIN. */
  readonly pinSource?: string;
}

const PATH_ATTRIBUTES = new Set(['token', 'manufacturer', 'serial', 'model', 'slot-id', 'object', 'id', 'type', 'library-manufacturer', 'library-description', 'library-version', 'slot-description', 'slot-manufacturer']);
const QUERY_ATTRIBUTES = new Set(['module-path', 'module-name', 'pin-source', 'pin-value']);

function uriError(text: string, problem: string, hint = ''): KeyError {
  return new KeyError('SG_ERR_PKCS11_URI', `${showUri(text)}: ${problem}${hint ? `. ${hint}` : ''}`);
}

/** The URI for messages: a `pin-value` it should not carry is not shown. */
export function showUri(text: string): string {
  return text.replace(/([?&;]pin-value=)[^&]*/gi, '$1(not shown)');
}

/** True for a key argument or `keyPair` that names a key in a token rather than a file. */
export function isPkcs11Uri(text: string): boolean {
  return /^pkcs11:/i.test(text);
}

function decodeValue(text: string, name: string, value: string): Uint8Array {
  if (/%(?![0-9a-f]{2})/i.test(value)) throw uriError(text, `the value of ${name} has a % that is not followed by two hex digits`);
  const bytes: number[] = [];
  for (let i = 0; i < value.length; ) {
    if (value[i] === '%') {
      bytes.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const c = value.codePointAt(i)!;
      bytes.push(...Buffer.from(String.fromCodePoint(c), 'utf8'));
      i += c > 0xffff ? 2 : 1;
    }
  }
  return Uint8Array.from(bytes);
}

/**
 * Parses an RFC 7512 `pkcs11:` URI naming an RSA private key: path attributes (`token`, `serial`, `object`,
 * `id`, …) separated by `;`, query attributes (`module-path`, `pin-source`) after `?`, separated by `&`.
 * @throws KeyError SG_ERR_PKCS11_URI naming what is wrong (a `pin-value` is refused and never shown)
 */
export function parsePkcs11Uri(text: string): Pkcs11Uri {
  if (!isPkcs11Uri(text)) throw uriError(text, 'a PKCS#11 key URI starts with pkcs11:');
  const [path = '', query, ...more] = text.slice('pkcs11:'.length).split('?');
  if (more.length) throw uriError(text, 'the URI has more than one ?');
  const attributes = new Map<string, string>();
  const take = (part: string, allowed: Set<string>, where: string) => {
    if (part === '') return;
    const at = part.indexOf('=');
    const name = (at < 0 ? part : part.slice(0, at)).toLowerCase();
    if (at < 0) throw uriError(text, `the ${where} attribute ${JSON.stringify(name)} has no value`, 'Write it as name=value.');
    if (!allowed.has(name) && !name.startsWith('x-')) {
      throw uriError(text, `${JSON.stringify(name)} is not a ${where} attribute of RFC 7512`, `Known: ${[...allowed].join(', ')}.`);
    }
    if (attributes.has(name)) throw uriError(text, `${name} is given twice`);
    attributes.set(name, part.slice(at + 1));
  };
  for (const part of path.split(';')) take(part, PATH_ATTRIBUTES, 'path');
  for (const part of (query ?? '').split('&')) take(part, QUERY_ATTRIBUTES, 'query');
  if (attributes.has('pin-value')) {
    throw uriError(text, 'the URI carries the PIN (pin-value)', `A URI shows in configuration files, process lists and logs: put the PIN in a file only the service's user can read (pin-source=file:/path) or in ${PKCS11_PIN_ENV}.`);
  }
  if (attributes.has('module-name') && !attributes.has('module-path')) {
    throw uriError(text, 'module-name is not looked up', `Name the module file: module-path=/usr/lib/softhsm/libsofthsm2.so (or set ${PKCS11_MODULE_ENV}).`);
  }
  const type = attributes.get('type');
  if (type !== undefined && type !== 'private') throw uriError(text, `type=${type} names no private key`, 'Sign with the private key: leave type out or write type=private.');
  const string = (name: string) => {
    const value = attributes.get(name);
    return value === undefined ? undefined : Buffer.from(decodeValue(text, name, value)).toString('utf8');
  };
  const slot = attributes.get('slot-id');
  if (slot !== undefined && !/^\d+$/.test(slot)) throw uriError(text, `slot-id=${slot} is not a decimal number`);
  const id = attributes.get('id');
  const object = string('object');
  if (object === undefined && id === undefined) throw uriError(text, 'the URI names no key', 'Add object=<key label> or id=<key id as %xx bytes>.');
  const parsed: Pkcs11Uri = {
    text,
    ...(string('token') !== undefined ? { token: string('token')! } : {}),
    ...(string('manufacturer') !== undefined ? { manufacturer: string('manufacturer')! } : {}),
    ...(string('serial') !== undefined ? { serial: string('serial')! } : {}),
    ...(string('model') !== undefined ? { model: string('model')! } : {}),
    ...(slot !== undefined ? { slotId: Number(slot) } : {}),
    ...(object !== undefined ? { object } : {}),
    ...(id !== undefined ? { id: decodeValue(text, 'id', id) } : {}),
    ...(string('module-path') !== undefined ? { modulePath: string('module-path')! } : {}),
    ...(string('pin-source') !== undefined ? { pinSource: string('pin-source')! } : {}),
  };
  if (parsed.modulePath !== undefined && !isAbsolute(parsed.modulePath)) throw uriError(text, `module-path ${parsed.modulePath} is not an absolute path`, 'Name the module file by its absolute path.');
  return parsed;
}

type Env = Readonly<Record<string, string | undefined>>;

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
 * the library's entry (src/index.ts) when it is loaded. Without it a `pin-source` file cannot be read.
 */
export function readPkcs11PinFilesWith(read: PinFileReader): void {
  pinFileReader = read;
}

/**
 * The user PIN of the URI's token: the first line of the `pin-source` file, the `env:` variable, or
 * SIGNGATE_PKCS11_PIN. Errors name where it was looked for, never what was found.
 * @throws KeyError SG_ERR_PKCS11_PIN, SG_ERR_PKCS11_URI
 */
export function readPkcs11Pin(uri: Pkcs11Uri, env: Env = process.env, readFile: PinFileReader | undefined = pinFileReader): string {
  const origin = pinOrigin(uri);
  if (origin.kind === 'env') {
    const pin = env[origin.name];
    if (!pin) throw pinError(`no PIN for ${showUri(uri.text)}: ${origin.name} is not set`, `Set ${origin.name} to the token's user PIN, or add pin-source=file:/path to the URI (a file only the service's user can read).`);
    return pin;
  }
  const hint = 'Write the user PIN on its first line and let the service\'s user read it (chmod 600).';
  if (!readFile) throw pinError(`the PIN file ${origin.path} of ${showUri(uri.text)} cannot be read (this process gave no reader of PIN files: readPkcs11PinFilesWith)`, hint);
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

type Pkcs11Module = typeof Pkcs11Js;
let binding: Pkcs11Module | undefined;

/** pkcs11js, loaded on first use (an optional native dependency that a one-file executable cannot carry). */
function loadBinding(): Pkcs11Module {
  if (binding) return binding;
  if (isSea()) {
    throw new KeyError('SG_ERR_PKCS11_MODULE', 'pkcs11: keys need the pkcs11js native binding, which the one-file executable cannot carry. Run signgate installed from npm (Node.js 20 or later) to sign with a key in a token.');
  }
  try {
    binding = createRequire(import.meta.url)('pkcs11js') as Pkcs11Module;
  } catch (cause) {
    throw new KeyError('SG_ERR_PKCS11_MODULE', `pkcs11: keys need the optional dependency pkcs11js, which could not be loaded (${(cause as Error).message.split('\n')[0]}). Install it (npm install pkcs11js; it builds a native addon, which needs a C++ compiler and Node's headers).`, { cause });
  }
  return binding;
}

/** A PKCS#11 error's CKR_ name (pkcs11js puts it in the message). */
function ckr(error: unknown): string {
  return /CKR_[A-Z_]+/.exec(String((error as Error)?.message))?.[0] ?? 'an error';
}

function pkcs11Error(code: ErrorCode, message: string, cause?: unknown): KeyError {
  return new KeyError(code, message, cause === undefined ? undefined : { cause: new Error(ckr(cause)) });
}

const trimmed = (text: string) => text.replace(/[\s\0]+$/, '');

// ---------------------------------------------------------------------------------------------------------------
// The module's owner. PKCS#11 state is the process's: C_Initialize once, the login is the application's (every
// session of the process shares it), and SoftHSM2 rewrites its token file at each login. So one thread of the process
// (the service's own thread, or the command's) owns every module: it initializes it once, logs in once, keeps a few
// sessions and signs; the service's pool threads hash the file and hand it the DigestInfo (servePkcs11Broker and
// withPkcs11Broker below). The RSA operation runs in libuv's threads (C_SignAsync), a session each, so the owner's
// event loop stays free while several signatures are made at once.
// ---------------------------------------------------------------------------------------------------------------

/** A module loaded by its owner. */
interface ModuleEntry {
  readonly path: string;
  readonly module: Pkcs11Js.PKCS11;
  /** Counts C_Initialize calls: sessions and handles of an earlier one are void (their numbers come back). */
  generation: number;
  /** Signatures under way in libuv's threads: the module is not initialized again under them. */
  inFlight: number;
  /** While the module waits for them to initialize again: new signatures wait for it. */
  paused?: Promise<void>;
  drained?: () => void;
}

const modules = new Map<string, ModuleEntry>();

function initialize(pkcs11js: Pkcs11Module, module: Pkcs11Js.PKCS11, path: string): void {
  try {
    // OS locking: several sessions sign at once in libuv's threads.
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (cause) {
    // Initialized by other code of this process (its own PKCS11 object): the module is the same.
    if (ckr(cause) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') {
      throw pkcs11Error('SG_ERR_PKCS11_MODULE', `the PKCS#11 module ${path} failed to initialize (${ckr(cause)}). Check its configuration (SoftHSM: SOFTHSM2_CONF and its tokendir).`, cause);
    }
  }
}

function openModule(path: string): ModuleEntry {
  const known = modules.get(path);
  if (known) return known;
  const pkcs11js = loadBinding();
  const module = new pkcs11js.PKCS11();
  try {
    module.load(path);
  } catch (cause) {
    throw pkcs11Error('SG_ERR_PKCS11_MODULE', `the PKCS#11 module ${path} cannot be loaded (${String((cause as Error).message).split('\n')[0]}). Check the path (module-path= or ${PKCS11_MODULE_ENV}) and that the module's package is installed.`);
  }
  initialize(pkcs11js, module, path);
  const entry: ModuleEntry = { path, module, generation: 1, inFlight: 0 };
  modules.set(path, entry);
  return entry;
}

/** A key found in a token, with its idle sessions. */
interface KeyEntry {
  /** The URI, with the module path it was opened with. */
  readonly uri: Pkcs11Uri;
  readonly host: ModuleEntry;
  readonly generation: number;
  readonly slot: Pkcs11Js.Handle;
  readonly key: Pkcs11Js.Handle;
  readonly publicKey: PublicKeyInfo;
  readonly where: string;
  readonly idle: Pkcs11Js.Handle[];
}

/** The keys opened, by URI, and the PINs a token refused (as hashes): none is offered twice in this process. */
const keys = new Map<string, KeyEntry>();
const refusedPins = new Set<string>();
/** Idle sessions kept per key: the most signatures made at once, in practice. */
const MAX_IDLE_SESSIONS = 64;

/** The token's user PIN counters (CK_TOKEN_INFO flags), read before every login. */
export type TokenPinState = 'ok' | 'count-low' | 'final-try' | 'locked';

const CKF_USER_PIN_COUNT_LOW = 0x10000;
const CKF_USER_PIN_FINAL_TRY = 0x20000;
const CKF_USER_PIN_LOCKED = 0x40000;

function pinStateOf(flags: number): TokenPinState {
  if (flags & CKF_USER_PIN_LOCKED) return 'locked';
  if (flags & CKF_USER_PIN_FINAL_TRY) return 'final-try';
  return flags & CKF_USER_PIN_COUNT_LOW ? 'count-low' : 'ok';
}

/** What the owner of the modules did that an operator should see (the service logs it). Never a PIN. */
export type Pkcs11Event =
  /** The PIN counters of a token, read before logging in to it. */
  | { readonly kind: 'pin-state'; readonly uri: string; readonly token: string; readonly state: TokenPinState }
  /** An operation failed in a way a fresh session (or the module initialized again) may cure; it is tried again. */
  | { readonly kind: 'retry'; readonly uri: string; readonly code: string; readonly attempt: number }
  /** The module was finalized and initialized again (a token went away and came back, or the module lost it). */
  | { readonly kind: 'reinitialized'; readonly module: string }
  /** An operation failed for good: `code` is the PKCS#11 name (CKR_…) or the error code. */
  | { readonly kind: 'failed'; readonly uri: string; readonly code: string; readonly message: string };

const listeners = new Set<(event: Pkcs11Event) => void>();

/** Calls `listener` with what the owner of the modules does in this thread; returns the function that stops it. */
export function onPkcs11Event(listener: (event: Pkcs11Event) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function emit(event: Pkcs11Event): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // a listener's fault is not the token's
    }
  }
}

function describeToken(uri: Pkcs11Uri): string {
  const parts = [uri.token !== undefined ? `token "${uri.token}"` : '', uri.serial !== undefined ? `serial ${uri.serial}` : '', uri.slotId !== undefined ? `slot ${uri.slotId}` : ''].filter(Boolean);
  return parts.length ? parts.join(', ') : 'any token';
}

function describeKey(uri: Pkcs11Uri): string {
  return [uri.object !== undefined ? `label "${uri.object}"` : '', uri.id !== undefined ? `id ${Buffer.from(uri.id).toString('hex')}` : ''].filter(Boolean).join(' and ');
}

/** A token the URI names is not there: after the module is initialized again it may be (a token put back). */
class TokenMissing extends KeyError {}

function findSlot(module: Pkcs11Js.PKCS11, uri: Pkcs11Uri, modulePath: string): Pkcs11Js.Handle {
  const slots = module.C_GetSlotList(true);
  const labels: string[] = [];
  const matches = slots.filter((slot: Pkcs11Js.Handle) => {
    if (uri.slotId !== undefined && slot.readUIntLE(0, Math.min(6, slot.length)) !== uri.slotId) return false;
    const info = module.C_GetTokenInfo(slot);
    labels.push(JSON.stringify(trimmed(info.label)));
    return (
      (uri.token === undefined || trimmed(info.label) === uri.token) &&
      (uri.serial === undefined || trimmed(info.serialNumber) === uri.serial) &&
      (uri.manufacturer === undefined || trimmed(info.manufacturerID) === uri.manufacturer) &&
      (uri.model === undefined || trimmed(info.model) === uri.model)
    );
  });
  if (matches.length === 0) {
    throw new TokenMissing('SG_ERR_PKCS11_TOKEN', `no ${describeToken(uri)} in the PKCS#11 module ${modulePath} (tokens present: ${labels.length ? labels.join(', ') : 'none'}). Check the token= label (pkcs11-tool --module ${modulePath} --list-slots), or that the token is plugged in.`);
  }
  if (matches.length > 1) throw new KeyError('SG_ERR_PKCS11_TOKEN', `${matches.length} tokens match ${describeToken(uri)} in ${modulePath}. Name one by token= and serial=.`);
  return matches[0]!;
}

function pinPlace(uri: Pkcs11Uri): string {
  return uri.pinSource ? `pin-source of ${showUri(uri.text)}` : PKCS11_PIN_ENV;
}

const CKS_RO_USER_FUNCTIONS = 1;
const CKS_RW_USER_FUNCTIONS = 3;

/**
 * Logs the process in to the token of `session`, unless it is already: the PIN counters are read (and reported)
 * first, a token on its final try or locked is not logged in to, and a PIN the token refused is not offered again
 * until the PIN's source holds another PIN or the URI changes.
 */
function logIn(pkcs11js: Pkcs11Module, module: Pkcs11Js.PKCS11, slot: Pkcs11Js.Handle, session: Pkcs11Js.Handle, uri: Pkcs11Uri, pin: string): void {
  const state = module.C_GetSessionInfo(session).state;
  if (state === CKS_RO_USER_FUNCTIONS || state === CKS_RW_USER_FUNCTIONS) return; // the process is logged in to the token
  const refusal = createHash('sha256').update(`${uri.text}\0${uri.modulePath ?? ''}\0${pin}`).digest('hex');
  if (refusedPins.has(refusal)) {
    throw new KeyError('SG_ERR_PKCS11_PIN', `the token (${describeToken(uri)}) refused this PIN before; it is not tried again, since tokens lock after a few wrong PINs. Correct the PIN (${pinPlace(uri)}): a changed PIN is tried at the next signature.`);
  }
  const info = module.C_GetTokenInfo(slot);
  const pinState = pinStateOf(info.flags);
  emit({ kind: 'pin-state', uri: showUri(uri.text), token: trimmed(info.label), state: pinState });
  if (pinState === 'locked') {
    throw new KeyError('SG_ERR_PKCS11_PIN', `the token's user PIN is locked (${describeToken(uri)}); nothing is signed with it. Unlock it with the security officer PIN (pkcs11-tool --init-pin --login --login-type so).`);
  }
  if (pinState === 'final-try') {
    throw new KeyError('SG_ERR_PKCS11_PIN', `the token (${describeToken(uri)}) has one PIN try left before it locks; the service does not log in to it by itself. Check the PIN (${pinPlace(uri)}), then log in once by hand (pkcs11-tool --login --test), which resets the counter.`);
  }
  try {
    module.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (cause) {
    const name = ckr(cause);
    if (name === 'CKR_USER_ALREADY_LOGGED_IN') return; // logged in meanwhile by other code of this process
    if (name === 'CKR_PIN_INCORRECT' || name === 'CKR_PIN_INVALID' || name === 'CKR_PIN_LEN_RANGE') refusedPins.add(refusal);
    const what = name === 'CKR_PIN_LOCKED' ? 'the token\'s user PIN is locked' : name === 'CKR_PIN_INCORRECT' ? 'the token refused the PIN' : `logging in to the token failed (${name})`;
    throw new KeyError('SG_ERR_PKCS11_PIN', `${what} (${describeToken(uri)}, PIN from ${pinPlace(uri)}). ${name === 'CKR_PIN_LOCKED' ? 'Unlock it with the security officer PIN.' : 'Check the PIN; it is not shown, and it is not offered again until it changes.'}`);
  }
}

function attributeNumber(bytes: Buffer): number {
  return bytes.length === 0 ? 0 : Number(BigInt(`0x${bytes.toString('hex')}`));
}

function modulePathOf(uri: Pkcs11Uri, env: Env): string {
  const modulePath = uri.modulePath ?? env[PKCS11_MODULE_ENV];
  if (!modulePath) throw new KeyError('SG_ERR_PKCS11_MODULE', `${showUri(uri.text)} names no module. Add module-path=/path/to/module.so to the URI (SoftHSM: /usr/lib/softhsm/libsofthsm2.so), or set ${PKCS11_MODULE_ENV}.`);
  return modulePath;
}

/** Closes a session unless its module was initialized again since (its number may be another's now). */
function closeSession(entry: KeyEntry, session: Pkcs11Js.Handle): void {
  if (entry.generation !== entry.host.generation) return;
  try {
    entry.host.module.C_CloseSession(session);
  } catch {
    // the session is gone with the token
  }
}

/**
 * Finds the token, logs in (once for the process) and finds the key. Errors of the module that a fresh session or
 * a module initialized again may cure are thrown as they are (the caller tries again); others as KeyErrors.
 */
function openKey(uri: Pkcs11Uri, env: Env): KeyEntry {
  const modulePath = modulePathOf(uri, env);
  const full = uri.modulePath ? uri : { ...uri, modulePath };
  const pin = readPkcs11Pin(full, env);
  const pkcs11js = loadBinding();
  const host = openModule(modulePath);
  const { module } = host;
  let session: Pkcs11Js.Handle | undefined;
  try {
    const slot = findSlot(module, full, modulePath);
    session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    logIn(pkcs11js, module, slot, session, full, pin);
    const template: Pkcs11Js.Template = [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      ...(full.object !== undefined ? [{ type: pkcs11js.CKA_LABEL, value: full.object }] : []),
      ...(full.id !== undefined ? [{ type: pkcs11js.CKA_ID, value: Buffer.from(full.id) }] : []),
    ];
    module.C_FindObjectsInit(session, template);
    const found = module.C_FindObjects(session, 2);
    module.C_FindObjectsFinal(session);
    const where = `${describeToken(full)} of ${modulePath}`;
    if (found.length === 0) {
      throw new KeyError('SG_ERR_PKCS11_KEY', `no private key with ${describeKey(full)} in ${where}. List the keys: pkcs11-tool --module ${modulePath} --login --list-objects --type privkey.`);
    }
    if (found.length > 1) throw new KeyError('SG_ERR_PKCS11_KEY', `more than one private key with ${describeKey(full)} in ${where}. Name one by object= and id=.`);
    const key = found[0]!;
    const [type, modulus, exponent] = module.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_KEY_TYPE }, { type: pkcs11js.CKA_MODULUS }, { type: pkcs11js.CKA_PUBLIC_EXPONENT }]).map((a: Pkcs11Js.Attribute) => a.value as Buffer);
    if (attributeNumber(type!) !== pkcs11js.CKK_RSA) throw new KeyError('SG_ERR_PKCS11_KEY', `the key with ${describeKey(full)} in ${where} is not an RSA key; strong names are RSA signatures.`);
    const publicKey = parsePublicKeyBlob(rsaPublicKeyBlob(modulus!, attributeNumber(exponent!)));
    return { uri: full, host, generation: host.generation, slot, key, publicKey, where, idle: [session] };
  } catch (error) {
    if (session !== undefined) {
      try {
        module.C_CloseSession(session);
      } catch {
        // the session is gone with the token
      }
    }
    if (error instanceof KeyError || TRANSIENT.has(ckr(error))) throw error;
    throw pkcs11Error('SG_ERR_PKCS11_TOKEN', `the PKCS#11 module ${modulePath} failed while opening ${describeKey(full)} in ${describeToken(full)} (${ckr(error)}). Check that the token is present and the module's configuration.`, error);
  }
}

/** The key of `uri`, opened on first use and again after its module was initialized again. */
function keyEntry(uri: Pkcs11Uri, env: Env): KeyEntry {
  const known = keys.get(uri.text);
  if (known && known.generation === known.host.generation) return known;
  if (known) keys.delete(uri.text);
  const opened = openKey(uri, env);
  keys.set(uri.text, opened);
  return opened;
}

/** Forgets a key: it is found again (the slot enumerated again, a fresh session) at its next use. */
function forget(entry: KeyEntry): void {
  if (keys.get(entry.uri.text) === entry) keys.delete(entry.uri.text);
  for (const session of entry.idle.splice(0)) closeSession(entry, session);
}

function takeSession(entry: KeyEntry): Pkcs11Js.Handle {
  return entry.idle.pop() ?? entry.host.module.C_OpenSession(entry.slot, loadBinding().CKF_SERIAL_SESSION);
}

function giveBack(entry: KeyEntry, session: Pkcs11Js.Handle): void {
  if (keys.get(entry.uri.text) === entry && entry.generation === entry.host.generation && entry.idle.length < MAX_IDLE_SESSIONS) entry.idle.push(session);
  else closeSession(entry, session);
}

/** Finalizes the module and initializes it again: every key of it is found again, and logged in to, at its next use. */
function reinitialize(host: ModuleEntry): void {
  for (const entry of [...keys.values()]) if (entry.host === host) forget(entry);
  try {
    host.module.C_Finalize();
  } catch {
    // not initialized any more
  }
  host.generation++;
  initialize(loadBinding(), host.module, host.path);
  emit({ kind: 'reinitialized', module: host.path });
}

/** Initializes the module again once the signatures under way are done (new ones wait), unless another did so first. */
function reinitializeWhenDrained(host: ModuleEntry, seen: number): Promise<void> {
  if (host.paused) return host.paused;
  if (host.generation !== seen) return Promise.resolve();
  const run = async () => {
    if (host.inFlight > 0) await new Promise<void>((resolve) => (host.drained = resolve));
    else await Promise.resolve();
    host.drained = undefined;
    try {
      reinitialize(host);
    } finally {
      host.paused = undefined;
    }
  };
  host.paused = run();
  return host.paused;
}

/**
 * Errors a fresh session, the slots enumerated again or the module initialized again may cure: the token went
 * away (and came back), the HSM restarted, a session was closed, the module lost its state.
 */
const TRANSIENT = new Set([
  'CKR_SESSION_HANDLE_INVALID',
  'CKR_SESSION_CLOSED',
  'CKR_DEVICE_REMOVED',
  'CKR_DEVICE_ERROR',
  'CKR_TOKEN_NOT_PRESENT',
  'CKR_TOKEN_NOT_RECOGNIZED',
  'CKR_SLOT_ID_INVALID',
  'CKR_USER_NOT_LOGGED_IN',
  'CKR_OBJECT_HANDLE_INVALID',
  'CKR_KEY_HANDLE_INVALID',
  'CKR_CRYPTOKI_NOT_INITIALIZED',
  // SoftHSM2 answers C_GetSlotList so when a token's folder went away under it.
  'CKR_GENERAL_ERROR',
]);
/** Attempts of one operation: as it is, with a fresh session and the slots enumerated again, with the module initialized again. */
const ATTEMPTS = 3;

function transient(error: unknown): boolean {
  return error instanceof TokenMissing || (!(error instanceof KeyError) && TRANSIENT.has(ckr(error)));
}

function failure(error: unknown, uri: Pkcs11Uri, entry: KeyEntry | undefined, attempts: number): KeyError {
  const name = error instanceof KeyError ? error.code : ckr(error);
  const failed =
    error instanceof KeyError
      ? error
      : pkcs11Error(
          'SG_ERR_PKCS11_SIGN',
          transient(error)
            ? `the PKCS#11 module failed to sign with ${describeKey(uri)} in ${entry?.where ?? describeToken(uri)} (${name}), ${attempts} times, with fresh sessions and the module initialized again. Check that the token is present.`
            : `the PKCS#11 module refused to sign with ${describeKey(uri)} in ${entry?.where ?? describeToken(uri)} (${name}). The key must allow signing (CKA_SIGN) with CKM_RSA_PKCS.`,
          error,
        );
  emit({ kind: 'failed', uri: showUri(uri.text), code: name, message: failed.message });
  return failed;
}

/** What to do before attempt `attempt + 1`: a fresh session and slot first, then the module initialized again. */
function recoverSync(uri: Pkcs11Uri, entry: KeyEntry | undefined, error: unknown, attempt: number, env: Env): void {
  emit({ kind: 'retry', uri: showUri(uri.text), code: error instanceof KeyError ? error.code : ckr(error), attempt });
  if (entry) forget(entry);
  if (attempt < 2) return;
  const host = entry?.host ?? modules.get(modulePathOf(uri, env));
  // Not under signatures in flight: the next attempt fails then, and the one after initializes it.
  if (host && host.inFlight === 0 && !host.paused) reinitialize(host);
}

async function recoverAsync(uri: Pkcs11Uri, entry: KeyEntry | undefined, error: unknown, attempt: number, env: Env, seen: number | undefined): Promise<void> {
  emit({ kind: 'retry', uri: showUri(uri.text), code: error instanceof KeyError ? error.code : ckr(error), attempt });
  if (entry) forget(entry);
  if (attempt < 2) return;
  const host = entry?.host ?? modules.get(modulePathOf(uri, env));
  if (host) await reinitializeWhenDrained(host, seen ?? host.generation);
}

/** Runs `op` with the key of `uri` and a session of its own, in this thread, with the bounded retries. */
function withKey<T>(uri: Pkcs11Uri, env: Env, op: (entry: KeyEntry, session: Pkcs11Js.Handle) => T): T {
  for (let attempt = 1; ; attempt++) {
    let entry: KeyEntry | undefined;
    try {
      entry = keyEntry(uri, env);
      const session = takeSession(entry);
      try {
        const result = op(entry, session);
        giveBack(entry, session);
        return result;
      } catch (error) {
        closeSession(entry, session);
        throw error;
      }
    } catch (error) {
      if (!transient(error) || attempt >= ATTEMPTS) throw failure(error, uri, entry, attempt);
      recoverSync(uri, entry, error, attempt, env);
    }
  }
}

/** withKey() for an operation of libuv's threads: counted as in flight, and waiting while the module is initialized again. */
async function withKeyAsync<T>(uri: Pkcs11Uri, env: Env, op: (entry: KeyEntry, session: Pkcs11Js.Handle) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let entry: KeyEntry | undefined;
    let seen: number | undefined;
    try {
      entry = keyEntry(uri, env);
      while (entry.host.paused) {
        await entry.host.paused;
        entry = keyEntry(uri, env);
      }
      const { host } = entry;
      seen = entry.generation;
      const session = takeSession(entry);
      host.inFlight++;
      try {
        const result = await op(entry, session);
        giveBack(entry, session);
        return result;
      } catch (error) {
        closeSession(entry, session);
        throw error;
      } finally {
        host.inFlight--;
        if (host.inFlight === 0) host.drained?.();
      }
    } catch (error) {
      if (!transient(error) || attempt >= ATTEMPTS) throw failure(error, uri, entry, attempt);
      await recoverAsync(uri, entry, error, attempt, env, seen);
    }
  }
}

/** DER DigestInfo prefixes (RFC 8017 section 9.2, note 1): what CKM_RSA_PKCS signs before the hash. */
const DIGEST_INFO: Record<HashAlgorithm, string> = {
  sha1: '3021300906052b0e03021a05000414',
  sha256: '3031300d060960864801650304020105000420',
  sha384: '3041300d060960864801650304020205000430',
  sha512: '3051300d060960864801650304020305000440',
};

function digestInfoOf(chunks: Iterable<Uint8Array>, algorithm: HashAlgorithm): Buffer {
  const hash = createHash(algorithm);
  for (const chunk of chunks) hash.update(chunk);
  return Buffer.concat([Buffer.from(DIGEST_INFO[algorithm], 'hex'), hash.digest()]);
}

function signInit(entry: KeyEntry, session: Pkcs11Js.Handle): void {
  entry.host.module.C_SignInit(session, { mechanism: loadBinding().CKM_RSA_PKCS }, entry.key);
}

/** Signs a DigestInfo in this thread, at once (the command line; the service signing in its own thread). */
function signDigestInfo(uri: Pkcs11Uri, digestInfo: Buffer, env: Env): Uint8Array {
  return withKey(uri, env, (entry, session) => {
    signInit(entry, session);
    return Uint8Array.from(entry.host.module.C_Sign(session, digestInfo, Buffer.alloc(entry.publicKey.bitLength / 8)));
  });
}

/** Signs a DigestInfo in libuv's threads (what the service's pool threads ask for, and the readiness probe). */
function signDigestInfoAsync(uri: Pkcs11Uri, digestInfo: Buffer, env: Env): Promise<{ signature: Uint8Array; entry: KeyEntry }> {
  return withKeyAsync(uri, env, async (entry, session) => {
    signInit(entry, session);
    const signature = await entry.host.module.C_SignAsync(session, digestInfo, Buffer.alloc(entry.publicKey.bitLength / 8));
    return { signature: Uint8Array.from(signature), entry };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The broker: a pool thread hands the owner the DigestInfo through a MessagePort and waits (Atomics.wait) for the
// signature or the error in a SharedArrayBuffer. The pool passes one port with each task of a key in a token.
// ---------------------------------------------------------------------------------------------------------------

/** Room for a signature (a 16384-bit key's is 2048 bytes) or an error's code and message. */
const ANSWER_BYTES = 16 * 1024;
/** How long a pool thread waits for the owner: its retries included, far longer than any token takes. */
const BROKER_WAIT_MS = 10 * 60 * 1000;
const ANSWER_SIGNATURE = 1;
const ANSWER_ERROR = 2;

let brokerPort: MessagePort | undefined;

interface BrokerRequest {
  readonly uri: string;
  readonly digestInfo: Uint8Array;
  readonly answer: SharedArrayBuffer;
}

function answer(shared: SharedArrayBuffer, kind: number, bytes: Uint8Array): void {
  const header = new Int32Array(shared, 0, 2);
  const length = Math.min(bytes.length, ANSWER_BYTES);
  new Uint8Array(shared, 8, length).set(bytes.subarray(0, length));
  header[1] = length;
  Atomics.store(header, 0, kind);
  Atomics.notify(header, 0);
}

/**
 * Signs, in this thread (the owner of the modules), what a pool thread asks for through `port` (the other end is
 * given to withPkcs11Broker there). Answers every request, with the signature or the error.
 */
export function servePkcs11Broker(port: MessagePort, env: Env = process.env): void {
  port.on('message', (request: BrokerRequest) => {
    let pending: Promise<{ signature: Uint8Array }>;
    try {
      pending = signDigestInfoAsync(parsePkcs11Uri(request.uri), Buffer.from(request.digestInfo), env);
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      ({ signature }) => answer(request.answer, ANSWER_SIGNATURE, signature),
      (error: unknown) => {
        const failed = isSignGateError(error) ? { code: error.code, message: error.message } : { code: 'SG_ERR_PKCS11_SIGN', message: `signing through the PKCS#11 module failed (${ckr(error)})` };
        const text = JSON.stringify({ code: failed.code, message: failed.message.slice(0, ANSWER_BYTES / 4) });
        answer(request.answer, ANSWER_ERROR, Buffer.from(text, 'utf8'));
      },
    );
  });
}

/** Runs `run` (a pool thread's task) with its keys in tokens signed by the owner at the other end of `port`; closes the port after. */
export function withPkcs11Broker<T>(port: MessagePort | undefined, run: () => T): T {
  if (!port) return run();
  const before = brokerPort;
  brokerPort = port;
  try {
    return run();
  } finally {
    brokerPort = before;
    port.close();
  }
}

function signThroughBroker(port: MessagePort, uri: string, digestInfo: Buffer): Uint8Array {
  const shared = new SharedArrayBuffer(8 + ANSWER_BYTES);
  const header = new Int32Array(shared, 0, 2);
  port.postMessage({ uri, digestInfo, answer: shared } satisfies BrokerRequest);
  if (Atomics.wait(header, 0, 0, BROKER_WAIT_MS) === 'timed-out') {
    throw new KeyError('SG_ERR_PKCS11_SIGN', `the service's thread that owns the PKCS#11 module did not answer within ${BROKER_WAIT_MS / 60_000} minutes`);
  }
  const body = new Uint8Array(shared, 8, header[1]!);
  if (Atomics.load(header, 0) === ANSWER_SIGNATURE) return Uint8Array.from(body);
  const { code, message } = JSON.parse(Buffer.from(body).toString('utf8')) as { code: ErrorCode; message: string };
  throw new KeyError(code, message);
}

/** A key in a PKCS#11 token, usable wherever a key pair signs (signAssembly with the signer of pkcs11Signer()). */
export interface Pkcs11KeyPair extends StrongNameKeyFile {
  readonly kind: 'key-pair';
  readonly privateKey: undefined;
  /** The key's URI: what the owner of the module opens the key with. Holds no PIN. */
  readonly pkcs11: string;
}

/** True for a key pair that lives in a token. */
export function isPkcs11Key(key: StrongNameKeyFile): key is Pkcs11KeyPair {
  return typeof (key as Partial<Pkcs11KeyPair>).pkcs11 === 'string';
}

/**
 * Opens the key a `pkcs11:` URI names (loading the module, finding the token, logging in with the PIN, finding the
 * private key) and returns it with its public key as the module holds it. The result can be moved to worker
 * threads: they sign through the thread that opened it (servePkcs11Broker).
 * @throws KeyError SG_ERR_PKCS11_URI, SG_ERR_PKCS11_MODULE, SG_ERR_PKCS11_TOKEN, SG_ERR_PKCS11_PIN, SG_ERR_PKCS11_KEY
 */
export function openPkcs11Key(uri: string, env: Env = process.env): Pkcs11KeyPair {
  const parsed = parsePkcs11Uri(uri);
  return { kind: 'key-pair', publicKey: withKey(parsed, env, (entry) => entry.publicKey), privateKey: undefined, pkcs11: uri };
}

/**
 * A key pair that names a key in a token, with the public key given (from the option's `_public.snk`), without
 * touching the module: the key is opened when it first signs. For a service that starts while its token is away.
 * @throws KeyError SG_ERR_PKCS11_URI
 */
export function pkcs11KeyWithPublicKey(uri: string, publicKey: PublicKeyInfo): Pkcs11KeyPair {
  parsePkcs11Uri(uri);
  return { kind: 'key-pair', publicKey, privateKey: undefined, pkcs11: uri };
}

/**
 * Signs a digest input with the key of `uri`: the hash is computed here, the module does the RSA operation
 * (CKM_RSA_PKCS over the DigestInfo), in this thread or, in a pool thread of the service, in the thread that owns
 * the module. A session or slot error is tried again with a fresh session, then with the module initialized again.
 * The signature is big-endian, as node:crypto gives it.
 * @throws KeyError SG_ERR_PKCS11_* (the key cannot be opened, or the module refuses to sign)
 */
export function signWithPkcs11(uri: string, chunks: Iterable<Uint8Array>, algorithm: HashAlgorithm, env: Env = process.env): Uint8Array {
  const parsed = parsePkcs11Uri(uri);
  const digestInfo = digestInfoOf(chunks, algorithm);
  return brokerPort ? signThroughBroker(brokerPort, uri, digestInfo) : signDigestInfo(parsed, digestInfo, env);
}

/** The signer of a key in a token (signAssembly uses it for such a key); undefined for a key pair file. */
export function tokenSigner(key: StrongNameKeyFile): ((chunks: Iterable<Uint8Array>, algorithm: HashAlgorithm) => Uint8Array) | undefined {
  return isPkcs11Key(key) ? (chunks, algorithm) => signWithPkcs11(key.pkcs11, chunks, algorithm) : undefined;
}

/** True when `key` can make a signature: a key pair file with its private key, or a key in a token. */
export function canSign(key: StrongNameKeyFile): boolean {
  return key.privateKey !== undefined || isPkcs11Key(key);
}

/**
 * The PIN counters of the token `uri` names, read without logging in; undefined when the module or the token
 * cannot be reached (the probe says why).
 */
export function pkcs11PinState(uri: string, env: Env = process.env): TokenPinState | undefined {
  try {
    const parsed = parsePkcs11Uri(uri);
    const modulePath = modulePathOf(parsed, env);
    const { module } = openModule(modulePath);
    return pinStateOf(module.C_GetTokenInfo(findSlot(module, parsed, modulePath)).flags);
  } catch {
    return undefined;
  }
}

/**
 * Proves that the key of `uri` can sign now and is the key `publicKey` says: signs a random digest in the token
 * (opening the key again when its token went away and came back) and verifies the signature with `publicKey`
 * (the option's configured public key; by default the one the token holds). For a readiness probe.
 * @throws KeyError SG_ERR_PKCS11_* saying what is missing; SG_ERR_PKCS11_KEY when the key and `publicKey` differ
 */
export async function probePkcs11Key(uri: string, publicKey?: PublicKeyInfo, env: Env = process.env): Promise<void> {
  const parsed = parsePkcs11Uri(uri);
  const data = randomBytes(32);
  const { signature, entry } = await signDigestInfoAsync(parsed, digestInfoOf([data], 'sha256'), env);
  const expected = publicKey ?? entry.publicKey;
  if (!verify('sha256', data, toPublicKeyObject(expected), signature)) {
    const error = new KeyError('SG_ERR_PKCS11_KEY', `the key with ${describeKey(parsed)} in ${entry.where} is not the configured public key's (a ${entry.publicKey.bitLength}-bit key; its signature does not verify with the ${expected.bitLength}-bit public key configured): every file it signed would fail. Give publicKey the file of this key (what serve init --pkcs11 writes), or correct the URI.`);
    emit({ kind: 'failed', uri: showUri(uri), code: error.code, message: error.message });
    throw error;
  }
}
