// Signing with a key in a PKCS#11 token: the digest is computed here and the RSA operation happens in the module
// (CKM_RSA_PKCS over the DigestInfo, which gives the same bytes as an in-process PKCS#1 v1.5 signature with the same
// key), in the thread that owns the module (session.ts) or, from the service's pool threads, through the broker.
import { createHash, randomBytes, verify } from 'node:crypto';
import type { MessagePort } from 'node:worker_threads';
// pkcs11js is optional: where its native build fails (no C++ compiler, as on most Windows machines) npm leaves it
// out, and `npm install` (whose prepare script runs tsc) must still build signgate. Its types are then `any`.
// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- @ts-expect-error would be an error where pkcs11js is installed
// @ts-ignore -- not an error where pkcs11js is installed; @ts-expect-error would be one there.
import type * as Pkcs11Js from 'pkcs11js';
import { isSignGateError, KeyError } from '../../core/errors.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { toPublicKeyObject, type HashAlgorithm, type PublicKeyInfo, type StrongNameKeyFile } from '../key-blob.js';
import { ckr, emit, loadBinding, withKey, withKeyAsync, type KeyEntry } from './session.js';
import { describeKey, parsePkcs11Uri, showUri, type Env, type Pkcs11Uri } from './uri.js';

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
        const failed = isSignGateError(error)
          ? { code: error.code, message: error.message }
          : { code: 'SG_ERR_PKCS11_SIGN', message: `signing through the PKCS#11 module failed (${ckr(error)})` };
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
    const error = new KeyError(
      'SG_ERR_PKCS11_KEY',
      `the key with ${describeKey(parsed)} in ${entry.where} is not the configured public key's (a ${entry.publicKey.bitLength}-bit key; its signature does not verify with the ${expected.bitLength}-bit public key configured): every file it signed would fail. Give publicKey the file of this key (what serve init --pkcs11 writes), or correct the URI.`,
    );
    emit({ kind: 'failed', uri: showUri(uri), code: error.code, message: error.message });
    throw error;
  }
}
