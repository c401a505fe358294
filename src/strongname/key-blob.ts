// CAPI key blobs: PublicKeyBlob (Assembly.PublicKey, `sn -p` output) and PRIVATEKEYBLOB key pairs (.snk)
// (strong-naming.md sections 5 and 6). Keys become node:crypto KeyObjects through JWK.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ByteCursor, peekU32, toHex } from '../binary/byte-cursor.js';
import { KeyError, type ErrorFault } from '../core/errors.js';

/** ALG_IDs used in key blob headers. */
export const AlgId = {
  RsaSign: 0x2400,
  RsaKeyExchange: 0xa400,
  Sha1: 0x8004,
  Sha256: 0x800c,
  Sha384: 0x800d,
  Sha512: 0x800e,
} as const;

export type HashAlgorithm = 'sha1' | 'sha256' | 'sha384' | 'sha512';

const HASH_BY_ALG: Record<number, HashAlgorithm> = {
  0: 'sha1',
  [AlgId.Sha1]: 'sha1',
  [AlgId.Sha256]: 'sha256',
  [AlgId.Sha384]: 'sha384',
  [AlgId.Sha512]: 'sha512',
};

/** The ECMA "neutral" key: stands for the Microsoft platform key; only Microsoft can sign with it. */
export const ECMA_KEY = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0]);

/** Microsoft's platform key, which verifiers use in place of the ECMA key (token b03f5f7f11d50a3a). */
export const MICROSOFT_PLATFORM_KEY = Buffer.from(
  '002400000480000094000000060200000024000052534131000400000100010007d1fa57c4aed9f0a32e84aa0faefd0de9e8fd6aec8f87fb03766c834c99921eb23be79ad9d5dcc1dd9ad236132102900b723cf980957fc4e177108fc607774f29e8320e92ea05ece4e821c0a5efe8f1645c4c0c93c1ab99285d622caa652c1dfad63d745d6f2de5f17e5eaf0fc4963d261c8a12436518206dc093344d5ad293',
  'hex',
);

const RSA1 = 0x31415352; // "RSA1"
const RSA2 = 0x32415352; // "RSA2"
const PUBLICKEYBLOB = 0x06;
const PRIVATEKEYBLOB = 0x07;
/** Largest RSA key accepted: 16384 bits. */
const MAX_KEY_BITS = 16384;

export interface PublicKeyInfo {
  /** The full PublicKeyBlob (12-byte header + BLOBHEADER + RSAPUBKEY + modulus). */
  readonly blob: Uint8Array;
  readonly isEcmaKey: boolean;
  readonly sigAlgId: number;
  readonly hashAlgId: number;
  /** Hash algorithm of the strong-name signature (from HashAlgID; 0 means SHA-1). */
  readonly hashAlgorithm: HashAlgorithm;
  readonly bitLength: number;
  readonly exponent: number;
  /** Modulus, big-endian. */
  readonly modulus: Uint8Array;
}

/**
 * Byte-for-byte equality of two public key blobs, header included: the one comparison of keys (an assembly's key
 * with an option's, a returned file's with the one sent, a verified signature's with the expected key).
 */
export function sameKeyBlob(a: PublicKeyInfo | Uint8Array, b: PublicKeyInfo | Uint8Array): boolean {
  const x = a instanceof Uint8Array ? a : a.blob;
  const y = b instanceof Uint8Array ? b : b.blob;
  return x.length === y.length && Buffer.compare(x, y) === 0;
}

function keyError(message: string, fault: ErrorFault = 'environment'): KeyError {
  return new KeyError('SG_ERR_KEY_BAD_BLOB', message, { fault });
}

function bigEndian(le: Uint8Array): Uint8Array {
  return Uint8Array.from(le).reverse();
}

function b64url(be: Uint8Array): string {
  let i = 0;
  while (i < be.length - 1 && be[i] === 0) i++;
  return Buffer.from(be.subarray(i)).toString('base64url');
}

function exponentBytes(e: number): Uint8Array {
  return Uint8Array.from([(e >>> 24) & 0xff, (e >>> 16) & 0xff, (e >>> 8) & 0xff, e & 0xff]);
}

/**
 * Parses a PublicKeyBlob as stored in Assembly.PublicKey or written by `sn -p`.
 * The ECMA neutral key is accepted and marked; it is not an RSA key.
 * @param fault whose fault a bad blob is: `input` for a key read from a file being checked, `environment` (the default)
 *   for a key the user or the configuration gives
 * @throws KeyError SG_ERR_KEY_BAD_BLOB
 */
