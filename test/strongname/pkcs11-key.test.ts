// Keys in a PKCS#11 token (SoftHSM2): the URI, the PIN, the public key from the module, and signatures made in the
// module that Mono's sn -vf and our verifier accept, byte for byte equal to the same key pair signing in process.
import { createRequire } from 'node:module';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parsePublicKeyBlob, parseStrongNameKeyFile, strongNameKeyPairFromPrivateKey } from '../../src/strongname/key-blob.js';
import type * as Pkcs11Js from 'pkcs11js';
import { parsePkcs11Uri, showUri } from '../../src/strongname/pkcs11/uri.js';
import { readPkcs11Pin } from '../../src/strongname/pkcs11/pin.js';
import { onPkcs11Event, type Pkcs11Event } from '../../src/strongname/pkcs11/session.js';
import { isPkcs11Key, openPkcs11Key, probePkcs11Key, signWithPkcs11 } from '../../src/strongname/pkcs11/signer.js';
import { signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { identityPublicKey, strongNameAssembly } from '../../src/strongname/strong-name-writer.js';
import { fixture, hasMono, runMono } from '../helpers/fixtures.js';
import { createToken, exportKey, generateKey, hasSoftHsm, SOFTHSM_MODULE, type TestToken } from '../helpers/softhsm.js';

describe('pkcs11: URIs (RFC 7512)', () => {
  test('token, object, id, slot, module-path and pin-source are read; values are percent-decoded', () => {
    const uri = parsePkcs11Uri('pkcs11:token=My%20Token;object=sn%2Dkey;id=%01%a0;slot-id=7;serial=ABC?module-path=/usr/lib/x.so&pin-source=file:/etc/pin');
    expect(uri).toMatchObject({ token: 'My Token', object: 'sn-key', slotId: 7, serial: 'ABC', modulePath: '/usr/lib/x.so', pinSource: 'file:/etc/pin' });
    expect(Buffer.from(uri.id!).toString('hex')).toBe('01a0');
    expect(parsePkcs11Uri('pkcs11:object=k;type=private').object).toBe('k');
  });

  test.each([
    ['file:key.snk', /starts with pkcs11:/],
    ['pkcs11:token=t', /names no key.*object=/],
    ['pkcs11:object=k;colour=red', /"colour" is not a path attribute.*Known: token/],
    ['pkcs11:object=k;object=j', /object is given twice/],
    ['pkcs11:object=k;type=cert', /type=cert names no private key/],
    ['pkcs11:object=k%zz', /% that is not followed by two hex digits/],
    ['pkcs11:object=k?module-name=softhsm2', /module-name is not looked up.*module-path=/],
    ['pkcs11:object=k?module-path=lib.so', /not an absolute path/],
    ['pkcs11:object=k;slot-id=x', /slot-id=x is not a decimal number/],
  ])('%s is refused: %s', (text, message) => {
    expect(() => parsePkcs11Uri(text)).toThrow(message);
    try {
      parsePkcs11Uri(text);
    } catch (error) {
      expect((error as { code: string }).code).toBe('SG_ERR_PKCS11_URI');
    }
  });

  test('a PIN in the URI (pin-value) is refused and never shown', () => {
    const text = 'pkcs11:token=t;object=k?pin-value=s3cr3t-PIN-4711&module-path=/x.so';
    let message = '';
    try {
      parsePkcs11Uri(text);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/carries the PIN \(pin-value\).*pin-source=file:/);
    expect(message).not.toContain('s3cr3t');
    expect(showUri(text)).toBe('pkcs11:token=t;object=k?pin-value=(not shown)&module-path=/x.so');
  });

  test('the PIN comes from the pin-source file (first line), an env: variable or SIGNGATE_PKCS11_PIN; errors never hold it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pin-'));
    writeFileSync(join(dir, 'pin'), '\uFEFF1234-pin\nsecond line\n');
    expect(readPkcs11Pin(parsePkcs11Uri(`pkcs11:object=k?pin-source=file:${dir}/pin`))).toBe('1234-pin');
    expect(readPkcs11Pin(parsePkcs11Uri(`pkcs11:object=k?pin-source=${dir}/pin`))).toBe('1234-pin');
    expect(readPkcs11Pin(parsePkcs11Uri('pkcs11:object=k?pin-source=env:MY_PIN'), { MY_PIN: '99' })).toBe('99');
    expect(readPkcs11Pin(parsePkcs11Uri('pkcs11:object=k'), { SIGNGATE_PKCS11_PIN: '77' })).toBe('77');
    expect(() => readPkcs11Pin(parsePkcs11Uri('pkcs11:object=k'), {})).toThrow(/SIGNGATE_PKCS11_PIN is not set/);
    expect(() => readPkcs11Pin(parsePkcs11Uri(`pkcs11:object=k?pin-source=file:${dir}/none`))).toThrow(/PIN file .*none .* cannot be read \(ENOENT\)/);
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => readPkcs11Pin(parsePkcs11Uri(`pkcs11:object=k?pin-source=file:${dir}/empty`))).toThrow(/is empty/);
    expect(() => readPkcs11Pin(parsePkcs11Uri('pkcs11:object=k?pin-source=pin.txt'))).toThrow(/neither file:<absolute path> nor env:/);
  });
});

