// Strong-name keys held in a PKCS#11 token (an HSM, a smart card, SoftHSM): the key is named by an RFC 7512
// `pkcs11:` URI, its public key blob is read from the module, and the RSA operation happens in the module while
// the digest is computed here (CKM_RSA_PKCS over the DigestInfo, which gives the same bytes as an in-process
// PKCS#1 v1.5 signature with the same key). The PIN comes from a file or an environment variable, never from the
// URI, and no message ever holds it.
//
// Unlike the rest of this layer, this module touches the machine: it loads the native binding (pkcs11js, an
// optional dependency loaded only when a pkcs11: key is used) and the vendor's module, and reads the PIN file.
// Modules, sessions and keys are opened once per thread and kept (a pool thread signs with its own session).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute } from 'node:path';
import { isSea } from 'node:sea';
import { fileURLToPath } from 'node:url';
// pkcs11js is optional: where its native build fails (no C++ compiler, as on most Windows machines) npm leaves it
// out, and `npm install` (whose prepare script runs tsc) must still build signgate. Its types are then `any`.
// @ts-ignore -- not an error where pkcs11js is installed; @ts-expect-error would be one there.
import type * as Pkcs11Js from 'pkcs11js';
import { KeyError } from '../core/errors.js';
import type { ErrorCode } from '../core/error-codes.js';
import { parsePublicKeyBlob, rsaPublicKeyBlob, type HashAlgorithm, type PublicKeyInfo, type StrongNameKeyFile } from './key-blob.js';

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

/**
 * The user PIN of the URI's token: the first line of the `pin-source` file, the `env:` variable, or
 * SIGNGATE_PKCS11_PIN. Errors name where it was looked for, never what was found.
 * @throws KeyError SG_ERR_PKCS11_PIN, SG_ERR_PKCS11_URI
 */
