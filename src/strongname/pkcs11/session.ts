// Sessions with the vendor's module: loading the native binding (pkcs11js, an optional dependency loaded only when a
// pkcs11: key is used) and the module, finding the token and the key, logging in (once for the process), and the
// bounded recovery when a token goes away and comes back. One thread of the process owns the modules (see "The
// module's owner" below); the service's pool threads sign through it (signer.ts: the broker).
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { isSea } from 'node:sea';
// pkcs11js is optional: where its native build fails (no C++ compiler, as on most Windows machines) npm leaves it
// out, and `npm install` (whose prepare script runs tsc) must still build signgate. Its types are then `any`.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- @ts-expect-error would be an error where pkcs11js is installed
// @ts-ignore -- not an error where pkcs11js is installed; @ts-expect-error would be one there.
import type * as Pkcs11Js from 'pkcs11js';
import { KeyError } from '../../core/errors.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { parsePublicKeyBlob, rsaPublicKeyBlob, type PublicKeyInfo } from '../key-blob.js';
import { pinPlace, pinStateOf, readPkcs11Pin, type TokenPinState } from './pin.js';
import { describeKey, describeToken, parsePkcs11Uri, PKCS11_MODULE_ENV, showUri, type Env, type Pkcs11Uri } from './uri.js';

type Pkcs11Module = typeof Pkcs11Js;
let binding: Pkcs11Module | undefined;

/** pkcs11js, loaded on first use (an optional native dependency that a one-file executable cannot carry). */
export function loadBinding(): Pkcs11Module {
  if (binding) return binding;
  if (isSea()) {
    throw new KeyError(
      'SG_ERR_PKCS11_MODULE',
      'pkcs11: keys need the pkcs11js native binding, which the one-file executable cannot carry. Run signgate installed from npm (Node.js 20 or later) to sign with a key in a token.',
    );
  }
  try {
    binding = createRequire(import.meta.url)('pkcs11js') as Pkcs11Module;
  } catch (cause) {
    throw new KeyError(
      'SG_ERR_PKCS11_MODULE',
      `pkcs11: keys need the optional dependency pkcs11js, which could not be loaded (${(cause as Error).message.split('\n')[0]}). Install it (npm install pkcs11js; it builds a native addon, which needs a C++ compiler and Node's headers).`,
      { cause },
    );
  }
  return binding;
}

/** A PKCS#11 error's CKR_ name (pkcs11js puts it in the message). */
export function ckr(error: unknown): string {
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
// withPkcs11Broker, signer.ts). The RSA operation runs in libuv's threads (C_SignAsync), a session each, so the owner's
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
      throw pkcs11Error(
        'SG_ERR_PKCS11_MODULE',
        `the PKCS#11 module ${path} failed to initialize (${ckr(cause)}). Check its configuration (SoftHSM: SOFTHSM2_CONF and its tokendir).`,
        cause,
      );
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
    throw pkcs11Error(
      'SG_ERR_PKCS11_MODULE',
      `the PKCS#11 module ${path} cannot be loaded (${String((cause as Error).message).split('\n')[0]}). Check the path (module-path= or ${PKCS11_MODULE_ENV}) and that the module's package is installed.`,
    );
  }
  initialize(pkcs11js, module, path);
  const entry: ModuleEntry = { path, module, generation: 1, inFlight: 0 };
  modules.set(path, entry);
  return entry;
}

