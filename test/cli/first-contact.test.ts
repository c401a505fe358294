// What a new user meets in the first hour: mistakes stopped before any work, token files and config files as
// Windows writes them, one spelling of JSON output, the vendor script's parameter spellings, clear words.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { normalizeVendorParameters } from '../../src/cli/main.js';
import { controlledResolver, fixturePath, runCli, runCliAsync, clientWorkdir } from '../helpers/fixtures.js';
import { startStandIn, type StandIn } from '../helpers/stand-in-service.js';

const workdir = () => clientWorkdir('signgate-first-', TOKEN);

const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin');
const TOKEN = 'sgt_first-contact-token';

let service: StandIn;
beforeAll(async () => {
  service = await startStandIn();
});
afterAll(() => service.close());

describe('a mistake is stopped before any work starts', () => {
  test('a mistyped option of sign: exit 2, nothing uploaded, nothing written', async () => {
    const w = workdir();
    const before = service.uploads.length;
    const r = await runCliAsync(
      ['sign', ADDIN, '--root', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--base-url', service.baseUrl, '--destinaton-path', w.out, '--delete-afterwards'],
      { env: w.env, cwd: w.dir },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Unknown arguments?: .*destinaton-path/);
    expect(service.uploads.length).toBe(before);
    expect(r.stdout).toBe('');
  });

  test('a mistyped option of check: exit 2 and no report', () => {
    const r = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--formt', 'json']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('formt');
  });

  test.each([
    [['resign', 'x.dll', 'key.snk'], 'key-pair'],
    [['token'], 'signgate token needs <file>'],
    [['check', ADDIN, '-vendor', 'Contoso'], 'Write --vendor'],
  ])('%j: a usage error, never an internal one', (args, words) => {
    const r = runCli(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(words);
    expect(r.stderr).not.toContain('SG_ERR_INTERNAL');
  });
});

describe('token files', () => {
  test('only the first line of a token file is the token', async () => {
    const w = workdir();
    const file = join(w.dir, 'token.txt');
    writeFileSync(file, `\uFEFF${TOKEN}\r\nexpires 2027-01-01\r\n`);
    const r = await runCliAsync(['licenses', '--base-url', service.baseUrl, '--access-token-file', file], {
      env: { SIGNGATE_CACHE_DIR: w.env.SIGNGATE_CACHE_DIR },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('option 12345');
  });

  test('a token with a space in it: a usage error that never shows the token', async () => {
    const w = workdir();
    const file = join(w.dir, 'token.txt');
    writeFileSync(file, `${TOKEN} trailing words\n`);
    const r = await runCliAsync(['licenses', '--base-url', service.baseUrl, '--access-token-file', file], {
      env: { SIGNGATE_CACHE_DIR: w.env.SIGNGATE_CACHE_DIR },
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/holds a space at character \d+/);
    expect(r.stderr).not.toContain(TOKEN);
  });
});

describe('config files as Windows editors write them', () => {
  test('a UTF-8 byte-order mark is fine', () => {
    const w = workdir();
    writeFileSync(join(w.dir, 'signgate.config.json'), `\uFEFF${JSON.stringify({ vendor: 'Contoso', keys: [KEY], paths: [ADDIN] })}`);
    const r = runCli(['check'], { cwd: w.dir });
    expect(r.stderr).not.toContain('SG_ERR_CONFIG');
    expect(r.status, r.stderr).toBe(0);
  });

  test('a syntax error names the line and column; an unknown key gets a suggestion', () => {
    const w = workdir();
    writeFileSync(join(w.dir, 'signgate.config.json'), '{\r\n  "vendor": "Contoso",\r\n  "keys": ["k.snk",]\r\n}\r\n');
    const syntax = runCli(['check'], { cwd: w.dir });
    expect(syntax.status).toBe(2);
    expect(syntax.stderr).toMatch(/line 3, column \d+/);
    writeFileSync(join(w.dir, 'signgate.config.json'), JSON.stringify({ vendor: 'Contoso', keyss: [KEY] }));
    const unknown = runCli(['check'], { cwd: w.dir });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('did you mean "keys"?');
  });
  test('an access token in the config file: said to belong elsewhere (where), never echoed, not "unknown key"', () => {
    const w = workdir();
    const secret = 'sgt_config-secret-value-0123456789';
    for (const key of ['accessToken', 'access_token', 'token']) {
      writeFileSync(join(w.dir, 'signgate.config.json'), JSON.stringify({ vendor: 'Contoso', keys: [KEY], [key]: secret }));
      const r = runCli(['check', ADDIN], { cwd: w.dir });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`"${key}" in (top level): an access token never belongs in the config file`);
      expect(r.stderr).toContain('--access-token-file');
      expect(r.stderr).toContain('SIGNGATE_ACCESS_TOKEN');
      expect(r.stderr).not.toContain('unknown key');
      expect(r.stdout + r.stderr).not.toContain(secret);
    }
  });
});

// Each of these is retried four times before it gives up, with no wait between (SIGNGATE_RETRY_DELAYS); the waits
// themselves are the retry tests' (below).
const NO_WAIT = { SIGNGATE_ACCESS_TOKEN: TOKEN, SIGNGATE_RETRY_DELAYS: '0,0,0,0' };
describe.concurrent('the service cannot be reached: the cause by name, the origin, what to do (not "fetch failed")', () => {
  const closedPort = () =>
    new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(port));
      });
    });

  test('a closed loopback port: connection refused (ECONNREFUSED)', async () => {
    const port = await closedPort();
    const r = await runCliAsync(['licenses', '--base-url', `http://127.0.0.1:${port}/assembly-signing/v1.0`], { env: NO_WAIT });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(
      `error SG_ERR_HTTP_UNREACHABLE: GET http://127.0.0.1:${port}/assembly-signing/v1.0/licenses failed: connection refused (ECONNREFUSED) by http://127.0.0.1:${port}: nothing listens there; start the service`,
    );
    expect(r.stderr).not.toContain('fetch failed');
  });

  test('a name that does not resolve (ENOTFOUND), naming the host; the answer comes from the test, not from DNS', async () => {
    const env = { ...NO_WAIT, ...controlledResolver({}) };
    const r = await runCliAsync(['licenses', '--base-url', 'https://no-such-host.test/assembly-signing/v1.0'], { env });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(
      'error SG_ERR_HTTP_UNREACHABLE: GET https://no-such-host.test/assembly-signing/v1.0/licenses failed: the name no-such-host.test could not be resolved (ENOTFOUND): check the host name in the base URL',
    );
    expect(r.stderr).not.toContain('fetch failed');
  });

  test('a resolver that does not answer (EAI_AGAIN): said to try again, not that the name is wrong', async () => {
    const env = { ...NO_WAIT, ...controlledResolver({ 'signing.example.test': 'EAI_AGAIN' }) };
    const r = await runCliAsync(['licenses', '--base-url', 'https://signing.example.test/assembly-signing/v1.0'], { env });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('the name signing.example.test could not be resolved now (EAI_AGAIN: the DNS server did not answer)');
    expect(r.stderr).not.toContain('fetch failed');
  });

  test('a name the resolver knows reaches the service at its address: the hook resolves, it does not only refuse', async () => {
    const port = await closedPort();
    const env = { ...NO_WAIT, ...controlledResolver({ 'signing.example.test': '127.0.0.1' }) };
    const r = await runCliAsync(['licenses', '--base-url', `https://signing.example.test:${port}/assembly-signing/v1.0`], { env });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('connection refused (ECONNREFUSED)');
  });

  test('a port fetch refuses (1): said so, not "fetch failed"', async () => {
    const r = await runCliAsync(['licenses', '--base-url', 'http://127.0.0.1:1/assembly-signing/v1.0'], { env: NO_WAIT });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('port 1 of http://127.0.0.1:1 is one that fetch refuses to use');
    expect(r.stderr).not.toContain('fetch failed');
  });

  test('SIGNGATE_RETRY_DELAYS sets the waits: one retry line per wait, each saying it; none: no retry; a wrong value: a usage error', async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/assembly-signing/v1.0`;
    const [two, none, wrong] = await Promise.all([
      runCliAsync(['licenses', '--base-url', url], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN, SIGNGATE_RETRY_DELAYS: '5, 10' } }),
      runCliAsync(['licenses', '--base-url', url], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN, SIGNGATE_RETRY_DELAYS: 'none' } }),
      runCliAsync(['licenses', '--base-url', url], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN, SIGNGATE_RETRY_DELAYS: '1s,2s' } }),
    ]);
    expect([two.status, none.status, wrong.status]).toEqual([3, 3, 2]);
    expect(two.stderr.match(/^retrying GET .* in \d+ ms$/gm)?.map((l) => l.replace(/.* in /, ''))).toEqual(['5 ms', '10 ms']);
    expect(none.stderr).not.toContain('retrying');
    expect(none.stderr).toContain('connection refused (ECONNREFUSED)');
    expect(wrong.stderr).toContain('error SG_ERR_USAGE: SIGNGATE_RETRY_DELAYS is "1s,2s", not a list of waits');
    expect(wrong.stderr).toContain('in milliseconds, separated by commas');
  });
});

describe('one command line', () => {
  test('--format json and --json mean the same in check and in inspect', () => {
    const a = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--json']);
    const b = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--format', 'json']);
    expect(a.status).toBe(0);
    expect(JSON.parse(a.stdout)).toEqual(JSON.parse(b.stdout));
    const c = runCli(['inspect', join(ADDIN, 'SampleAddin.dll'), '--format', 'json']);
    expect(JSON.parse(c.stdout)[0].assembly.name).toBe('SampleAddin');
  });

  test("the vendor script's PowerShell spellings: -baseUrl, --BaseUrl, -deleteAfterwards:False", async () => {
    expect(normalizeVendorParameters(['-baseUrl', 'u', '--AccessToken', 't', '-deleteAfterwards:False', '--', '-comment'])).toEqual([
      '--base-url',
      'u',
      '--access-token',
      't',
      '--delete-afterwards=false',
      '--',
      '-comment',
    ]);
    const w = workdir();
    mkdirSync(w.out, { recursive: true });
    const r = await runCliAsync(
      [
        'sign',
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '-baseUrl',
        service.baseUrl,
        '--Assemblies',
        join(ADDIN, 'SampleAddin.dll'),
        '-destinationPath',
        w.out,
        '--poll-interval',
        '20',
      ],
      { env: w.env },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('signed and verified');
  });

  test('a key pair given where the public key belongs is an error (SG205 on the key file), with the commands that mend it', () => {
    const r = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', fixturePath('test-keys/12345_keypair.snk')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain("fixtures/test-keys/12345_keypair.snk holds a key pair (its private key too) where the option's public key file belongs");
    expect(r.stdout).toContain('sn -p <the pair');
    expect(r.stdout).toContain('Keep key pairs out of the repository');
  });

  test('a missing key file says it does not exist', () => {
    const r = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', 'nowhere/12345_public.snk']);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('nowhere/12345_public.snk: the file does not exist');
  });

  test('a base URL without its path is named as the likely cause of a 404', async () => {
    const w = workdir();
    const r = await runCliAsync(['licenses', '--base-url', service.origin], { env: w.env });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('must end in /<service-name>/v1.0');
  });
});
