// One PKCS#11 module per service process, however many signing threads: `signgate serve` processes signing with a
// key in SoftHSM2 behind OpenSC's pkcs11-spy, which logs every call the process makes. A wrong PIN reaches the
// token once (C_Login counted in the spy's log); fresh processes signing a burst of jobs at once sign every file.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { openPkcs11Key } from '../../../src/strongname/pkcs11/signer.js';
import { addinFor } from '../../helpers/fixtures.js';
import { uploadForm } from '../../helpers/server.js';
import { cliToken, startServiceProcess, stopServiceProcess, waitJobFinished, type ServiceProcess } from '../../helpers/service-process.js';
import { createToken, generateKey, hasSoftHsm, SOFTHSM_MODULE, type TestToken } from '../../helpers/softhsm.js';

/** OpenSC's PKCS#11 module that logs every call, then passes it to the module PKCS11SPY names. */
export const PKCS11_SPY = '/usr/lib/x86_64-linux-gnu/pkcs11/pkcs11-spy.so';
const hasSpy = existsSync(PKCS11_SPY);
if (process.env.CI && !hasSpy) throw new Error(`CI is set but OpenSC's ${PKCS11_SPY} is missing; .ci/run must apt-get install opensc`);

const OPTION = 4711;

/** A service folder whose one option signs with `keyPair` (a pkcs11: URI), its public key from a file. */
function serviceConfig(keyPair: string, publicKey: Uint8Array, limits?: { keyWaitSeconds: number }): { config: string; dataDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-pkcs11-process-'));
  writeFileSync(join(dir, 'option_public.snk'), publicKey);
  const config = join(dir, 'server.json');
  writeFileSync(
    config,
    JSON.stringify({
      vendor: 'Contoso',
      ...(limits ? { limits } : {}),
      organizations: [
        { id: 'sandbox', licenses: [{ optionId: OPTION, keyPair, publicKey: 'option_public.snk' }], users: [{ id: 'ci', roles: ['User', 'Operator'] }] },
      ],
    }),
  );
  return { config, dataDir: join(dir, 'data') };
}

/** A pkcs11-spy log, removed once read: it holds the PIN as the module was given it. */
function spyLogOf(path: string): string {
  const log = readFileSync(path, 'utf8');
  rmSync(path);
  return log;
}

/** Calls of `name` in a pkcs11-spy log. */
function calls(log: string, name: string): number {
  return log.match(new RegExp(`^\\d+: ${name}$`, 'gm'))?.length ?? 0;
}

type FileState = { fileName: string; fileProcessingState: string; messages: { message: string }[] };

/** Uploads `jobs` one-file jobs at once and waits (ceiling: minutes) until every one is finished. */
async function burst(service: ServiceProcess, token: string, file: Uint8Array, jobs: number): Promise<FileState[]> {
  const headers = { authorization: `Bearer ${token}` };
  const ids = await Promise.all(
    Array.from({ length: jobs }, async () => {
      const created = await fetch(`${service.baseUrl}/assemblies`, { method: 'POST', headers, body: uploadForm([{ name: 'SampleAddin.dll', bytes: file }]) });
      expect(created.status, await created.clone().text()).toBe(201);
      return ((await created.json()) as { id: string }).id;
    }),
  );
  const files: FileState[] = [];
  for (const id of ids) files.push(...(await waitJobFinished(service.baseUrl, token, id)).assemblies);
  return files;
}

/** Starts `signgate serve` with `workers` signing threads, its PKCS#11 calls logged by the spy to `spyLog`. */
async function startSpied(config: string, dataDir: string, workers: number, spyLog: string): Promise<ServiceProcess> {
  return startServiceProcess(['--config', config, '--data-dir', dataDir, '--signing-workers', String(workers)], {
    PKCS11SPY: SOFTHSM_MODULE,
    PKCS11SPY_OUTPUT: spyLog,
  });
}