export function parsePublicKeyBlob(blob: Uint8Array, fault: ErrorFault = 'environment'): PublicKeyInfo {
  if (blob.length === ECMA_KEY.length && blob.every((b, i) => b === ECMA_KEY[i])) {
    return { blob, isEcmaKey: true, sigAlgId: 0, hashAlgId: 0, hashAlgorithm: 'sha1', bitLength: 0, exponent: 0, modulus: new Uint8Array(0) };
  }
  if (blob.length < 12 + 20) throw keyError(`public key blob is ${blob.length} bytes, shorter than the 32-byte header`, fault);
  const c = new ByteCursor(blob, { structure: 'public key blob', errorCode: 'SG_ERR_KEY_BAD_BLOB' });
  const sigAlgId = c.u32();
  const hashAlgId = c.u32();
  const cbPublicKey = c.u32();
  if (cbPublicKey !== blob.length - 12)
    throw keyError(`public key blob says cbPublicKey = ${cbPublicKey}, but ${blob.length - 12} bytes follow the header`, fault);
  if (sigAlgId !== 0 && ((sigAlgId >>> 13) & 7) !== 1) throw keyError(`public key SigAlgID 0x${sigAlgId.toString(16)} is not a signature algorithm`, fault);
  const hashAlgorithm = HASH_BY_ALG[hashAlgId];
  if (!hashAlgorithm) throw keyError(`public key HashAlgID 0x${hashAlgId.toString(16)} is not SHA-1, SHA-256, SHA-384 or SHA-512`, fault);
  const rsa = parseRsaHeader(c, PUBLICKEYBLOB, RSA1, fault);
  if (cbPublicKey !== 20 + rsa.bitLength / 8) throw keyError(`public key is ${cbPublicKey - 20} bytes of modulus for a ${rsa.bitLength}-bit key`, fault);
  const modulus = bigEndian(c.bytesView(rsa.bitLength / 8));
  return { blob, isEcmaKey: false, sigAlgId, hashAlgId, hashAlgorithm, bitLength: rsa.bitLength, exponent: rsa.exponent, modulus };
}

function parseRsaHeader(
  c: ByteCursor,
  expectedType: number,
  expectedMagic: number,
  fault: ErrorFault = 'environment',
): { bitLength: number; exponent: number; aiKeyAlg: number } {
  const bType = c.u8();
  c.u8(); // bVersion
  c.u16(); // reserved
  const aiKeyAlg = c.u32();
  const magic = c.u32();
  const bitLength = c.u32();
  const exponent = c.u32();
  if (bType !== expectedType) throw keyError(`key blob type is 0x${bType.toString(16)}, expected 0x0${expectedType}`, fault);
  if (magic !== expectedMagic) throw keyError(`RSA key magic is 0x${magic.toString(16)}, expected ${expectedMagic === RSA1 ? 'RSA1' : 'RSA2'}`, fault);
  if (bitLength === 0 || bitLength % 8 !== 0 || bitLength > MAX_KEY_BITS)
    throw keyError(`RSA key length ${bitLength} bits is not a multiple of 8 up to ${MAX_KEY_BITS}`, fault);
  if (exponent === 0) throw keyError('RSA public exponent is 0', fault);
  return { bitLength, exponent, aiKeyAlg };
}

/** A node:crypto public key for a parsed (non-ECMA) public key. */
export function toPublicKeyObject(key: PublicKeyInfo): KeyObject {
  if (key.isEcmaKey) throw new KeyError('SG_ERR_KEY_ECMA', 'the ECMA neutral key is not an RSA key');
  return createPublicKey({ key: { kty: 'RSA', n: b64url(key.modulus), e: b64url(exponentBytes(key.exponent)) }, format: 'jwk' });
}

export interface StrongNameKeyFile {
  readonly kind: 'key-pair' | 'public-key';
  /** The PublicKeyBlob a compiler embeds for this key (for a key pair: derived as Roslyn does). */
  readonly publicKey: PublicKeyInfo;
  /** Present for key pairs only. Never printed or logged. */
  readonly privateKey: KeyObject | undefined;
}

/**
 * Reads a `.snk` file: a bare PRIVATEKEYBLOB (`sn -k`), a PublicKeyBlob (`sn -p`),
 * a bare PUBLICKEYBLOB, or the 16-byte ECMA key (strong-naming.md section 6.2, input sniffing).
 * @throws KeyError SG_ERR_KEY_BAD_BLOB
 */
