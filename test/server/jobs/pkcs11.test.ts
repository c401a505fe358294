// The service signs with keys in a PKCS#11 token (SoftHSM2): in its pool threads and in its own thread, byte for
// byte as with the same key pair in a file; a token that cannot sign fails the job's files at once with a clear
// message and makes /readyz answer 503; the PIN shows nowhere.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { withoutPinAttributes } from '../../../src/server/server-config.js';
import { parseServerConfig, type ServerConfig } from '../../../src/server/server-config.js';
import { readModule } from '../../../src/strongname/well-formed.js';
import { strongNameKeyPairFromPrivateKey } from '../../../src/strongname/key-blob.js';
import { openPkcs11Key } from '../../../src/strongname/pkcs11/signer.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { hasMono, runCli, runMono, addinFor } from '../../helpers/fixtures.js';
import { api, startServer, uploadForm, waitFinished } from '../../helpers/server.js';
import { waitFor } from '../../helpers/wait.js';
import { createToken, exportKey, generateKey, hasSoftHsm, SOFTHSM_MODULE, softHsmConf, type TestToken } from '../../helpers/softhsm.js';

const OPTION = 777;

function configWith(license: { keyPair: string; publicKey?: string }, dir: string, keyWaitSeconds?: number): ServerConfig {
  return parseServerConfig(
    {
      vendor: 'Contoso',
      ...(keyWaitSeconds ? { limits: { keyWaitSeconds } } : {}),
      organizations: [{ id: 'sandbox', licenses: [{ optionId: OPTION, ...license }], users: [{ id: 'ci', roles: ['User', 'Operator'] }] }],
    },
    dir,
  );
}

/** Runs one job of `file` on a service with `config`; returns the status, the signed file and what the service logged. */
async function signJob(config: ServerConfig, file: Uint8Array, signingWorkers: number) {
  const chunks: string[] = [];
  const server = await startServer({
    config,
    build: { signingWorkers },
    logger: { level: 'trace', stream: { write: (line: string) => chunks.push(line) } } as never,
  });
  try {
    const token = server.token();
    // The user holds the role Operator too: /readyz shows it each key's state.
    const ready = await fetch(`${server.baseUrl.replace(/\/assembly-signing\/v1\.0$/, '')}/readyz`, { headers: { authorization: `Bearer ${token}` } });
    const readyText = await ready.text();
    const created = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm([{ name: 'SampleAddin.dll', bytes: file }]) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const started = Date.now();
    const status = await waitFinished(server, token, id);
    const seconds = (Date.now() - started) / 1000;
    const zip = await readZip(new Uint8Array(await (await api(server, `/assemblies/${id}`, token)).arrayBuffer()));
    const entries = new Map(zip.map((e) => [e.name, e.bytes]));
    const record: string[] = [];
    await server.app.signgate.store.signatures.exportTo((lines) => void record.push(lines));
    return {
      record: record.join(''),
      status,
      seconds,
      ready: { status: ready.status, text: readyText },
      signed: entries.get('SampleAddin.dll')!,
      log: entries.get('signing-log.txt')!,
      serverLog: () => chunks.join(''),
    };
  } finally {
    await server.close();
  }
}

