import { createSign } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { ECMA_KEY, MICROSOFT_PLATFORM_KEY, parsePublicKeyBlob, parseStrongNameKeyFile, sameRsaKey } from '../../src/strongname/key-blob.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture } from '../helpers/fixtures.js';

// The TEST ONLY key of strong-naming.md section 9 and its recorded vectors.
const SPEC_KEY_HEX =
  '070200000024000052534132000400000100010035621a07990988fcec4809b5d08753ae50460fa645e54734afa12b51' +
  '3810eaac0c17f81d3f4b76c435841258797b60bb4ed18eecec652ec59f43bea27fb76163fcfd7d27f7ec2911edc7a793' +
  '1a3d639d888913a2dfadccc2471d5e1c0f9cf4403a8629479add7e3a2c218c41ad23cdc5e27b0b89ffa2c505f8a897c0' +
  'f413038acb80786dced0da4a69e8a011c45af6b37af7e07471967a26481e86c59db44f834f0d1d61de359bf91e50fe84' +
  'd714c7a38848b6e170529d949fae72b56f3105b2ff486b691da8ba66e4235fe957ce2cb76285da430da700bb23f070d3' +
  '540c65f402c262a84b3966c50996d87196adbf54b4a3cce7e645229b512e1f970b7277c6f969eda3290a60b23dcbd208' +
  '5d63bf636261a5b5b7ebf8b5f57dde7f993a49f5710bbcd24a8280ab9fad6877089f98ddd604cb88b373606bd8f6abd7' +
  '5f6a5e8d9d231d6184e2d87125267c930bd5f7f8a1388e18f0f080f2eee94378695236dbe1afc75d0e16ea914231da06' +
  '20ea46b548ff2096730c4a654e3ca8b2050d036fdc1c0248fdf60f7f9341460d53436cca557607956468d9d5ecc33b88' +
  '1b96fbda0d528c0cfce353157a42a4c804d006e5865866a54b5d0b904c927de769bf067c152658341488e8f9eda12a05' +
  '964e2fd31d13873981dff4cff9663dd84cd16e86bc533655e84ec94f17074b70f7f3bb038a853f5a85acd1a849e344aa' +
  'befd6e0d34c2fa136cdabee396f0cadee2d4be2d860c2da136bafb865029e7043d2cbb34481aa490c3dc12c6e78f7df2' +
  'dddbdc234f8e890d9acd66cf45225c4902ef4827';
const specKey = Buffer.from(SPEC_KEY_HEX, 'hex');

describe('key pair from the spec (section 9)', () => {
  const pair = parseStrongNameKeyFile(specKey);

  test('is a 1024-bit key pair whose derived public key is the sn -p blob', () => {
    expect(specKey.length).toBe(596);
    expect(pair.kind).toBe('key-pair');
    expect(pair.publicKey.bitLength).toBe(1024);
    expect(pair.publicKey.exponent).toBe(65537);
    const blob = Buffer.from(pair.publicKey.blob);
    expect(blob.length).toBe(160);
    expect(blob.subarray(0, 32).toString('hex')).toBe('0024000004800000940000000602000000240000525341310004000001000100');
    expect(blob.subarray(32).equals(specKey.subarray(20, 148))).toBe(true);
    expect(Buffer.from(pair.publicKey.modulus.subarray(0, 8)).toString('hex')).toBe('8a0313f4c097a8f8');
  });

  test('token is 88c5942ff539ecef', () => {
    expect(publicKeyToken(pair.publicKey.blob)).toBe('88c5942ff539ecef');
  });

  test('signs "signgate" to the recorded SHA-1 and SHA-256 signatures (stored reversed)', () => {
    const sha1 = Buffer.from(createSign('sha1').update('signgate').sign(pair.privateKey!)).reverse().toString('hex');
    expect(sha1).toBe(
      'c5f6fa2b1bfaf2b731199434411107fa4e36c1891c315d6c76374e16ba3a4dfbecec916b23fa7f9ae696cb32a7ced97d' +
        'eb1ede2643ac159884a809389e6550f420c89497de0428ad4607604309a103306e6c98a87c0aaedd8f28ccfd3b04bde8' +
        '476eb5e12cba07b36d6544a6b9f76d0fbd75e36545063a99dc4e93dc94f72579',
    );
    const sha256 = Buffer.from(createSign('sha256').update('signgate').sign(pair.privateKey!)).reverse().toString('hex');
    expect(sha256.startsWith('15312bef3d392ca2c400ccb5')).toBe(true);
    expect(sha256.endsWith('93d2895e878efd23')).toBe(true);
  });
});