export function parseStrongNameKeyFile(bytes: Uint8Array): StrongNameKeyFile {
  if (bytes.length === 0) throw keyError('the key file is empty');
  if (bytes[0] === PRIVATEKEYBLOB) return parseKeyPair(bytes);
  if (bytes[0] === PUBLICKEYBLOB) {
    // Bare PUBLICKEYBLOB: wrap it with the default header as compilers do.
    const blob = new Uint8Array(12 + bytes.length);
    const view = new DataView(blob.buffer);
    view.setUint32(0, AlgId.RsaSign, true);
    view.setUint32(4, AlgId.Sha1, true);
    view.setUint32(8, bytes.length, true);
    blob.set(bytes, 12);
    return { kind: 'public-key', publicKey: parsePublicKeyBlob(blob), privateKey: undefined };
  }
  if (bytes.length >= 12 && peekU32(bytes, 8) + 12 === bytes.length) {
    return { kind: 'public-key', publicKey: parsePublicKeyBlob(bytes), privateKey: undefined };
  }
  if (bytes.length === ECMA_KEY.length) return { kind: 'public-key', publicKey: parsePublicKeyBlob(bytes), privateKey: undefined };
  throw keyError(
    `not a strong-name key: ${bytes.length} bytes starting with 0x${(bytes[0] ?? 0).toString(16).padStart(2, '0')} (expected 0x07 for a key pair from 'sn -k' or a public key from 'sn -p')`,
  );
}

function parseKeyPair(bytes: Uint8Array): StrongNameKeyFile {
  const c = new ByteCursor(bytes, { structure: 'key pair blob', errorCode: 'SG_ERR_KEY_BAD_BLOB' });
  const rsa = parseRsaHeader(c, PRIVATEKEYBLOB, RSA2);
  const k = rsa.bitLength / 8;
  const half = Math.ceil(rsa.bitLength / 16);
  const expected = 20 + k + 5 * half + k;
  if (bytes.length < expected) throw keyError(`key pair blob is ${bytes.length} bytes; a ${rsa.bitLength}-bit key pair needs ${expected}`);
  const modulusLe = c.bytesView(k);
  const p = bigEndian(c.bytesView(half));
  const q = bigEndian(c.bytesView(half));
  const dp = bigEndian(c.bytesView(half));
  const dq = bigEndian(c.bytesView(half));
  const qi = bigEndian(c.bytesView(half));
  const d = bigEndian(c.bytesView(k));
  const modulus = bigEndian(modulusLe);
  const e = exponentBytes(rsa.exponent);
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey({
      key: { kty: 'RSA', n: b64url(modulus), e: b64url(e), d: b64url(d), p: b64url(p), q: b64url(q), dp: b64url(dp), dq: b64url(dq), qi: b64url(qi) },
      format: 'jwk',
    });
  } catch (cause) {
    throw new KeyError('SG_ERR_KEY_BAD_BLOB', 'the key pair blob does not hold a consistent RSA private key', { cause });
  }
  // The public key a compiler embeds for /keyfile:pair.snk (Roslyn's CreateSnPublicKeyBlob).
  const blob = new Uint8Array(12 + 20 + k);
  const view = new DataView(blob.buffer);
  view.setUint32(0, AlgId.RsaSign, true);
  view.setUint32(4, AlgId.Sha1, true);
  view.setUint32(8, 20 + k, true);
  blob.set(bytes.subarray(0, 20 + k), 12);
  blob[12] = PUBLICKEYBLOB;
  view.setUint32(16, AlgId.RsaSign, true);
  view.setUint32(20, RSA1, true);
  return { kind: 'key-pair', publicKey: parsePublicKeyBlob(blob), privateKey };
}

/**
 * The PublicKeyBlob a compiler embeds for an RSA public key (as `sn -p` writes it), from its big-endian modulus
 * and its exponent; `hash` is the strong-name signature's hash algorithm (default SHA-1).
 * @throws KeyError SG_ERR_KEY_BAD_BLOB for a modulus or exponent a CAPI blob cannot hold
 */
