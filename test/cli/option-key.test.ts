// The option's key, known end to end: `serve init` writes the public key file, the service reports each option's
// key token (GET /licenses) and hands out its public key file (GET /licenses/{optionId}/public-key), `licenses`
// prints and fetches them, and the online `check` and `sign` stop a key file of the right name and the wrong key
// before anything is uploaded. The CLI runs against the reference service on 127.0.0.1 (and against a loopback
// service that answers like the vendor's, without the extension).
import { copyFileSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { fixture, fixturePath, hasMono, runCliAsync, runMono, clientWorkdir } from '../helpers/fixtures.js';
import { api, sandboxConfig, uploadForm, waitFinished } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const workdir = () => clientWorkdir('signgate-keyid-', shared.token());

const RIGHT = fixturePath('test-keys/12345_public.snk');
const RIGHT_TOKEN = '5d004f218731cd20';
const OTHER_TOKEN = publicKeyToken(fixture('test-keys/other_public.snk'));
/** Delay-signed with the key no organization holds (the key of other_public.snk). */
const WRONG_KEY_ADDIN = fixturePath('findings/wrong-key');

const shared = sharedServer();

/** A key file of the right name (option 12345) holding the wrong key. */
function wrongKeyFile(dir: string): string {
  const path = join(dir, '12345_public.snk');
  copyFileSync(fixturePath('test-keys/other_public.snk'), path);
  return path;
}

const jobCount = async () => ((await (await api(shared.server(), '/assemblies', shared.token())).json()) as unknown[]).length;

describe('the service reports each option key', () => {
  test('GET /licenses carries each option key token; GET /licenses/{optionId}/public-key the public key file', async () => {
    const entries = (await (await api(shared.server(), '/licenses', shared.token())).json()) as { optionId: number; publicKeyToken: string }[];
    expect(entries).toEqual([
      { optionId: 12345, publicKeyToken: RIGHT_TOKEN },
      { optionId: 67890, publicKeyToken: publicKeyToken(fixture('test-keys/67890_public.snk')) },
    ]);
    const r = await api(shared.server(), '/licenses/12345/public-key', shared.token());
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/octet-stream');
    expect(r.headers.get('content-disposition')).toBe('attachment; filename="12345_public.snk"');
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(Buffer.compare(bytes, Buffer.from(fixture('test-keys/12345_public.snk')))).toBe(0);
    expect(publicKeyToken(bytes)).toBe(RIGHT_TOKEN);
  });

  test('an option the organization does not hold (another organization holds 55555): 404 problem; no token: 401', async () => {
    for (const id of ['55555', '99999']) {
      const r = await api(shared.server(), `/licenses/${id}/public-key`, shared.token());
      expect(r.status).toBe(404);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect((await r.json()).detail).toBe(`The organization sandbox holds no license option ${id}; it holds 12345, 67890.`);
    }
    expect((await api(shared.server(), '/licenses/abc/public-key', shared.token())).status).toBe(400);
    expect((await api(shared.server(), '/licenses/12345/public-key', undefined)).status).toBe(401);
  });

  test("after a key rotation: the option's current key, not one of its previousKeys", async () => {
    shared.server().setConfig(
      sandboxConfig((c) => {
        c.organizations[0]!.licenses[0] = {
          optionId: 12345,
          keyPair: '../test-keys/other_keypair.snk',
          previousKeys: [{ keyPair: '../test-keys/12345_keypair.snk' }],
        };
      }),
    );
    try {
      const entries = (await (await api(shared.server(), '/licenses', shared.token())).json()) as { optionId: number; publicKeyToken: string }[];
      expect(entries[0]).toEqual({ optionId: 12345, publicKeyToken: OTHER_TOKEN });
      const bytes = Buffer.from(await (await api(shared.server(), '/licenses/12345/public-key', shared.token())).arrayBuffer());
      expect(Buffer.compare(bytes, Buffer.from(fixture('test-keys/other_public.snk')))).toBe(0);
    } finally {
      shared.server().setConfig(sandboxConfig());
    }
  });

  test("the service's own SG205 says where the right public key file is", async () => {
    const created = await (
      await api(shared.server(), '/assemblies', shared.token(), {
        method: 'POST',
        body: uploadForm([{ name: 'FindingAddin.dll', bytes: fixture('findings/wrong-key/FindingAddin.dll') }]),
      })
    ).json();
    const status = await waitFinished(shared.server(), shared.token(), created.id);
    const messages = status.assemblies[0]!.messages.map((m) => m.message).join('\n');
    expect(messages).toContain('SG205 wrong-key');
    expect(messages).toContain('`signgate licenses --public-key 12345 --out 12345_public.snk`');
    expect(messages).toContain('GET /licenses/{optionId}/public-key');
    await api(shared.server(), `/assemblies/${created.id}`, shared.token(), { method: 'DELETE' });
  });
});

describe('signgate licenses', () => {
  test('prints each option key token (text and JSON); the access token is never printed', async () => {
    const w = workdir();
    const text = await runCliAsync(['licenses', '--base-url', shared.server().baseUrl], { env: w.env });
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(`option 12345: key file 12345_public.snk, key token ${RIGHT_TOKEN}`);
    const json = await runCliAsync(['licenses', '--base-url', shared.server().baseUrl, '--json'], { env: w.env });
    expect(JSON.parse(json.stdout)[0]).toEqual({ optionId: 12345, publicKeyToken: RIGHT_TOKEN });
    expect(text.stdout + text.stderr + json.stdout + json.stderr).not.toContain(shared.token());
  });

  test('--public-key writes the option public key file over a wrong one; sn reads its token', async () => {
    const w = workdir();
    const out = wrongKeyFile(w.dir);
    const r = await runCliAsync(['licenses', '--base-url', shared.server().baseUrl, '--public-key', '12345', '--out', out], { env: w.env });
    expect(r.status, r.stderr).toBe(0);
    expect(Buffer.compare(readFileSync(out), Buffer.from(fixture('test-keys/12345_public.snk')))).toBe(0);
    expect(r.stdout).toContain(`the public key of option 12345 (1024-bit, key token ${RIGHT_TOKEN})`);
    expect(r.stdout + r.stderr).not.toContain(shared.token());
    // No temporary file is left beside it.
    expect(readdirSync(w.dir).filter((n) => n.includes('signgate-tmp'))).toEqual([]);
    if (hasMono) expect(runMono('sn', ['-tp', out]).stdout).toContain(`Public Key Token: ${RIGHT_TOKEN}`);
  });

  test('an option the organization does not hold: a clear error, nothing written', async () => {
    const w = workdir();
    const out = join(w.dir, '55555_public.snk');
    const r = await runCliAsync(['licenses', '--base-url', shared.server().baseUrl, '--public-key', '55555', '--out', out], { env: w.env });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('the organization holds no license option 55555 (it holds 12345, 67890); nothing was written');
    expect(existsSync(out)).toBe(false);
    const stray = await runCliAsync(['licenses', '--base-url', shared.server().baseUrl, '--out', out], { env: w.env });
    expect(stray.status).toBe(2);
    expect(stray.stderr).toContain('--out goes with --public-key <optionId>');
  });
});

describe('the online check compares the key files with the service', () => {
  test('a key file of the right name and the wrong key: SG205 with both tokens and the command, exit 1, nothing uploaded', async () => {
    const w = workdir();
    const key = wrongKeyFile(w.dir);
    // Offline the wrong key file and the add-in built with it agree: the check passes.
    const offline = await runCliAsync(['check', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', key], { env: w.env });
    expect(offline.status, offline.stdout).toBe(0);
    const before = await jobCount();
    const r = await runCliAsync(['check', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', key, '--base-url', shared.server().baseUrl, '--format', 'json'], {
      env: w.env,
    });
    expect(r.status, r.stderr).toBe(1);
    const report = JSON.parse(r.stdout);
    const onKeyFile = report.uploadSet.findings.find((f: { ruleId: string }) => f.ruleId === 'SG205');
    expect(onKeyFile.message).toContain(`has key token ${OTHER_TOKEN}, but the signing service's option 12345 has key token ${RIGHT_TOKEN}`);
    // Never over the key file given: a new file (12345_public.snk in the working directory, where there is none).
    expect(onKeyFile.hint).toContain('`signgate licenses --public-key 12345 --out 12345_public.snk`');
    expect(onKeyFile.hint).not.toContain(`--out ${key}`);
    expect(onKeyFile.file).toBe(key);
    // The add-in, delay-signed with that file, fails too.
    expect(report.files[0].findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['SG205']);
    expect(report.files[0].outcome).toBe('fail');
    expect(r.stderr).not.toContain('could not be compared');
    expect(await jobCount()).toBe(before);
  });

  test('the command the hint proposes writes a new file beside the wrong one; with it the check passes', async () => {
    const w = workdir();
    const key = wrongKeyFile(w.dir); // 12345_public.snk in the working directory, holding the wrong key
    const online = ['--base-url', shared.server().baseUrl];
    const r = await runCliAsync(['check', fixturePath('addin'), '--vendor', 'Contoso', '--key', '12345_public.snk', ...online], { cwd: w.dir, env: w.env });
    expect(r.status).toBe(1);
    const command = /`signgate (licenses --public-key 12345 --out (\S+))`/.exec(r.stdout);
    expect(command, r.stdout).not.toBeNull();
    expect(command![2]).toBe('service-key/12345_public.snk');
    const wrong = readFileSync(key);
    const fetched = await runCliAsync([...command![1]!.split(' '), ...online], { cwd: w.dir, env: w.env });
    expect(fetched.status, fetched.stderr).toBe(0);
    expect(readFileSync(key).equals(wrong)).toBe(true);
    const again = await runCliAsync(['check', fixturePath('addin'), '--vendor', 'Contoso', '--key', command![2]!, ...online], { cwd: w.dir, env: w.env });
    expect(again.status, again.stdout).toBe(0);
  });

  test('the add-in is right and the --key file is not the option key: the hint says so, never to delay-sign with the file given', async () => {
    const w = workdir();
    const pair = join(w.dir, 'your-key.snk');
    copyFileSync(fixturePath('test-keys/other_keypair.snk'), pair);
    const hints = async (extra: string[]) => {
      const args = ['check', fixturePath('addin'), '--vendor', 'Contoso', '--key', 'your-key.snk', '--format', 'json', ...extra];
      const r = await runCliAsync(args, { cwd: w.dir, env: w.env });
      expect(r.status).toBe(1);
      const files = JSON.parse(r.stdout).files as { findings: { ruleId: string; message: string; hint: string }[] }[];
      return files.flatMap((f) => f.findings).filter((f) => f.ruleId === 'SG205');
    };
    // Offline: the key file given is a key pair, which no option's public key file is.
    const offline = await hints([]);
    expect(offline.length).toBeGreaterThan(0);
    for (const f of offline) {
      expect(f.message).toContain("your-key.snk holds a key pair, not an option's public key file");
      expect(f.hint).toContain('Pass --key the public key file of your license option');
      expect(f.hint).not.toContain('<AssemblyOriginatorKeyFile>your-key.snk');
    }
    // Offline, a public key file whose name names no option: either side may be wrong, and the hint says both.
    copyFileSync(fixturePath('test-keys/other_public.snk'), join(w.dir, 'mykey.snk'));
    const named = await runCliAsync(['check', fixturePath('addin/SampleAddin.dll'), '--vendor', 'Contoso', '--key', 'mykey.snk'], { cwd: w.dir, env: w.env });
    expect(named.stdout).toContain("If mykey.snk is not your option's public key file (<optionId>_public.snk, from the vendor), pass that file");
    // Online: the assembly's key is the one the service reports for option 12345.
    const online = await hints(['--base-url', shared.server().baseUrl]);
    for (const f of online) {
      expect(f.message).toContain("the key of the signing service's option 12345");
      expect(f.hint).toContain("The assembly is delay-signed with option 12345's key; the --key file is not that option's public key.");
      expect(f.hint).toContain('`signgate licenses --public-key 12345 --out 12345_public.snk`');
      expect(f.hint).not.toContain('your-key.snk');
    }
  });

  test('sign with the wrong key file stops before the upload: the service shows no job', async () => {
    const w = workdir();
    const key = wrongKeyFile(w.dir);
    const before = await jobCount();
    const r = await runCliAsync(
      ['sign', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', key, '--base-url', shared.server().baseUrl, '--destination-path', join(w.dir, 'out')],
      { env: w.env },
    );
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain('nothing was uploaded');
    expect(r.stdout).toContain(`but the signing service's option 12345 has key token ${RIGHT_TOKEN}`);
    expect(await jobCount()).toBe(before);
    expect(existsSync(join(w.dir, 'out'))).toBe(false);
  });

  test('the right key file passes online as offline; an option the service does not list is SG601 as before', async () => {
    const w = workdir();
    const r = await runCliAsync(['check', fixturePath('addin'), '--vendor', 'Contoso', '--key', RIGHT, '--base-url', shared.server().baseUrl], { env: w.env });
    expect(r.status, r.stdout).toBe(0);
    expect(r.stderr).not.toContain('note:');
    const other = join(w.dir, '99999_public.snk');
    copyFileSync(fixturePath('test-keys/other_public.snk'), other);
    const unlisted = await runCliAsync(
      ['check', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', other, '--base-url', shared.server().baseUrl, '--format', 'json'],
      { env: w.env },
    );
    expect(unlisted.status).toBe(1);
    expect(JSON.parse(unlisted.stdout).uploadSet.findings.map((f: { ruleId: string }) => f.ruleId)).toEqual(['SG601']);
  });
});

describe('a service without the key token extension (as the vendor answers)', () => {
  const TOKEN = 'sg_test_7c1d2e3f4a5b6c7d8e9f0a1b';
  let vendor: Server;
  let baseUrl: string;
  let licenses: unknown = [{ optionId: 12345 }];
  beforeAll(async () => {
    vendor = createServer((req, res) => {
      if (req.url !== '/assembly-signing/v1.0/licenses' || req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(licenses));
    });
    await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(vendor.address() as { port: number }).port}/assembly-signing/v1.0`;
  });
  afterAll(() => new Promise<void>((resolve) => vendor.close(() => resolve())));

  const verdict = (r: { status: number | null; stdout: string }) => {
    const report = JSON.parse(r.stdout);
    return { status: r.status, findings: report.findings, files: report.files.map((f: { outcome: string }) => f.outcome) };
  };

  test('one note that the key could not be compared; the verdict is the offline one', async () => {
    licenses = [{ optionId: 12345 }];
    const w = workdir();
    for (const [folder, key] of [
      [fixturePath('addin'), RIGHT],
      [WRONG_KEY_ADDIN, wrongKeyFile(w.dir)],
    ] as const) {
      const args = ['check', folder, '--vendor', 'Contoso', '--key', key, '--format', 'json'];
      const offline = await runCliAsync(args, { env: w.env });
      const online = await runCliAsync([...args, '--base-url', baseUrl], { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: TOKEN } });
      expect(verdict(online)).toEqual(verdict(offline));
      expect(online.status).toBe(0);
      const notes = online.stderr.split('\n').filter((l) => l.startsWith('note:'));
      expect(notes).toHaveLength(1);
      expect(notes[0]).toContain("does not report its options' public key tokens");
      expect(notes[0]).toContain('could not be compared');
      expect(online.stderr).not.toContain('error');
    }
  });

  test('a token that is not 16 hex digits is taken as absent, with a note naming it; never a crash', async () => {
    const w = workdir();
    const key = wrongKeyFile(w.dir);
    for (const bad of ['zz00zz00zz00zz00', 'abc', 1234567890123456, { nested: true }]) {
      licenses = [{ optionId: 12345, publicKeyToken: bad }];
      const r = await runCliAsync(['check', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', key, '--base-url', baseUrl], {
        env: { ...w.env, SIGNGATE_ACCESS_TOKEN: TOKEN },
      });
      expect(r.status, `${JSON.stringify(bad)}: ${r.stderr}`).toBe(0);
      const notes = r.stderr.split('\n').filter((l) => l.startsWith('note:'));
      expect(notes).toHaveLength(1);
      expect(notes[0]).toContain(
        `option 12345: the signing service's publicKeyToken ${JSON.stringify(bad)} is not 16 hex digits; it is taken as absent, so ${key} could not be compared`,
      );
    }
    // An upper-case token is a token.
    licenses = [{ optionId: 12345, publicKeyToken: RIGHT_TOKEN.toUpperCase() }];
    const upper = await runCliAsync(['check', WRONG_KEY_ADDIN, '--vendor', 'Contoso', '--key', key, '--base-url', baseUrl], {
      env: { ...w.env, SIGNGATE_ACCESS_TOKEN: TOKEN },
    });
    expect(upper.status).toBe(1);
    expect(upper.stdout).toContain(`has key token ${RIGHT_TOKEN}`);
  });

  test('licenses --public-key against it: the service does not hand out key files, nothing written', async () => {
    licenses = [{ optionId: 12345 }];
    const w = workdir();
    const out = join(w.dir, '12345_public.snk');
    writeFileSync(out, 'kept');
    const r = await runCliAsync(['licenses', '--base-url', baseUrl, '--public-key', '12345', '--out', out], {
      env: { ...w.env, SIGNGATE_ACCESS_TOKEN: TOKEN },
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('does not hand out public key files');
    expect(r.stderr).toContain('ask the vendor for 12345_public.snk');
    expect(readFileSync(out, 'utf8')).toBe('kept');
    const listed = await runCliAsync(['licenses', '--base-url', baseUrl], { env: { ...w.env, SIGNGATE_ACCESS_TOKEN: TOKEN } });
    expect(listed.stdout).toContain('option 12345: key file 12345_public.snk, key token not reported by the service');
  });
});
