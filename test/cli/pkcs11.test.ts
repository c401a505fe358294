// The toolbox with a key in a PKCS#11 token (SoftHSM2): serve init --pkcs11, fix --key pkcs11:…, resign --key
// pkcs11:…; errors say what is missing and never print the PIN.
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { openPkcs11Key } from '../../src/strongname/pkcs11/signer.js';
import { fixturePath, hasMono, runCli, runMono } from '../helpers/fixtures.js';
import { createToken, generateKey, hasSoftHsm, SOFTHSM_MODULE, type TestToken } from '../helpers/softhsm.js';

/** One token with one (non-extractable) key; the CLI runs in child processes, which find it through SOFTHSM2_CONF. */
function cliToken(): { token: TestToken; uri: string; dir: string } {
  const token = createToken('signgate-cli');
  generateKey(token, 'cli-key', '01');
  return { token, uri: token.uri('cli-key'), dir: mkdtempSync(join(tmpdir(), 'signgate-pkcs11-cli-')) };
}

describe.skipIf(!hasSoftHsm)('the CLI with a key in a PKCS#11 token', () => {
  const { token, uri, dir } = hasSoftHsm ? cliToken() : ({} as ReturnType<typeof cliToken>);

  test('serve init --pkcs11 writes server.json naming the key and <optionId>_public.snk from the token', () => {
    const r = runCli(['serve', 'init', '--dir', join(dir, 'service'), '--option-id', '4242', '--pkcs11', uri]);
    expect(r.status, r.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'service', 'server.json'), 'utf8'));
    expect(config.organizations[0].licenses).toEqual([{ optionId: 4242, keyPair: uri, publicKey: '4242_public.snk' }]);
    expect(Buffer.from(readFileSync(join(dir, 'service', '4242_public.snk')))).toEqual(Buffer.from(openPkcs11Key(uri).publicKey.blob));
    expect(r.stderr).toMatch(/signs with the 2048-bit key in the PKCS#11 token/);
    expect(r.stdout + r.stderr).not.toContain(token.pin);
  });

  test('fix --key pkcs11:… strong-names through the token; resign --key pkcs11:… signs what fix delay-signed; verify and sn -vf accept both', () => {
    writeFileSync(join(dir, 'public.snk'), openPkcs11Key(uri).publicKey.blob);
    copyFileSync(fixturePath('assemblies/unsigned.dll'), join(dir, 'Lib.dll'));
    const fixed = runCli(['fix', join(dir, 'Lib.dll'), '--key', uri, '--out', join(dir, 'fixed')]);
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(0);
    const delayed = runCli(['fix', join(dir, 'Lib.dll'), '--delay-sign', join(dir, 'public.snk'), '--out', join(dir, 'delayed')]);
    expect(delayed.status, delayed.stdout + delayed.stderr).toBe(0);
    const resigned = runCli(['resign', join(dir, 'delayed', 'Lib.dll'), '--key', uri, '-o', join(dir, 'Lib-resigned.dll')]);
    expect(resigned.status, resigned.stdout + resigned.stderr).toBe(0);
    expect(resigned.stdout).toMatch(/signed with key token [0-9a-f]{16} \(2048-bit sha1\)/);
    for (const file of [join(dir, 'fixed', 'Lib.dll'), join(dir, 'Lib-resigned.dll')]) {
      const v = runCli(['verify', file, '--key', join(dir, 'public.snk')]);
      expect(v.status, v.stdout + v.stderr).toBe(0);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', file]).status).toBe(0);
    }
    for (const r of [fixed, delayed, resigned]) expect(r.stdout + r.stderr).not.toContain(token.pin);
  });

  test('a wrong PIN, a missing PIN, a missing module: exit 3 with what to do, and the PIN never printed', () => {
    const bare = `pkcs11:token=${token.label};object=cli-key?module-path=${SOFTHSM_MODULE}`;
    const cases = [
      { args: ['--key', bare], env: { SIGNGATE_PKCS11_PIN: `x${token.pin}x` }, message: /SG_ERR_PKCS11_PIN|refused the PIN/ },
      { args: ['--key', bare], env: { SIGNGATE_PKCS11_PIN: '' }, message: /SIGNGATE_PKCS11_PIN is not set/ },
      {
        args: ['--key', `pkcs11:token=${token.label};object=cli-key?pin-source=file:${token.pinFile}`],
        env: { SIGNGATE_PKCS11_MODULE: '' },
        message: /names no module/,
      },
      { args: ['--key', `pkcs11:token=${token.label};object=cli-key?pin-value=${token.pin}`], env: {}, message: /carries the PIN \(pin-value\)/ },
    ];
    for (const c of cases) {
      const r = runCli(['resign', fixturePath('assemblies/delay-2048.dll'), ...c.args, '-o', join(dir, 'never.dll')], { env: c.env });
      expect(r.status, r.stderr).toBe(3);
      expect(r.stderr).toMatch(c.message);
      expect(r.stdout + r.stderr).not.toContain(token.pin);
    }
  });
});