/** A key found in a token, with its idle sessions. */
export interface KeyEntry {
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

export function emit(event: Pkcs11Event): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // a listener's fault is not the token's
    }
  }
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
    throw new TokenMissing(
      'SG_ERR_PKCS11_TOKEN',
      `no ${describeToken(uri)} in the PKCS#11 module ${modulePath} (tokens present: ${labels.length ? labels.join(', ') : 'none'}). Check the token= label (pkcs11-tool --module ${modulePath} --list-slots), or that the token is plugged in.`,
    );
  }
  if (matches.length > 1)
    throw new KeyError('SG_ERR_PKCS11_TOKEN', `${matches.length} tokens match ${describeToken(uri)} in ${modulePath}. Name one by token= and serial=.`);
  return matches[0]!;
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
  const refusal = createHash('sha256')
    .update(`${uri.text}\0${uri.modulePath ?? ''}\0${pin}`)
    .digest('hex');
  if (refusedPins.has(refusal)) {
    throw new KeyError(
      'SG_ERR_PKCS11_PIN',
      `the token (${describeToken(uri)}) refused this PIN before; it is not tried again, since tokens lock after a few wrong PINs. Correct the PIN (${pinPlace(uri)}): a changed PIN is tried at the next signature.`,
    );
  }
  const info = module.C_GetTokenInfo(slot);
  const pinState = pinStateOf(info.flags);
  emit({ kind: 'pin-state', uri: showUri(uri.text), token: trimmed(info.label), state: pinState });
  if (pinState === 'locked') {
    throw new KeyError(
      'SG_ERR_PKCS11_PIN',
      `the token's user PIN is locked (${describeToken(uri)}); nothing is signed with it. Unlock it with the security officer PIN (pkcs11-tool --init-pin --login --login-type so).`,
    );
  }
  if (pinState === 'final-try') {
    throw new KeyError(
      'SG_ERR_PKCS11_PIN',
      `the token (${describeToken(uri)}) has one PIN try left before it locks; the service does not log in to it by itself. Check the PIN (${pinPlace(uri)}), then log in once by hand (pkcs11-tool --login --test), which resets the counter.`,
    );
  }
  try {
    module.C_Login(session, pkcs11js.CKU_USER, pin);
  } catch (cause) {
    const name = ckr(cause);
    if (name === 'CKR_USER_ALREADY_LOGGED_IN') return; // logged in meanwhile by other code of this process
    if (name === 'CKR_PIN_INCORRECT' || name === 'CKR_PIN_INVALID' || name === 'CKR_PIN_LEN_RANGE') refusedPins.add(refusal);
    const what =
      name === 'CKR_PIN_LOCKED'
        ? "the token's user PIN is locked"
        : name === 'CKR_PIN_INCORRECT'
          ? 'the token refused the PIN'
          : `logging in to the token failed (${name})`;
    throw new KeyError(
      'SG_ERR_PKCS11_PIN',
      `${what} (${describeToken(uri)}, PIN from ${pinPlace(uri)}). ${name === 'CKR_PIN_LOCKED' ? 'Unlock it with the security officer PIN.' : 'Check the PIN; it is not shown, and it is not offered again until it changes.'}`,
    );
  }
}

function attributeNumber(bytes: Buffer): number {
  return bytes.length === 0 ? 0 : Number(BigInt(`0x${bytes.toString('hex')}`));
}

function modulePathOf(uri: Pkcs11Uri, env: Env): string {
  const modulePath = uri.modulePath ?? env[PKCS11_MODULE_ENV];
  if (!modulePath)
    throw new KeyError(
      'SG_ERR_PKCS11_MODULE',
      `${showUri(uri.text)} names no module. Add module-path=/path/to/module.so to the URI (SoftHSM: /usr/lib/softhsm/libsofthsm2.so), or set ${PKCS11_MODULE_ENV}.`,
    );
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
      throw new KeyError(
        'SG_ERR_PKCS11_KEY',
        `no private key with ${describeKey(full)} in ${where}. List the keys: pkcs11-tool --module ${modulePath} --login --list-objects --type privkey.`,
      );
    }
    if (found.length > 1)
      throw new KeyError('SG_ERR_PKCS11_KEY', `more than one private key with ${describeKey(full)} in ${where}. Name one by object= and id=.`);
    const key = found[0]!;
    const [type, modulus, exponent] = module
      .C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_KEY_TYPE }, { type: pkcs11js.CKA_MODULUS }, { type: pkcs11js.CKA_PUBLIC_EXPONENT }])
      .map((a: Pkcs11Js.Attribute) => a.value as Buffer);
    if (attributeNumber(type!) !== pkcs11js.CKK_RSA)
      throw new KeyError('SG_ERR_PKCS11_KEY', `the key with ${describeKey(full)} in ${where} is not an RSA key; strong names are RSA signatures.`);
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
    throw pkcs11Error(
      'SG_ERR_PKCS11_TOKEN',
      `the PKCS#11 module ${modulePath} failed while opening ${describeKey(full)} in ${describeToken(full)} (${ckr(error)}). Check that the token is present and the module's configuration.`,
      error,
    );
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
export function withKey<T>(uri: Pkcs11Uri, env: Env, op: (entry: KeyEntry, session: Pkcs11Js.Handle) => T): T {
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
export async function withKeyAsync<T>(uri: Pkcs11Uri, env: Env, op: (entry: KeyEntry, session: Pkcs11Js.Handle) => Promise<T>): Promise<T> {
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