describe.skipIf(!hasSoftHsm || !hasSpy)('one PKCS#11 module per service process (SoftHSM2 behind pkcs11-spy)', () => {
  let token: TestToken;
  let publicKey: Uint8Array;

  beforeAll(() => {
    token = createToken('signgate-process');
    generateKey(token, 'option-key', '01', { bits: 1024 });
    publicKey = openPkcs11Key(token.uri('option-key')).publicKey.blob;
  });

  test('a wrong PIN reaches the token once (one C_Login) on 1, 8 and 16 signing threads, for 16 jobs at once that wait 2 s for the key, and /readyz after', async () => {
    const wrongPin = join(mkdtempSync(join(tmpdir(), 'signgate-wrong-pin-')), 'pin');
    writeFileSync(wrongPin, `wrong-${token.pin}\n`, { mode: 0o600 });
    const uri = `pkcs11:token=${token.label};object=option-key?module-path=${PKCS11_SPY}&pin-source=file:${wrongPin}`;
    const counts: Record<number, number> = {};
    for (const workers of [1, 8, 16]) {
      // The jobs wait for the key (tried again every 2 s, the refused PIN never offered again), then end Error.
      const { config, dataDir } = serviceConfig(uri, publicKey, { keyWaitSeconds: 2 });
      const accessToken = await cliToken(['--config', config, '--data-dir', dataDir]);
      const spyLog = join(dataDir, '..', 'spy.log');
      const service = await startSpied(config, dataDir, workers, spyLog);
      try {
        const files = await burst(service, accessToken, addinFor(publicKey), 16);
        expect(files).toHaveLength(16);
        for (const f of files) {
          expect(f.fileProcessingState).toBe('Error');
          expect(f.messages.map((m) => m.message).join('\n')).toMatch(/\(SG_ERR_PKCS11_PIN\)/);
        }
        const ready = await fetch(service.baseUrl.replace(/\/assembly-signing\/v1\.0$/, '/readyz'), { headers: { authorization: `Bearer ${accessToken}` } });
        const readyText = await ready.text();
        expect(ready.status, readyText).toBe(503);
        expect(JSON.parse(readyText).tokenKeys).toEqual([
          { organization: 'sandbox', optionId: OPTION, pin: 'count-low', ready: false, code: 'SG_ERR_PKCS11_PIN' },
        ]);
        const log = spyLogOf(spyLog);
        counts[workers] = calls(log, 'C_Login');
        expect(calls(log, 'C_Initialize'), `${workers} threads`).toBe(1);
        expect(service.stdout()).toMatch(/refused this PIN before; it is not tried again/);
        expect(service.stdout() + service.stderr() + readyText).not.toContain(token.pin);
      } finally {
        await stopServiceProcess(service);
      }
    }
    console.log(
      `C_Login calls with a wrong PIN, 16 jobs: ${Object.entries(counts)
        .map(([w, n]) => `${w} threads: ${n}`)
        .join(', ')}`,
    );
    expect(counts).toEqual({ 1: 1, 8: 1, 16: 1 });
  });

  test('20 fresh services, 8 threads each, signing a burst of 8 jobs at once: every file signed, one C_Initialize and one C_Login each', async () => {
    const uri = `pkcs11:token=${token.label};object=option-key?module-path=${PKCS11_SPY}&pin-source=file:${token.pinFile}`;
    const { config, dataDir } = serviceConfig(uri, publicKey);
    const accessToken = await cliToken(['--config', config, '--data-dir', dataDir]);
    const file = addinFor(publicKey);
    let signed = 0;
    for (let restart = 0; restart < 20; restart++) {
      const spyLog = join(dataDir, '..', `spy-${restart}.log`);
      const service = await startSpied(config, dataDir, 8, spyLog);
      try {
        const files = await burst(service, accessToken, file, 8);
        for (const f of files) expect(f.fileProcessingState, `restart ${restart}: ${f.messages.map((m) => m.message).join(' ')}`).toBe('Signed');
        signed += files.length;
        const log = spyLogOf(spyLog);
        expect(calls(log, 'C_Initialize'), `restart ${restart}`).toBe(1);
        expect(calls(log, 'C_Login'), `restart ${restart}`).toBe(1);
      } finally {
        await stopServiceProcess(service);
      }
    }
    expect(signed).toBe(160);
  });
});