describe('key files made by sn', () => {
  test.each([
    ['test-keys/12345_keypair.snk', 'key-pair', 1024],
    ['test-keys/12345_public.snk', 'public-key', 1024],
    ['test-keys/67890_keypair.snk', 'key-pair', 2048],
    ['test-keys/67890_public.snk', 'public-key', 2048],
  ] as const)('%s is a %s of %i bits', (name, kind, bits) => {
    const key = parseStrongNameKeyFile(fixture(name));
    expect(key.kind).toBe(kind);
    expect(key.publicKey.bitLength).toBe(bits);
    expect(key.privateKey === undefined).toBe(kind === 'public-key');
  });

  test('the key pair derives exactly the public key file sn -p wrote', () => {
    const pair = parseStrongNameKeyFile(fixture('test-keys/67890_keypair.snk'));
    const pub = parseStrongNameKeyFile(fixture('test-keys/67890_public.snk'));
    expect(Buffer.from(pair.publicKey.blob).equals(Buffer.from(pub.publicKey.blob))).toBe(true);
    expect(sameRsaKey(pair.publicKey, pub.publicKey)).toBe(true);
  });

  test('a SHA-256 header on the same RSA key is the same RSA key with another hash algorithm', () => {
    const pub = Buffer.from(fixture('test-keys/12345_public.snk'));
    const sha256 = Buffer.from(pub);
    sha256.writeUInt32LE(0x800c, 4);
    const a = parsePublicKeyBlob(pub);
    const b = parsePublicKeyBlob(sha256);
    expect(b.hashAlgorithm).toBe('sha256');
    expect(sameRsaKey(a, b)).toBe(true);
    expect(publicKeyToken(sha256)).not.toBe(publicKeyToken(pub));
  });
});

describe('special keys and bad blobs', () => {
  test('ECMA and platform key tokens', () => {
    expect(publicKeyToken(ECMA_KEY)).toBe('b77a5c561934e089');
    expect(publicKeyToken(MICROSOFT_PLATFORM_KEY)).toBe('b03f5f7f11d50a3a');
    expect(parsePublicKeyBlob(ECMA_KEY).isEcmaKey).toBe(true);
  });

  test.each([
    ['empty', []],
    ['short', [0x06, 0x02]],
    [
      'cbPublicKey lies',
      [...Buffer.from(fixture('test-keys/12345_public.snk')).subarray(0, 8), 0xff, 0, 0, 0, ...Buffer.from(fixture('test-keys/12345_public.snk')).subarray(12)],
    ],
    ['truncated key pair', [...Buffer.from(fixture('test-keys/12345_keypair.snk')).subarray(0, 300)]],
  ])('%s is refused with SG_ERR_KEY_BAD_BLOB', (_name, bytes) => {
    expect(() => parseStrongNameKeyFile(Uint8Array.from(bytes))).toThrowError(expect.objectContaining({ code: 'SG_ERR_KEY_BAD_BLOB' }));
  });

  test('error messages never contain private key material', () => {
    const pair = Buffer.from(fixture('test-keys/12345_keypair.snk'));
    const broken = Buffer.from(pair);
    broken.writeUInt32LE(4096, 12); // bitlen that the blob is too short for
    try {
      parseStrongNameKeyFile(broken);
      expect.unreachable();
    } catch (error) {
      const text = `${(error as Error).message} ${JSON.stringify(error)}`;
      expect(text).not.toContain(pair.subarray(148, 164).toString('hex'));
    }
  });
});
