// A SoftHSM2 token of a script's own, for the PKCS#11 scripts (bench-pkcs11.js, restart-pkcs11.js): a configuration
// in a temporary folder (SOFTHSM2_CONF points there for this process and its children, never at the system's token
// folder), one token, one RSA key pair generated inside it by pkcs11-tool (OpenSC), the PIN in a file. Call it before
// the module is first initialized in the process: SoftHSM reads its tokens then. The folder is removed at exit.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SOFTHSM_MODULE = process.env.SIGNGATE_PKCS11_MODULE || '/usr/lib/softhsm/libsofthsm2.so';

/** Makes the token `label` with the key `<label>-key` of `bits`; returns its folder, PIN file and key URI. */
export function softHsmToken(label, bits) {
  const dir = mkdtempSync(join(tmpdir(), `signgate-${label}-pkcs11-`));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'softhsm2.conf'), `directories.tokendir = ${dir}\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = join(dir, 'softhsm2.conf');
  const pin = `1234-${label}`;
  const pinFile = join(dir, 'pin');
  writeFileSync(pinFile, `${pin}\n`, { mode: 0o600 });
  execFileSync('softhsm2-util', ['--init-token', '--free', '--label', label, '--so-pin', '87654321', '--pin', pin], { stdio: 'ignore' });
  execFileSync(
    'pkcs11-tool',
    [
      '--module',
      SOFTHSM_MODULE,
      '--token-label',
      label,
      '--login',
      '--pin',
      pin,
      '--keypairgen',
      '--key-type',
      `rsa:${bits}`,
      '--label',
      `${label}-key`,
      '--id',
      '01',
    ],
    { stdio: 'ignore' },
  );
  /** The key's URI, through `module` (SoftHSM2's by default). */
  const uri = (module = SOFTHSM_MODULE) => `pkcs11:token=${label};object=${label}-key?module-path=${module}&pin-source=file:${pinFile}`;
  return { dir, pinFile, uri };
}