describe.skipIf(!hasSoftHsm)('pkcs11: keys in SoftHSM2', () => {
  let token: TestToken;
  /** A token this process has not logged in to: a session of a logged-in token takes any PIN (CKR_USER_ALREADY_LOGGED_IN). */
  let locked: TestToken;
  /** Another such token, for the PIN file that is corrected. */
  let corrected: TestToken;
  /** A delay-signed assembly carrying the public key of `key`, with `hash`. */
  const delaySigned = (key: ReturnType<typeof parseStrongNameKeyFile>, hash: 'sha1' | 'sha256' = 'sha1') =>
    strongNameAssembly(fixture('assemblies/unsigned.dll'), { key, delaySign: true, hash }).bytes;

  beforeAll(() => {
    token = createToken('signgate-unit');
    generateKey(token, 'sn-key', '01'); // not extractable: the key used everywhere else
    generateKey(token, 'export-key', '02', { extractable: true }); // only for the byte-for-byte comparison
    // Made before the module is first initialized in this process: SoftHSM reads its tokens then.
    locked = createToken('signgate-pin');
    generateKey(locked, 'sn-key', '01');
    corrected = createToken('signgate-pin-fixed');
    generateKey(corrected, 'sn-key', '01');
  });

  /** The events of the module's owner while `run` runs. */
  async function eventsOf(run: () => unknown): Promise<Pkcs11Event[]> {
    const events: Pkcs11Event[] = [];
    const stop = onPkcs11Event((event) => events.push(event));
    try {
      await run();
    } finally {
      stop();
    }
    return events;
  }

  test('the public key blob comes from the module; the key is found by label or by id', async () => {
    const key = openPkcs11Key(token.uri('sn-key'));
    expect(isPkcs11Key(key)).toBe(true);
    expect(key.privateKey).toBeUndefined();
    expect(key.publicKey.bitLength).toBe(2048);
    expect(key.publicKey.exponent).toBe(65537);
    expect(key.publicKey.hashAlgorithm).toBe('sha1');
    const byId = openPkcs11Key(`pkcs11:token=${token.label};id=%01?module-path=${SOFTHSM_MODULE}&pin-source=file:${token.pinFile}`);
    expect(Buffer.from(byId.publicKey.blob)).toEqual(Buffer.from(key.publicKey.blob));
    await expect(probePkcs11Key(token.uri('sn-key'))).resolves.toBeUndefined();
  });

  test('a file signed through the module equals, byte for byte, the file signed in process with the same key pair exported', () => {
    const inToken = openPkcs11Key(token.uri('export-key'));
    const exported = parseStrongNameKeyFile(strongNameKeyPairFromPrivateKey(exportKey(token, 'export-key')));
    expect(Buffer.from(exported.publicKey.blob)).toEqual(Buffer.from(inToken.publicKey.blob));
    for (const hash of ['sha1', 'sha256'] as const) {
      const input = delaySigned(inToken, hash);
      const viaModule = signAssembly(readModule(input), inToken);
      const inProcess = signAssembly(readModule(input), exported);
      expect(Buffer.from(viaModule).equals(Buffer.from(inProcess)), hash).toBe(true);
      const check = verifyStrongName(readModule(viaModule), { expectedKey: parsePublicKeyBlob(readModule(input).assembly!.publicKey) });
      expect(check.valid, check.reason ?? '').toBe(true);
      expect(check.status.hashAlgorithm).toBe(hash);
    }
  });

  // Mono's sn verifies SHA-1 strong names only (docs/fix.md); SHA-256 is checked above, against the in-process key.
  test.skipIf(!hasMono)('Mono sn -vf accepts a file signed through the module', () => {
    const key = openPkcs11Key(token.uri('sn-key'));
    const dir = mkdtempSync(join(tmpdir(), 'pkcs11-sn-'));
    for (const hash of ['sha1'] as const) {
      const signed = signAssembly(readModule(delaySigned(key, hash)), key);
      const path = join(dir, `signed-${hash}.dll`);
      writeFileSync(path, signed);
      const r = runMono('sn', ['-q', '-vf', path]);
      expect(r.status, `${hash}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  test("fix strong-names through the module (the identity key's SHA-256 blob) and the result verifies", () => {
    const key = openPkcs11Key(token.uri('sn-key'));
    const r = strongNameAssembly(fixture('assemblies/unsigned.dll'), { key, hash: 'sha256' });
    expect(r.outcome).toBe('strong-named');
    const check = verifyStrongName(readModule(r.bytes));
    expect(check.valid, check.reason ?? '').toBe(true);
    expect(Buffer.from(readModule(r.bytes).assembly!.publicKey)).toEqual(Buffer.from(identityPublicKey(key, 'sha256')));
  });

  test('errors say what was not found and what to do; the PIN never shows', () => {
    const errorOf = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return {
          code: (error as { code: string }).code,
          text: `${(error as Error).message} ${String((error as Error).stack)} ${JSON.stringify(error)} ${String((error as Error).cause ?? '')}`,
        };
      }
      throw new Error('no error');
    };
    const wrongPinFile = join(tmpdir(), 'wrong.pin');
    writeFileSync(wrongPinFile, `wrong-${locked.pin}\n`);
    const cases = [
      { uri: token.uri('no-such-key'), code: 'SG_ERR_PKCS11_KEY', message: /no private key with label "no-such-key" in token "signgate-unit".*--list-objects/ },
      {
        uri: `pkcs11:token=nope;object=sn-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${token.pinFile}`,
        code: 'SG_ERR_PKCS11_TOKEN',
        message: /no token "nope" in the PKCS#11 module .*tokens present: .*"signgate-unit"/,
      },
      {
        uri: `pkcs11:token=${token.label};object=sn-key?module-path=/usr/lib/none/libnothing.so&pin-source=file:${token.pinFile}`,
        code: 'SG_ERR_PKCS11_MODULE',
        message: /module \/usr\/lib\/none\/libnothing.so cannot be loaded/,
      },
      {
        uri: `pkcs11:token=${token.label};object=sn-key?pin-source=file:${token.pinFile}`,
        code: 'SG_ERR_PKCS11_MODULE',
        message: /names no module.*SIGNGATE_PKCS11_MODULE/,
      },
      {
        uri: `pkcs11:token=${locked.label};object=sn-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${wrongPinFile}`,
        code: 'SG_ERR_PKCS11_PIN',
        message: /the token refused the PIN .*it is not shown/,
      },
      {
        uri: `pkcs11:token=${locked.label};object=sn-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${wrongPinFile}`,
        code: 'SG_ERR_PKCS11_PIN',
        message: /refused this PIN before; it is not tried again/,
      },
    ];
    for (const c of cases) {
      const e = errorOf(() => openPkcs11Key(c.uri, {}));
      expect(e.code, c.uri).toBe(c.code);
      expect(e.text, c.uri).toMatch(c.message);
      expect(e.text).not.toContain(token.pin);
      expect(e.text).not.toContain(locked.pin);
    }
    // The right PIN afterwards is tried (only the refused one is remembered).
    expect(openPkcs11Key(locked.uri('sn-key')).publicKey.bitLength).toBe(2048);
  });

  test('a refused PIN is not offered again until the PIN file holds another; the PIN counters are read before each login', async () => {
    const pinFile = join(mkdtempSync(join(tmpdir(), 'pin-fixed-')), 'pin');
    writeFileSync(pinFile, `wrong-${corrected.pin}\n`);
    const uri = `pkcs11:token=${corrected.label};object=sn-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${pinFile}`;
    const events = await eventsOf(() => {
      expect(() => openPkcs11Key(uri)).toThrow(/the token refused the PIN/);
      expect(() => openPkcs11Key(uri)).toThrow(/refused this PIN before; it is not tried again/);
      writeFileSync(pinFile, `${corrected.pin}\n`);
      expect(openPkcs11Key(uri).publicKey.bitLength).toBe(2048);
    });
    // Read before the first login (none counted yet) and before the second (SoftHSM2 counts the wrong one);
    // the refused PIN was not offered in between.
    expect(events.filter((e) => e.kind === 'pin-state').map((e) => (e as { state: string }).state)).toEqual(['ok', 'count-low']);
    expect(JSON.stringify(events)).not.toContain(corrected.pin);
  });

  test("a session closed behind the key's back is tried again with a fresh session (and a new login), and the file signs", async () => {
    const uri = token.uri('sn-key');
    const key = openPkcs11Key(uri);
    const input = readModule(delaySigned(key));
    signAssembly(input, key);
    // Other code of this process closes every session with the token (as an HSM does when it restarts).
    const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Js;
    const other = new pkcs11js.PKCS11();
    other.load(SOFTHSM_MODULE);
    try {
      other.C_Initialize();
    } catch (error) {
      expect(String(error)).toMatch(/CKR_CRYPTOKI_ALREADY_INITIALIZED/);
    }
    const slot = other.C_GetSlotList(true).find((s) => other.C_GetTokenInfo(s).label.trim() === token.label)!;
    other.C_CloseAllSessions(slot);
    let signed: Uint8Array | undefined;
    const events = await eventsOf(() => (signed = signAssembly(input, key)));
    expect(verifyStrongName(readModule(signed!), { expectedKey: key.publicKey }).valid).toBe(true);
    expect(events.find((e) => e.kind === 'retry')).toMatchObject({ kind: 'retry', code: 'CKR_SESSION_HANDLE_INVALID', attempt: 1 });
    expect(events.some((e) => e.kind === 'failed')).toBe(false);
  });

  test('the probe signs a digest and verifies it with the public key given: another key is refused (SG_ERR_PKCS11_KEY)', async () => {
    const uri = token.uri('sn-key');
    await expect(probePkcs11Key(uri, openPkcs11Key(uri).publicKey)).resolves.toBeUndefined();
    const other = openPkcs11Key(token.uri('export-key')).publicKey;
    await expect(probePkcs11Key(uri, other)).rejects.toMatchObject({
      code: 'SG_ERR_PKCS11_KEY',
      message: expect.stringMatching(/is not the configured public key's .*does not verify/),
    });
    expect(signWithPkcs11(uri, [Buffer.from('x')], 'sha256')).toHaveLength(256);
  });
});