export function readPkcs11Pin(uri: Pkcs11Uri, env: Env = process.env): string {
  const origin = pinOrigin(uri);
  if (origin.kind === 'env') {
    const pin = env[origin.name];
    if (!pin) throw pinError(`no PIN for ${showUri(uri.text)}: ${origin.name} is not set`, `Set ${origin.name} to the token's user PIN, or add pin-source=file:/path to the URI (a file only the service's user can read).`);
    return pin;
  }
  let text: string;
  try {
    text = readFileSync(origin.path, 'utf8');
  } catch (cause) {
    throw pinError(`the PIN file ${origin.path} of ${showUri(uri.text)} cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'})`, 'Write the user PIN on its first line and let the service\'s user read it (chmod 600).');
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

/** Per thread: each module loaded and initialized once (never finalized: other threads of the process use it too). */
const modules = new Map<string, Pkcs11Js.PKCS11>();

function openModule(path: string): Pkcs11Js.PKCS11 {
  const known = modules.get(path);
  if (known) return known;
  const pkcs11js = loadBinding();
  const module = new pkcs11js.PKCS11();
  try {
    module.load(path);
  } catch (cause) {
    throw pkcs11Error('SG_ERR_PKCS11_MODULE', `the PKCS#11 module ${path} cannot be loaded (${String((cause as Error).message).split('\n')[0]}). Check the path (module-path= or ${PKCS11_MODULE_ENV}) and that the module's package is installed.`);
  }
  try {
    // OS locking: the service's pool threads use the module at once, each through its own session.
    module.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (cause) {
    if (ckr(cause) !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') {
      throw pkcs11Error('SG_ERR_PKCS11_MODULE', `the PKCS#11 module ${path} failed to initialize (${ckr(cause)}). Check its configuration (SoftHSM: SOFTHSM2_CONF and its tokendir).`, cause);
    }
  }
  modules.set(path, module);
  return module;
}

/** A key found in a token, with the session that signs with it (one per thread). */
interface OpenKey {
  readonly module: Pkcs11Js.PKCS11;
  readonly session: Pkcs11Js.Handle;
  readonly key: Pkcs11Js.Handle;
  readonly publicKey: PublicKeyInfo;
  readonly where: string;
}

/** Per thread: the keys opened, by URI, and the PINs a token refused (as hashes), so that none is tried twice. */
const keys = new Map<string, OpenKey>();
const refusedPins = new Set<string>();

function describeToken(uri: Pkcs11Uri): string {
  const parts = [uri.token !== undefined ? `token "${uri.token}"` : '', uri.serial !== undefined ? `serial ${uri.serial}` : '', uri.slotId !== undefined ? `slot ${uri.slotId}` : ''].filter(Boolean);
  return parts.length ? parts.join(', ') : 'any token';
}

function describeKey(uri: Pkcs11Uri): string {
  return [uri.object !== undefined ? `label "${uri.object}"` : '', uri.id !== undefined ? `id ${Buffer.from(uri.id).toString('hex')}` : ''].filter(Boolean).join(' and ');
}

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
    throw new KeyError('SG_ERR_PKCS11_TOKEN', `no ${describeToken(uri)} in the PKCS#11 module ${modulePath} (tokens present: ${labels.length ? labels.join(', ') : 'none'}). Check the token= label (pkcs11-tool --module ${modulePath} --list-slots), or that the token is plugged in.`);
  }
  if (matches.length > 1) throw new KeyError('SG_ERR_PKCS11_TOKEN', `${matches.length} tokens match ${describeToken(uri)} in ${modulePath}. Name one by token= and serial=.`);
  return matches[0]!;
}

function login(pkcs11js: Pkcs11Module, module: Pkcs11Js.PKCS11, session: Pkcs11Js.Handle, uri: Pkcs11Uri, pin: string): void {
  const refusal = createHash('sha256').update(`${uri.modulePath ?? ''}\0${uri.token ?? ''}\0${uri.serial ?? ''}\0${pin}`).digest('hex');
  if (refusedPins.has(refusal)) {
    throw new KeyError('SG_ERR_PKCS11_PIN', `the token (${describeToken(uri)}) refused this PIN before; it is not tried again, since tokens lock after a few wrong PINs. Correct the PIN (${uri.pinSource ? `pin-source of ${showUri(uri.text)}` : PKCS11_PIN_ENV}).`);
  }
  try {
    module.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (cause) {
    const name = ckr(cause);
    if (name === 'CKR_USER_ALREADY_LOGGED_IN') return; // another session of this process logged in
    if (name === 'CKR_PIN_INCORRECT' || name === 'CKR_PIN_INVALID' || name === 'CKR_PIN_LEN_RANGE') refusedPins.add(refusal);
    const what = name === 'CKR_PIN_LOCKED' ? 'the token\'s user PIN is locked' : name === 'CKR_PIN_INCORRECT' ? 'the token refused the PIN' : `logging in to the token failed (${name})`;
    throw new KeyError('SG_ERR_PKCS11_PIN', `${what} (${describeToken(uri)}, PIN from ${uri.pinSource ? `pin-source of ${showUri(uri.text)}` : PKCS11_PIN_ENV}). ${name === 'CKR_PIN_LOCKED' ? 'Unlock it with the security officer PIN.' : 'Check the PIN; it is not shown.'}`);
  }
}

function attributeNumber(bytes: Buffer): number {
  return bytes.length === 0 ? 0 : Number(BigInt(`0x${bytes.toString('hex')}`));
}

function openKey(uri: Pkcs11Uri, env: Env): OpenKey {
  const modulePath = uri.modulePath ?? env[PKCS11_MODULE_ENV];
  if (!modulePath) throw new KeyError('SG_ERR_PKCS11_MODULE', `${showUri(uri.text)} names no module. Add module-path=/path/to/module.so to the URI (SoftHSM: /usr/lib/softhsm/libsofthsm2.so), or set ${PKCS11_MODULE_ENV}.`);
  const full = uri.modulePath ? uri : { ...uri, modulePath };
  const pin = readPkcs11Pin(full, env);
  const pkcs11js = loadBinding();
  const module = openModule(modulePath);
  let session: Pkcs11Js.Handle | undefined;
  try {
    const slot = findSlot(module, full, modulePath);
    session = module.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION);
    login(pkcs11js, module, session, full, pin);
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
    return { module, session, key, publicKey, where };
  } catch (error) {
    if (session !== undefined) {
      try {
        module.C_CloseSession(session);
      } catch {
        // the session is gone with the token
      }
    }
    if (error instanceof KeyError) throw error;
    throw pkcs11Error('SG_ERR_PKCS11_TOKEN', `the PKCS#11 module ${modulePath} failed while opening ${describeKey(full)} in ${describeToken(full)} (${ckr(error)}). Check that the token is present and the module's configuration.`, error);
  }
}

/** The key of `uri` in this thread, opened on first use (and again after the token went away). */
function cachedKey(uri: Pkcs11Uri, env: Env): OpenKey {
  const known = keys.get(uri.text);
  if (known) return known;
  const opened = openKey(uri, env);
  keys.set(uri.text, opened);
  return opened;
}

/** DER DigestInfo prefixes (RFC 8017 section 9.2, note 1): what CKM_RSA_PKCS signs before the hash. */
const DIGEST_INFO: Record<HashAlgorithm, string> = {
  sha1: '3021300906052b0e03021a05000414',
  sha256: '3031300d060960864801650304020105000420',
  sha384: '3041300d060960864801650304020205000430',
  sha512: '3051300d060960864801650304020305000440',
};

/** Errors after which the key is opened again once: the token went away, the HSM restarted, the session was closed. */
const REOPEN = new Set(['CKR_SESSION_HANDLE_INVALID', 'CKR_SESSION_CLOSED', 'CKR_DEVICE_REMOVED', 'CKR_TOKEN_NOT_PRESENT', 'CKR_USER_NOT_LOGGED_IN', 'CKR_OBJECT_HANDLE_INVALID', 'CKR_KEY_HANDLE_INVALID', 'CKR_DEVICE_ERROR']);

function signOnce(open: OpenKey, digestInfo: Buffer): Buffer {
  const pkcs11js = loadBinding();
  open.module.C_SignInit(open.session, { mechanism: pkcs11js.CKM_RSA_PKCS }, open.key);
  return open.module.C_Sign(open.session, digestInfo, Buffer.alloc(open.publicKey.bitLength / 8));
}

/** A key in a PKCS#11 token, usable wherever a key pair signs (signAssembly with the signer of pkcs11Signer()). */
export interface Pkcs11KeyPair extends StrongNameKeyFile {
  readonly kind: 'key-pair';
  readonly privateKey: undefined;
  /** The key's URI: what a thread opens the key with. Holds no PIN. */
  readonly pkcs11: string;
}

/** True for a key pair that lives in a token. */
export function isPkcs11Key(key: StrongNameKeyFile): key is Pkcs11KeyPair {
  return typeof (key as Partial<Pkcs11KeyPair>).pkcs11 === 'string';
}

/**
 * Opens the key a `pkcs11:` URI names (loading the module, finding the token, logging in with the PIN, finding the
 * private key) and returns it with its public key as the module holds it. The result can be moved to worker
 * threads: each opens the key again through its own session.
 * @throws KeyError SG_ERR_PKCS11_URI, SG_ERR_PKCS11_MODULE, SG_ERR_PKCS11_TOKEN, SG_ERR_PKCS11_PIN, SG_ERR_PKCS11_KEY
 */
export function openPkcs11Key(uri: string, env: Env = process.env): Pkcs11KeyPair {
  const parsed = parsePkcs11Uri(uri);
  return { kind: 'key-pair', publicKey: cachedKey(parsed, env).publicKey, privateKey: undefined, pkcs11: uri };
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
 * Signs a digest input with the key of `uri` in this thread: the hash is computed here, the module does the RSA
 * operation (CKM_RSA_PKCS over the DigestInfo). The signature is big-endian, as node:crypto gives it.
 * @throws KeyError SG_ERR_PKCS11_* (the key cannot be opened, or the module refuses to sign)
 */
export function signWithPkcs11(uri: string, chunks: Iterable<Uint8Array>, algorithm: HashAlgorithm, env: Env = process.env): Uint8Array {
  const parsed = parsePkcs11Uri(uri);
  const hash = createHash(algorithm);
  for (const chunk of chunks) hash.update(chunk);
  const digestInfo = Buffer.concat([Buffer.from(DIGEST_INFO[algorithm], 'hex'), hash.digest()]);
  let open = cachedKey(parsed, env);
  try {
    return Uint8Array.from(signOnce(open, digestInfo));
  } catch (error) {
    if (!REOPEN.has(ckr(error))) throw pkcs11Error('SG_ERR_PKCS11_SIGN', `the PKCS#11 module refused to sign with ${describeKey(parsed)} in ${open.where} (${ckr(error)}). The key must allow signing (CKA_SIGN) with CKM_RSA_PKCS.`, error);
  }
  // The token went away or the session ended: open the key again once.
  keys.delete(parsed.text);
  open = cachedKey(parsed, env);
  try {
    return Uint8Array.from(signOnce(open, digestInfo));
  } catch (error) {
    keys.delete(parsed.text);
    throw pkcs11Error('SG_ERR_PKCS11_SIGN', `the PKCS#11 module failed to sign with ${describeKey(parsed)} in ${open.where} (${ckr(error)}).`, error);
  }
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
 * Checks that the key of `uri` can be used now: the module answers, the token is present, the session is logged
 * in and the key is there (for a readiness probe). A key whose token went away is opened again.
 * @throws KeyError SG_ERR_PKCS11_* saying what is missing
 */
export function probePkcs11Key(uri: string, env: Env = process.env): void {
  const parsed = parsePkcs11Uri(uri);
  const open = keys.get(parsed.text);
  if (open) {
    try {
      open.module.C_GetAttributeValue(open.session, open.key, [{ type: loadBinding().CKA_KEY_TYPE }]);
      return;
    } catch {
      keys.delete(parsed.text);
    }
  }
  cachedKey(parsed, env);
}