describe.skipIf(!hasSoftHsm)('the service signs with keys in a PKCS#11 token', () => {
  let token: TestToken;
  let pinToken: TestToken;
  let awayToken: TestToken;
  let mendToken: TestToken;
  let dir: string;

  beforeAll(() => {
    // Every token before the module is first initialized in this process (SoftHSM reads its tokens then).
    token = createToken('signgate-service');
    generateKey(token, 'option-key', '01', { bits: 1024 }); // not extractable: every test but one
    generateKey(token, 'exported-key', '02', { bits: 1024, extractable: true }); // only for the byte-for-byte comparison
    pinToken = createToken('signgate-wrong-pin'); // never logged in to with its PIN: a wrong PIN is seen
    generateKey(pinToken, 'option-key', '01', { bits: 1024 });
    awayToken = createToken('signgate-away'); // its folder is moved away and back
    generateKey(awayToken, 'option-key', '01', { bits: 1024 });
    mendToken = createToken('signgate-mend-pin'); // logged in to by the service only once its PIN file is mended
    generateKey(mendToken, 'option-key', '01', { bits: 1024 });
    dir = mkdtempSync(join(tmpdir(), 'signgate-pkcs11-service-'));
  });

  test('a job signed through SoftHSM2 in the pool threads equals, byte for byte, the job signed with the key pair exported; sn -vf and verify accept it', async () => {
    const uri = token.uri('exported-key');
    const inToken = openPkcs11Key(uri);
    writeFileSync(join(dir, 'exported.snk'), strongNameKeyPairFromPrivateKey(exportKey(token, 'exported-key')), { mode: 0o600 });
    writeFileSync(join(dir, `${OPTION}_public.snk`), inToken.publicKey.blob);
    const input = addinFor(inToken.publicKey.blob);
    const viaToken = await signJob(configWith({ keyPair: uri }, dir), input, 2);
    expect(viaToken.status.assemblies[0]!.fileProcessingState, JSON.stringify(viaToken.status)).toBe('Signed');
    expect(viaToken.ready.status, viaToken.ready.text).toBe(200);
    const viaFile = await signJob(configWith({ keyPair: 'exported.snk' }, dir), input, 0);
    expect(viaFile.status.assemblies[0]!.fileProcessingState).toBe('Signed');
    expect(Buffer.from(viaToken.signed).equals(Buffer.from(viaFile.signed))).toBe(true);
    expect(verifyStrongName(readModule(viaToken.signed), { expectedKey: inToken.publicKey }).valid).toBe(true);
    const path = join(dir, 'SampleAddin.dll');
    writeFileSync(path, viaToken.signed);
    const verified = runCli(['verify', path, '--key', join(dir, `${OPTION}_public.snk`)]);
    expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    if (hasMono) expect(runMono('sn', ['-q', '-vf', path]).status).toBe(0);
  });

  test("in the service's own thread too, with the public key from a file (the token first asked when it signs)", async () => {
    const uri = token.uri('option-key');
    const key = openPkcs11Key(uri);
    writeFileSync(join(dir, 'option_public.snk'), key.publicKey.blob);
    for (const workers of [0, 2]) {
      const job = await signJob(configWith({ keyPair: uri, publicKey: 'option_public.snk' }, dir), addinFor(key.publicKey.blob), workers);
      expect(job.status.assemblies[0]!.fileProcessingState, `${workers} workers`).toBe('Signed');
      expect(job.ready.status).toBe(200);
      expect(verifyStrongName(readModule(job.signed), { expectedKey: key.publicKey }).valid).toBe(true);
      // The signature record names the key by its URI, without the PIN's source.
      const entry = JSON.parse(job.record.trim().split('\n').at(-1)!);
      expect(entry.keyLocation).toBe(withoutPinAttributes(uri));
      expect(uri).toMatch(/pin-source=/);
      expect(job.record).not.toMatch(/pin-(source|value)/);
      expect(job.record).not.toContain(token.pin);
    }
  });

  test('a module that cannot be loaded, a wrong PIN: /readyz answers 503, the job waits limits.keyWaitSeconds, then the file fails with a clear message, the PIN shows nowhere', async () => {
    const key = openPkcs11Key(token.uri('option-key'));
    writeFileSync(join(dir, 'option_public.snk'), key.publicKey.blob);
    const wrongPin = join(dir, 'wrong.pin');
    writeFileSync(wrongPin, `not-${pinToken.pin}\n`);
    const cases = [
      {
        uri: `pkcs11:token=${token.label};object=option-key?module-path=/usr/lib/softhsm/missing-module.so&pin-source=file:${token.pinFile}`,
        code: 'SG_ERR_PKCS11_MODULE',
        secret: token.pin,
      },
      {
        uri: `pkcs11:token=${pinToken.label};object=option-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${wrongPin}`,
        code: 'SG_ERR_PKCS11_PIN',
        secret: pinToken.pin,
      },
    ];
    for (const c of cases) {
      for (const workers of [0, 2]) {
        const job = await signJob(configWith({ keyPair: c.uri, publicKey: 'option_public.snk' }, dir, 3), addinFor(key.publicKey.blob), workers);
        const file = job.status.assemblies[0]!;
        expect(file.fileProcessingState, `${c.code}, ${workers} workers`).toBe('Error');
        expect(file.messages.map((m) => m.message).join('\n')).toMatch(
          new RegExp(
            `signing key of option ${OPTION} \\(in a PKCS#11 token\\) is not available after 3 s of waiting \\(limits.keyWaitSeconds\\): .*\\(${c.code}\\)`,
          ),
        );
        expect(job.seconds).toBeGreaterThanOrEqual(3); // it waited for the key
        expect(job.seconds).toBeLessThan(15); // and then ended, without hanging
        expect(job.serverLog()).toContain('job waits for its signing key');
        expect(job.ready.status).toBe(503);
        expect(job.serverLog()).toContain(c.code === 'SG_ERR_PKCS11_MODULE' ? 'cannot be loaded' : 'refused');
        for (const text of [job.ready.text, job.serverLog(), JSON.stringify(job.status), Buffer.from(job.log).toString('utf8')]) {
          expect(text).not.toContain(c.secret);
          expect(text).not.toContain(token.pin);
        }
      }
    }
  });

  test("a publicKey that is not the token key's: /readyz answers 503 naming the option, a log line names it, the file fails saying so", async () => {
    const key = openPkcs11Key(token.uri('option-key'));
    const other = openPkcs11Key(token.uri('exported-key'));
    writeFileSync(join(dir, 'other_public.snk'), other.publicKey.blob);
    for (const workers of [0, 2]) {
      // The upload is delay-signed for the configured (wrong) public key: the check passes it, the signature cannot verify.
      const job = await signJob(configWith({ keyPair: token.uri('option-key'), publicKey: 'other_public.snk' }, dir), addinFor(other.publicKey.blob), workers);
      expect(job.ready.status, job.ready.text).toBe(503);
      expect(JSON.parse(job.ready.text).tokenKeys).toEqual([{ organization: 'sandbox', optionId: OPTION, pin: 'ok', ready: false, code: 'SG_ERR_PKCS11_KEY' }]);
      expect(job.serverLog()).toMatch(
        new RegExp(`not ready: option ${OPTION} of sandbox: the key with label .{1,2}option-key.{1,2} in token .*is not the configured public key's`),
      );
      const file = job.status.assemblies[0]!;
      expect(file.fileProcessingState).toBe('Error');
      expect(file.messages.map((m) => m.message).join('\n')).toMatch(
        new RegExp(`signature made with option ${OPTION}'s key in a PKCS#11 token does not verify with the option's public key`),
      );
      expect(job.serverLog()).not.toContain(token.pin);
    }
    expect(key.publicKey.bitLength).toBe(other.publicKey.bitLength);
  });

  test('a token whose folder is moved away and back is found again without a restart: /readyz 503, then 200, and a job signs', async () => {
    const uri = awayToken.uri('option-key');
    const key = openPkcs11Key(uri);
    writeFileSync(join(dir, 'away_public.snk'), key.publicKey.blob);
    const tokens = join(dirname(softHsmConf()), 'tokens');
    const folder = readdirSync(tokens).find((d) => readFileSync(join(tokens, d, 'token.object')).includes(Buffer.from(awayToken.label.padEnd(32))))!;
    const chunks: string[] = [];
    const server = await startServer({
      config: configWith({ keyPair: uri, publicKey: 'away_public.snk' }, dir),
      build: { signingWorkers: 2 },
      logger: { level: 'info', stream: { write: (line: string) => chunks.push(line) } } as never,
    });
    const operator = server.token();
    const readyz = async () => {
      const r = await fetch(`${server.baseUrl.replace(/\/assembly-signing\/v1\.0$/, '')}/readyz`, { headers: { authorization: `Bearer ${operator}` } });
      return { status: r.status, text: await r.text() };
    };
    try {
      expect((await readyz()).status).toBe(200);
      renameSync(join(tokens, folder), join(dir, 'token-away'));
      const away = await readyz();
      expect(away.status, away.text).toBe(503);
      expect(chunks.join('')).toContain(`not ready: option ${OPTION} of sandbox`);
      renameSync(join(dir, 'token-away'), join(tokens, folder));
      const back = await readyz();
      expect(back.status, `${back.text}\n${chunks.join('')}`).toBe(200);
      expect(JSON.parse(back.text).tokenKeys).toEqual([{ organization: 'sandbox', optionId: OPTION, pin: 'ok', ready: true }]);
      expect(chunks.join('')).toContain('PKCS#11 module initialized again');
      const accessToken = server.token();
      const created = await api(server, '/assemblies', accessToken, {
        method: 'POST',
        body: uploadForm([{ name: 'SampleAddin.dll', bytes: addinFor(key.publicKey.blob) }]),
      });
      const status = await waitFinished(server, accessToken, ((await created.json()) as { id: string }).id);
      expect(status.assemblies[0]!.fileProcessingState, JSON.stringify(status)).toBe('Signed');
    } finally {
      await server.close();
    }
  });

  test('a wrong PIN: the job waits (its status says why and until when) and is signed once the PIN file is mended, without a restart', async () => {
    // The public key read in a process of its own: a login here would log the service's module in too.
    const blob = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { openPkcs11Key } from ${JSON.stringify(new URL('../../../dist/reader-api.js', import.meta.url).href)}; process.stdout.write(Buffer.from(openPkcs11Key(process.argv[1]).publicKey.blob).toString('hex'))`,
        mendToken.uri('option-key'),
      ],
      { env: { ...process.env, SOFTHSM2_CONF: softHsmConf() } },
    ).toString();
    writeFileSync(join(dir, 'mend_public.snk'), Buffer.from(blob, 'hex'));
    const pinFile = join(dir, 'mend.pin');
    writeFileSync(pinFile, `not-${mendToken.pin}\n`, { mode: 0o600 });
    const uri = `pkcs11:token=${mendToken.label};object=option-key?module-path=${SOFTHSM_MODULE}&pin-source=file:${pinFile}`;
    const chunks: string[] = [];
    const server = await startServer({
      config: configWith({ keyPair: uri, publicKey: 'mend_public.snk' }, dir, 600),
      build: { signingWorkers: 2 },
      logger: { level: 'info', stream: { write: (line: string) => chunks.push(line) } } as never,
    });
    try {
      const accessToken = server.token();
      const created = await api(server, '/assemblies', accessToken, {
        method: 'POST',
        body: uploadForm([{ name: 'SampleAddin.dll', bytes: addinFor(Buffer.from(blob, 'hex')) }]),
      });
      const { id } = (await created.json()) as { id: string };
      const waiting = await waitFor('the job to say it waits for its signing key', async () => {
        const status = (await (await api(server, `/assemblies/${id}/status`, accessToken)).json()) as {
          processingFinished: boolean;
          assemblies: { fileProcessingState: string; messages: { message: string }[] }[];
        };
        const text = status.assemblies[0]!.messages.map((m) => m.message).join(' ');
        return text.includes('Waiting for the signing key') ? { done: true, value: { status, text } } : { done: false, seen: status };
      });
      expect(waiting.status.processingFinished).toBe(false);
      expect(waiting.status.assemblies[0]!.fileProcessingState).toBe('Pending');
      expect(waiting.text).toContain(`option ${OPTION}`);
      expect(waiting.text).toContain('(SG_ERR_PKCS11_PIN)');
      expect(waiting.text).toMatch(/its files end with an error at \d{4}-\d\d-\d\dT.* \(limits\.keyWaitSeconds\)/);
      // A few rounds of waiting: still not failed.
      await new Promise((r) => setTimeout(r, 5000));
      const still = (await (await api(server, `/assemblies/${id}/status`, accessToken)).json()) as { processingFinished: boolean };
      expect(still.processingFinished).toBe(false);
      writeFileSync(pinFile, `${mendToken.pin}\n`, { mode: 0o600 });
      const status = await waitFinished(server, accessToken, id);
      expect(status.assemblies[0]!.fileProcessingState, JSON.stringify(status)).toBe('Signed');
      const log = chunks.join('');
      expect(log).toContain('job waits for its signing key');
      expect(log).not.toContain('job processing failed');
      for (const text of [log, JSON.stringify(waiting.status)]) expect(text).not.toContain(mendToken.pin);
    } finally {
      await server.close();
    }
  });
});
