// SoftHSM2 tokens for the PKCS#11 tests: a configuration of this test process's own (SOFTHSM2_CONF points at a
// tokendir in the run's temporary folder, never the system's), tokens made with softhsm2-util, and RSA key pairs
// generated inside a token by pkcs11-tool (OpenSC), never imported from a file. Outside CI the tests skip where
// SoftHSM2, OpenSC or the pkcs11js binding is missing; in CI they must be there (.ci/run installs them).
import { createDecipheriv, createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type * as Pkcs11Js from 'pkcs11js';
import { readPkcs11PinFilesWith } from '../../src/strongname/pkcs11/pin.js';
import { has } from './fixtures.js';

// The tokens' URIs name pin-source files: this process reads them as the command line and the service do.
readPkcs11PinFilesWith((path) => readFileSync(path, 'utf8'));

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so';

function bindingLoads(): boolean {
  try {
    createRequire(import.meta.url)('pkcs11js');
    return true;
  } catch {
    return false;
  }
}

/** SoftHSM2's module, softhsm2-util, pkcs11-tool and the pkcs11js binding are there. */
export const hasSoftHsm = existsSync(SOFTHSM_MODULE) && has('softhsm2-util') && has('pkcs11-tool') && bindingLoads();
if (process.env.CI && !hasSoftHsm) {
  throw new Error(
    'CI is set but SoftHSM2, OpenSC (pkcs11-tool) or the pkcs11js binding is missing; .ci/run must apt-get install softhsm2 opensc, and npm ci must build pkcs11js',
  );
}

let conf: string | undefined;

/** This process's SoftHSM2 configuration (made on first use; SOFTHSM2_CONF points at it for this process and its children). */
export function softHsmConf(): string {
  if (conf) return conf;
  const dir = mkdtempSync(join(tmpdir(), 'softhsm-'));
  mkdirSync(join(dir, 'tokens'));
  conf = join(dir, 'softhsm2.conf');
  writeFileSync(conf, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  return conf;
}

export interface TestToken {
  readonly label: string;
  readonly pin: string;
  /** A file holding the PIN on its first line. */
  readonly pinFile: string;
  /** The URI of a key of this token, with module-path and pin-source=file:. */
  uri(keyLabel: string): string;
}

/** Makes a token of its own; its PIN is random (a test can look for it in every output). */
export function createToken(label: string): TestToken {
  softHsmConf();
  const pin = `pin-${randomBytes(9).toString('base64url')}`;
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', `so-${pin}`, '--pin', pin], { stdio: 'pipe' });
  const pinFile = join(tmpdir(), `${label}.pin`);
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  return {
    label,
    pin,
    pinFile,
    uri: (keyLabel) =>
      `pkcs11:token=${encodeURIComponent(label)};object=${encodeURIComponent(keyLabel)}?module-path=${SOFTHSM_MODULE}&pin-source=file:${pinFile}`,
  };
}

/**
 * Generates an RSA key pair inside the token (pkcs11-tool --keypairgen). Not extractable unless `extractable`,
 * which only the test that exports the key for a byte-for-byte comparison asks for.
 */
export function generateKey(token: TestToken, keyLabel: string, id: string, options: { bits?: number; extractable?: boolean } = {}): void {
  execFileSync(
    'pkcs11-tool',
    [
      '--module',
      SOFTHSM_MODULE,
      '--token-label',
      token.label,
      '--login',
      '--pin',
      token.pin,
      '--keypairgen',
      '--key-type',
      `rsa:${options.bits ?? 2048}`,
      '--label',
      keyLabel,
      '--id',
      id,
      ...(options.extractable ? ['--extractable'] : []),
    ],
    { stdio: 'pipe' },
  );
}

/**
 * The private key of an EXTRACTABLE key in the token, wrapped out of it with an AES key made for this (SoftHSM keeps
 * such keys sensitive, so they leave only wrapped), as a node:crypto key.
 */
export function exportKey(token: TestToken, keyLabel: string): ReturnType<typeof createPrivateKey> {
  const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Js;
  const p = new pkcs11js.PKCS11();
  p.load(SOFTHSM_MODULE);
  try {
    p.C_Initialize({ flags: pkcs11js.CKF_OS_LOCKING_OK });
  } catch (error) {
    if (!String((error as Error).message).includes('CKR_CRYPTOKI_ALREADY_INITIALIZED')) throw error;
  }
  const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === token.label)!;
  const session = p.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
  try {
    try {
      p.C_Login(session, pkcs11js.CKU_USER, token.pin);
    } catch (error) {
      if (!String((error as Error).message).includes('CKR_USER_ALREADY_LOGGED_IN')) throw error;
    }
    p.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
      { type: pkcs11js.CKA_LABEL, value: keyLabel },
    ]);
    const [key] = p.C_FindObjects(session, 1);
    p.C_FindObjectsFinal(session);
    const wrapping = p.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
      { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
      { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
      { type: pkcs11js.CKA_WRAP, value: true },
      { type: pkcs11js.CKA_SENSITIVE, value: false },
      { type: pkcs11js.CKA_EXTRACTABLE, value: true },
      { type: pkcs11js.CKA_TOKEN, value: false },
    ]);
    const aes = p.C_GetAttributeValue(session, wrapping, [{ type: pkcs11js.CKA_VALUE }])[0]!.value as Buffer;
    const wrapped = p.C_WrapKey(session, { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD }, wrapping, key!, Buffer.alloc(4096));
    const decipher = createDecipheriv('id-aes256-wrap-pad', aes, Buffer.from('a65959a6', 'hex'));
    const pkcs8 = Buffer.concat([decipher.update(wrapped), decipher.final()]);
    return createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  } finally {
    p.C_CloseSession(session);
  }
}
