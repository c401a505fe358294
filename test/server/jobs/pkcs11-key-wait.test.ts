// A worker whose signing key cannot be used never fails a job for good: on PostgreSQL with several signing workers,
// a worker with a wrong PIN leaves the jobs to the worker that can sign (20 jobs: 20 signed, none Error); with the
// token away from every worker for 30 s, the jobs wait (their status says so) and are signed once it is back.
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPkcs11Key } from '../../../src/strongname/pkcs11/signer.js';
import { freshDatabase, requireDatabase } from '../../helpers/database.js';
import { addinFor } from '../../helpers/fixtures.js';
import { uploadForm } from '../../helpers/server.js';
import { cliToken, startServiceProcess, stopServiceProcess, waitJobFinished, type ServiceProcess } from '../../helpers/service-process.js';
import { createToken, generateKey, hasSoftHsm, SOFTHSM_MODULE, softHsmConf, type TestToken } from '../../helpers/softhsm.js';

const OPTION = 5150;
if (process.env.CI && !hasSoftHsm) throw new Error('CI is set but SoftHSM2 (softhsm2, opensc) is missing; .ci/run must install it');

describe.skipIf(!hasSoftHsm || !requireDatabase())('signing workers on PostgreSQL wait for a key they cannot use', () => {
  let token: TestToken;
  let publicKey: Uint8Array;
  let dir: string;
  const processes: ServiceProcess[] = [];

  /** A server.json whose one option signs with the token's key, its PIN read from `pinFile`. */
  function config(name: string, pinFile: string): string {
    const path = join(dir, `${name}.json`);
    const uri = `pkcs11:token=${token.label};object=option-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${pinFile}`;
    writeFileSync(
      path,
      JSON.stringify({
        vendor: 'Contoso',
        limits: { keyWaitSeconds: 300 },
        organizations: [
          { id: 'sandbox', licenses: [{ optionId: OPTION, keyPair: uri, publicKey: 'option_public.snk' }], users: [{ id: 'ci', roles: ['User', 'Operator'] }] },
        ],
      }),
    );
    return path;
  }

  beforeAll(() => {
    token = createToken('signgate-key-wait');
    generateKey(token, 'option-key', '01', { bits: 1024 });
    publicKey = openPkcs11Key(token.uri('option-key')).publicKey.blob;
    dir = mkdtempSync(join(tmpdir(), 'signgate-key-wait-'));
    writeFileSync(join(dir, 'option_public.snk'), publicKey);
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => stopServiceProcess(p)));
  });

  async function deployment(workerPins: string[]) {
    const database = await freshDatabase();
    const dataDir = join(dir, `data-${Date.now()}`);
    const env = { SIGNGATE_DATABASE_URL: database };
    const api = await startServiceProcess(['--config', config('api', token.pinFile), '--data-dir', dataDir, '--role', 'api', '--lease-timeout', '5'], env);
    processes.push(api);
    const workers = await Promise.all(
      workerPins.map((pin, i) =>
        startServiceProcess(['--config', config(`worker-${i}`, pin), '--data-dir', dataDir, '--role', 'worker', '--lease-timeout', '5'], env),
      ),
    );
    processes.push(...workers);
    const accessToken = await cliToken(['--config', config('api', token.pinFile), '--data-dir', dataDir, '--database', database]);
    const upload = async () => {
      const created = await fetch(`${api.baseUrl}/assemblies`, {
        method: 'POST',
        headers: { authorization: `Bearer ${accessToken}` },
        body: uploadForm([{ name: 'SampleAddin.dll', bytes: addinFor(publicKey) }]),
      });
      expect(created.status, await created.clone().text()).toBe(201);
      return ((await created.json()) as { id: string }).id;
    };
    return { api, workers, accessToken, upload };
  }

  test('two workers, one with a wrong PIN: 20 jobs, 20 signed, none Error', async () => {
    const wrong = join(dir, 'wrong.pin');
    writeFileSync(wrong, `wrong-${token.pin}\n`, { mode: 0o600 });
    const d = await deployment([wrong, token.pinFile]);
    const ids = await Promise.all(Array.from({ length: 20 }, () => d.upload()));
    const states = [];
    for (const id of ids) states.push(...(await waitJobFinished(d.api.baseUrl, d.accessToken, id)).assemblies.map((a) => a.fileProcessingState));
    console.log(
      `20 jobs, one worker with a wrong PIN: ${states.filter((s) => s === 'Signed').length} signed, ${states.filter((s) => s === 'Error').length} Error`,
    );
    expect(states).toEqual(Array(20).fill('Signed'));
    const log = d.workers.map((w) => w.stdout() + w.stderr()).join('');
    expect(log).not.toContain('job processing failed');
    expect(log).not.toContain(token.pin);
  });

  test('the token away from every worker for 30 s during 10 jobs: they wait, saying why, and are all signed once it is back', async () => {
    const d = await deployment([token.pinFile, token.pinFile]);
    // Signed once, so that both workers hold a session on the token when it goes away.
    expect((await waitJobFinished(d.api.baseUrl, d.accessToken, await d.upload())).assemblies[0]!.fileProcessingState).toBe('Signed');
    const tokens = join(dirname(softHsmConf()), 'tokens');
    const folder = readdirSync(tokens).find((f) => readFileSync(join(tokens, f, 'token.object')).includes(Buffer.from(token.label.padEnd(32))))!;
    renameSync(join(tokens, folder), join(dir, 'token-away'));
    let back = false;
    try {
      const ids = await Promise.all(Array.from({ length: 10 }, () => d.upload()));
      await new Promise((r) => setTimeout(r, 30_000));
      const during = await Promise.all(
        ids.map(
          async (id) =>
            (await (await fetch(`${d.api.baseUrl}/assemblies/${id}/status`, { headers: { authorization: `Bearer ${d.accessToken}` } })).json()) as {
              processingFinished: boolean;
              assemblies: { messages: { message: string }[] }[];
            },
        ),
      );
      expect(during.filter((s) => s.processingFinished)).toEqual([]);
      expect(during.filter((s) => s.assemblies[0]!.messages.some((m) => m.message.startsWith('Waiting for the signing key'))).length).toBeGreaterThan(0);
      // The API node's /readyz names the option no worker can sign now, and how many jobs wait for it, to the operator.
      const readyz = d.api.baseUrl.replace(/\/assembly-signing\/v1\.0$/, '/readyz');
      const ready = (await (await fetch(readyz, { headers: { authorization: `Bearer ${d.accessToken}` } })).json()) as {
        waitingForKeys?: { option: string; jobs: number }[];
      };
      expect(ready.waitingForKeys?.map((w) => w.option)).toEqual([`sandbox/${OPTION}`]);
      expect(ready.waitingForKeys![0]!.jobs).toBeGreaterThan(0);
      // Without the token: how many jobs wait, and no organization or option.
      const anyone = await (await fetch(readyz)).text();
      expect(anyone).not.toMatch(/sandbox|waitingForKeys/);
      expect((JSON.parse(anyone) as { jobsWaitingForKeys: number }).jobsWaitingForKeys).toBeGreaterThan(0);
      renameSync(join(dir, 'token-away'), join(tokens, folder));
      back = true;
      const states = [];
      for (const id of ids) states.push((await waitJobFinished(d.api.baseUrl, d.accessToken, id)).assemblies[0]!.fileProcessingState);
      console.log(`10 jobs, the token away 30 s: ${states.filter((s) => s === 'Signed').length} signed`);
      expect(states).toEqual(Array(10).fill('Signed'));
    } finally {
      if (!back) renameSync(join(dir, 'token-away'), join(tokens, folder));
    }
  });
});