export function rsaPublicKeyBlob(modulus: Uint8Array, exponent: number, hash: HashAlgorithm = 'sha1'): Uint8Array {
  let start = 0;
  while (start < modulus.length - 1 && modulus[start] === 0) start++;
  const k = modulus.length - start;
  if (k * 8 > MAX_KEY_BITS || k < 64) throw keyError(`a ${k * 8}-bit RSA modulus does not make a strong-name key (512 to ${MAX_KEY_BITS} bits)`);
  if (!Number.isInteger(exponent) || exponent <= 0 || exponent > 0xffffffff) throw keyError(`the RSA exponent ${exponent} does not fit a CAPI key blob`);
  const blob = Buffer.alloc(12 + 20 + k);
  const hashAlgId = { sha1: AlgId.Sha1, sha256: AlgId.Sha256, sha384: AlgId.Sha384, sha512: AlgId.Sha512 }[hash];
  blob.writeUInt32LE(AlgId.RsaSign, 0);
  blob.writeUInt32LE(hashAlgId, 4);
  blob.writeUInt32LE(20 + k, 8);
  blob.writeUInt8(PUBLICKEYBLOB, 12);
  blob.writeUInt8(0x02, 13);
  blob.writeUInt32LE(AlgId.RsaSign, 16);
  blob.writeUInt32LE(RSA1, 20);
  blob.writeUInt32LE(k * 8, 24);
  blob.writeUInt32LE(exponent, 28);
  blob.set(littleEndianFixed(modulus.subarray(start), k), 32);
  return new Uint8Array(blob);
}

/** True when two public keys have the same RSA modulus and exponent (headers may differ). */
export function sameRsaKey(a: PublicKeyInfo, b: PublicKeyInfo): boolean {
  return !a.isEcmaKey && !b.isEcmaKey && a.exponent === b.exponent && toHex(a.modulus) === toHex(b.modulus);
}

/** Lower-case hex of a key blob (for reports; public keys only). */
export function publicKeyHex(key: PublicKeyInfo): string {
  return toHex(key.blob);
}

/** `bytes` (big-endian, as JWK gives them) little-endian in exactly `length` bytes, as CAPI blobs store integers. */
function littleEndianFixed(bytes: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const trimmed = bytes.subarray(Math.max(0, bytes.length - length));
  for (let i = 0; i < trimmed.length; i++) out[i] = trimmed[trimmed.length - 1 - i]!;
  return out;
}

/**
 * A new RSA key pair as a `.snk` file (a CAPI PRIVATEKEYBLOB, what `sn -k` writes).
 * @throws KeyError SG_ERR_KEY_BAD_BLOB for a size that is not a multiple of 8 from 1024 to 16384
 */
export function createStrongNameKeyPair(bits = 2048): Uint8Array {
  if (!Number.isInteger(bits) || bits % 8 !== 0 || bits < 1024 || bits > MAX_KEY_BITS)
    throw keyError(`a key of ${bits} bits cannot be made; use a multiple of 8 from 1024 to ${MAX_KEY_BITS}`);
  return strongNameKeyPairFromPrivateKey(generateKeyPairSync('rsa', { modulusLength: bits, publicExponent: 65537 }).privateKey);
}

/**
 * An RSA private key as a `.snk` file (a CAPI PRIVATEKEYBLOB, what `sn -k` writes), for example one exported from
 * a token for a test.
 * @throws KeyError SG_ERR_KEY_BAD_BLOB for a key that is not RSA, or of a size CAPI blobs cannot hold
 */
export function strongNameKeyPairFromPrivateKey(privateKey: KeyObject): Uint8Array {
  const jwk = privateKey.export({ format: 'jwk' });
  if (jwk.kty !== 'RSA') throw keyError(`a ${String(jwk.kty)} key cannot be a strong-name key pair; strong names are RSA`);
  const part = (name: 'n' | 'e' | 'p' | 'q' | 'dp' | 'dq' | 'qi' | 'd') => Buffer.from(jwk[name]!, 'base64url');
  const bits = part('n').length * 8;
  const exponent = part('e').readUIntBE(0, Math.min(6, part('e').length));
  if (bits % 16 !== 0 || bits > MAX_KEY_BITS || exponent > 0xffffffff)
    throw keyError(`a ${bits}-bit RSA key with exponent ${exponent} does not fit a CAPI key blob`);
  const k = bits / 8;
  const half = Math.ceil(bits / 16);
  const header = Buffer.alloc(20);
  header.writeUInt8(PRIVATEKEYBLOB, 0);
  header.writeUInt8(0x02, 1); // CUR_BLOB_VERSION
  header.writeUInt32LE(AlgId.RsaSign, 4);
  header.writeUInt32LE(RSA2, 8);
  header.writeUInt32LE(bits, 12);
  header.writeUInt32LE(exponent, 16);
  return Buffer.concat([
    header,
    littleEndianFixed(part('n'), k),
    ...(['p', 'q', 'dp', 'dq', 'qi'] as const).map((n) => littleEndianFixed(part(n), half)),
    littleEndianFixed(part('d'), k),
  ]);
}
