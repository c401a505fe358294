// Secrets, swept as an attacker would look for them: a recognizable token, a database password and an S3 secret,
// searched as written, in base64, base64url and hex, and every 16-character piece of those, in every output,
// every file written and the service's data. The peers are local servers that echo what they were sent.
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCli, runCliAsync, type CliResult } from '../helpers/fixtures.js';
import { filesUnder, leaks } from '../helpers/secrets.js';
import { refusal, startServiceProcess, stopServiceProcess } from '../helpers/service-process.js';
import { startStandIn, type StandIn } from '../helpers/stand-in-service.js';

const TOKEN = `sgt_${randomBytes(32).toString('base64url')}`;
const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const S3_SECRET = `s3s-${randomBytes(15).toString('base64url')}`;
const SECRETS = { token: TOKEN, 'database password': PASSWORD, 'S3 secret': S3_SECRET };
const KEY = fixturePath('test-keys/12345_public.snk');
const ADDIN = fixturePath('addin/SampleAddin.dll');
const POSIX = process.platform !== 'win32';

/** Every secret found in a command's output, as "where: what". */
const outputLeaks = (what: string, r: CliResult) => [...leaks(`${what} stdout`, r.stdout, SECRETS), ...leaks(`${what} stderr`, r.stderr, SECRETS)];

describe('service text never carries the token out', () => {
  let service: StandIn;
  // What the stand-in answers GET /licenses with; each mode echoes the Authorization header another way.
  let mode = '';
  let work: string;
  const answer = (res: import('node:http').ServerResponse, auth: string) => {
    const b64 = Buffer.from(TOKEN).toString('base64');
    const send = (status: number, type: string, body: string) => res.writeHead(status, { 'content-type': type, 'retry-after': '0' }).end(body);
    switch (mode) {
      case '401 detail':
        return send(401, 'application/problem+json', JSON.stringify({ title: 'Unauthorized', detail: `invalid token: ${auth}` }));
      case '403 message':
        return send(403, 'application/json', JSON.stringify({ message: `forbidden for ${auth}` }));
      case '500 text':
        return send(500, 'text/plain', `crash while checking ${auth}`);
      case '502 html':
        return send(502, 'text/html', `<html><body><h1>Bad gateway</h1><p>upstream said no to ${auth}</p></body></html>`);
      case '400 ASP.NET errors':
        return send(
          400,
          'application/problem+json',
          JSON.stringify({ title: 'One or more validation errors occurred.', errors: { Authorization: [`not valid: ${auth}`] } }),
        );
      case '200 not JSON':
        return send(200, 'text/plain', `Bearer token ${auth} accepted`);
      case '401 base64':
        return send(401, 'application/json', JSON.stringify({ detail: `token ${b64} unknown` }));
      case '401 base64url':
        return send(401, 'application/json', JSON.stringify({ detail: `token ${Buffer.from(TOKEN).toString('base64url')} unknown` }));
      case '401 split by a line break':
        return send(401, 'application/json', JSON.stringify({ detail: `invalid: ${auth.slice(0, 18)}\n${auth.slice(18)}` }));
      case '401 split by a space':
        return send(401, 'text/plain', `invalid: ${auth.slice(0, 31)} ${auth.slice(31)}`);
      case '401 base64 of the header':
        return send(401, 'application/json', JSON.stringify({ detail: `header ${Buffer.from(auth).toString('base64')} refused` }));
      case '401 hex':
        return send(401, 'application/json', JSON.stringify({ detail: `token ${Buffer.from(TOKEN).toString('hex')} unknown` }));
      default:
        return false;
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'signgate-secrets-'));
    service = await startStandIn({
      // Links that carry the token (as a gateway may add it): they must not reach the job ledger.
      linkSuffix: `?access_token=${TOKEN}`,
      intercept: (req, res) => {
        if (!req.url?.endsWith('/licenses') || !mode) return false;
        answer(res, String(req.headers.authorization ?? ''));
        return true;
      },
      // Every file message of the status echoes the Authorization header it was asked with.
      status: (real) => ({
        ...real,
        assemblies: (real.assemblies as Record<string, unknown>[]).map((a) => ({
          ...a,
          messages: [{ dateTime: null, messageType: 'Info', message: `Signed for Bearer ${TOKEN}` }],
        })),
      }),
    });
  });
  afterAll(() => service?.close());

  const env = () => ({ SIGNGATE_ACCESS_TOKEN: TOKEN, SIGNGATE_CACHE_DIR: join(work, 'cache') });

  test.each([
    '401 detail',
    '403 message',
    '500 text',
    '502 html',
    '400 ASP.NET errors',
    '200 not JSON',
    '401 base64',
    '401 base64url',
    '401 hex',
    '401 split by a line break',
    '401 split by a space',
    '401 base64 of the header',
  ])(
    'licenses, the service answering %s: the answer is shown with the token masked',
    async (m) => {
      mode = m;
      const r = await runCliAsync(['licenses', '--base-url', service.baseUrl, '--verbose'], { env: env() });
      mode = '';
      expect(r.status, r.stderr).toBe(3);
      expect(r.stderr).toContain('[token]');
      expect(outputLeaks(`licenses (${m})`, r)).toEqual([]);
    },
    60_000,
  );

  test('sign and jobs status: file messages that echo the token are printed and kept in the ledger masked', async () => {
    const out = join(work, 'signed');
    const r = await runCliAsync(
      ['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--base-url', service.baseUrl, '--destination-path', out, '--poll-interval', '20'],
      { env: env() },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Signed for Bearer [token]');
    const ledger = readFileSync(join(work, 'cache', 'jobs.json'), 'utf8');
    expect(ledger).toContain('Signed for Bearer [token]');
    const jobId = (JSON.parse(ledger) as { jobs: { jobId: string }[] }).jobs[0]!.jobId;
    const status = await runCliAsync(['jobs', 'status', jobId, '--base-url', service.baseUrl], { env: env() });
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain('[token]');
    const found = [...outputLeaks('sign', r), ...outputLeaks('jobs status', status), ...filesUnder(work).flatMap((f) => leaks(f.path, f.text, SECRETS))];
    expect(found).toEqual([]);
  });

  test.runIf(POSIX)('the ledger is 0600 in a 0700 folder', () => {
    expect(statSync(join(work, 'cache', 'jobs.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(work, 'cache')).mode & 0o777).toBe(0o700);
  });
});

describe('credentials in URLs are never shown', () => {
  test.each([
    ['postgres:signgate:<password>@127.0.0.1:15432/signgate'],
    ['postgres:/signgate:<password>@127.0.0.1:15432/signgate'],
    ['postgresql:signgate:<password>@127.0.0.1/signgate'],
  ])('serve token create --database %s: refused by scheme, the rest not shown', (shape) => {
    const database = shape.replace('<password>', PASSWORD);
    const dir = mkdtempSync(join(tmpdir(), 'signgate-db-'));
    const r = runCli([
      'serve',
      'token',
      'create',
      '--config',
      fixturePath('server/sandbox.json'),
      '--data-dir',
      dir,
      '--org',
      'sandbox',
      '--user',
      'ci',
      '--database',
      database,
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--database postgres(ql)?: \(rest not shown\) is not a PostgreSQL connection string/);
    expect(outputLeaks('serve token create', r)).toEqual([]);
  });

  test('--database-file: the connection string read from a file, out of the process list, and never echoed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-db-'));
    const file = join(dir, 'database.txt');
    writeFileSync(file, `postgres:signgate:${PASSWORD}@127.0.0.1:15432/signgate\r\n`);
    const r = runCli([
      'serve',
      'token',
      'create',
      '--config',
      fixturePath('server/sandbox.json'),
      '--data-dir',
      dir,
      '--org',
      'sandbox',
      '--user',
      'ci',
      '--database-file',
      file,
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('(rest not shown) is not a PostgreSQL connection string');
    expect(outputLeaks('--database-file', r)).toEqual([]);
    const help = runCli(['serve', '--help']);
    expect(help.stdout).toMatch(/--database\s[\s\S]*process lists/);
    expect(help.stdout).toContain('--database-file');
  });

  test("serve --blob-store 's3:AK:SECRET@bucket/pre': refused by scheme, the key not shown", () => {
    const r = runCli([
      'serve',
      '--config',
      fixturePath('server/sandbox.json'),
      '--data-dir',
      mkdtempSync(join(tmpdir(), 'signgate-s3-')),
      '--port',
      '0',
      '--database',
      'postgres://signgate@127.0.0.1:1/signgate',
      '--blob-store',
      `s3:AKIAEXAMPLE:${S3_SECRET}@bucket/pre`,
    ]);
    expect(r.status).toBe(2);
    expect(refusal(r.stdout)).toContain('--blob-store s3: (rest not shown) is not an s3://bucket URL');
    expect(outputLeaks('serve --blob-store', r)).toEqual([]);
  });

  test('--base-url with a user and password: refused with advice, nothing of it shown, nothing sent', async () => {
    const service = await startStandIn();
    try {
      const withUser = service.baseUrl.replace('http://', `http://user:${PASSWORD}@`);
      const r = await runCliAsync(['licenses', '--base-url', withUser, '--verbose'], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } });
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain('has a user or password part (not shown)');
      expect(service.seen).toEqual([]);
      expect(outputLeaks('licenses --base-url', r)).toEqual([]);
      const opaque = await runCliAsync(['licenses', '--base-url', `http:user:${PASSWORD}@127.0.0.1/x`], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } });
      expect(opaque.status).not.toBe(0);
      expect(outputLeaks('licenses --base-url (no //)', opaque)).toEqual([]);
    } finally {
      await service.close();
    }
  });
});

describe('usage errors never echo a value', () => {
  test.each([['-token:<token>'], ['-Token:<token>'], ['-token=<token>'], ['--comment=<token>'], ['<token>']])(
    'check %s: the option named, the value not',
    (shape) => {
      const arg = shape.replace('<token>', TOKEN);
      const r = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', KEY, arg]);
      expect(r.status).toBe(2);
      expect(outputLeaks('check', r)).toEqual([]);
      if (arg.startsWith('-t') || arg.startsWith('-T')) expect(r.stderr).toMatch(/-[tT]oken is not an option/);
    },
  );
});

describe('nothing secret is packed or uploaded', () => {
  const folder = (files: Record<string, Uint8Array | string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-pack-'));
    mkdirSync(join(dir, 'out'));
    copyFileSync(ADDIN, join(dir, 'out', 'SampleAddin.dll'));
    copyFileSync(fixturePath('addin/Contoso.AddinApi.dll'), join(dir, 'out', 'Contoso.AddinApi.dll'));
    for (const [name, data] of Object.entries(files)) writeFileSync(join(dir, 'out', name), data);
    return dir;
  };
  const pack = (dir: string, ...more: string[]) => runCli(['pack', join(dir, 'out'), '-o', join(dir, 'out.zip'), '--vendor', 'Contoso', '--key', KEY, ...more]);

  test.each([
    ['a key pair named .snk', { 'MyAddin.snk': readFileSync(fixturePath('test-keys/12345_keypair.snk')) }, 'strong-name key pair'],
    ['a key pair under another name', { 'key.bin': readFileSync(fixturePath('test-keys/other_keypair.snk')) }, 'strong-name key pair'],
    ['a PKCS#12 store', { 'codesign.pfx': randomBytes(64) }, 'PKCS#12'],
    ['a PEM private key', { 'tls.pem': '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n' }, 'PEM private key'],
  ])('pack refuses %s, with --force too, and writes nothing', (_what, files, words) => {
    const dir = folder(files);
    for (const force of [[], ['--force']]) {
      const r = pack(dir, ...force);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(words);
      expect(r.stderr).toContain('never packed');
      expect(existsSync(join(dir, 'out.zip'))).toBe(false);
    }
  });

  test('pack refuses a token file unless --force; the token is never shown', () => {
    const dir = folder({ 'token.txt': `${TOKEN}\n`, 'appsettings.json': '{"Logging":{}}' });
    const r = pack(dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('token.txt is text shaped like an access token');
    expect(r.stderr).toContain('--force');
    expect(existsSync(join(dir, 'out.zip'))).toBe(false);
    expect(outputLeaks('pack', r)).toEqual([]);
    const forced = pack(dir, '--force');
    expect(forced.status, forced.stderr).toBe(0);
    expect(existsSync(join(dir, 'out.zip'))).toBe(true);
  });

  test('sign --archive refuses an archive with a key pair before anything is sent', async () => {
    const service = await startStandIn();
    try {
      const dir = folder({});
      expect(pack(dir).status).toBe(0);
      // The same archive with a key pair added by hand (as a zip tool would).
      const { default: yazl } = await import('yazl');
      const zip = new yazl.ZipFile();
      zip.addFile(join(dir, 'out', 'SampleAddin.dll'), 'SampleAddin.dll');
      zip.addBuffer(readFileSync(fixturePath('test-keys/12345_keypair.snk')), 'keys/12345_keypair.snk');
      zip.end();
      const chunks: Buffer[] = [];
      for await (const c of zip.outputStream as AsyncIterable<Buffer>) chunks.push(c);
      writeFileSync(join(dir, 'with-key.zip'), Buffer.concat(chunks));
      const r = await runCliAsync(
        [
          'sign',
          '--archive',
          join(dir, 'with-key.zip'),
          '--vendor',
          'Contoso',
          '--key',
          KEY,
          '--base-url',
          service.baseUrl,
          '--destination-path',
          join(dir, 'signed'),
          '--force',
        ],
        { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } },
      );
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('keys/12345_keypair.snk is a strong-name key pair');
      expect(service.seen).toEqual([]);
    } finally {
      await service.close();
    }
  });
});

describe.runIf(POSIX)('nothing secret is readable by others', () => {
  test('serve token create: tokens.json 0600 in a 0700 data folder, even one made 0755 before', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-data-'));
    const data = join(dir, 'data');
    mkdirSync(data, { mode: 0o755 });
    const r = runCli(['serve', 'token', 'create', '--config', fixturePath('server/sandbox.json'), '--data-dir', data, '--org', 'sandbox', '--user', 'ci']);
    expect(r.status, r.stderr).toBe(0);
    expect(statSync(join(data, 'tokens.json')).mode & 0o777).toBe(0o600);
    expect(statSync(data).mode & 0o777).toBe(0o700);
  });

  test('serve init: the key pair it makes is 0600', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'signgate-init-')), 'service');
    const r = runCli(['serve', 'init', '--dir', dir, '--vendor', 'Contoso']);
    expect(r.status, r.stderr).toBe(0);
    const key = readdirSyncSnk(dir);
    expect(statSync(key).mode & 0o777).toBe(0o600);
  });

  test('serve warns at start when a key pair it signs with is readable by others; the files it writes are 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-serve-'));
    const config = JSON.parse(readFileSync(fixturePath('server/sandbox.json'), 'utf8'));
    delete config.$schema;
    for (const org of config.organizations)
      for (const l of org.licenses) {
        const copy = join(dir, `${org.id}-${l.optionId}.snk`);
        copyFileSync(join(fixturePath('server'), l.keyPair), copy);
        chmodSync(copy, 0o600);
        l.keyPair = copy;
      }
    writeFileSync(join(dir, 'server.json'), JSON.stringify(config));
    const first = join(dir, `${config.organizations[0].id}-${config.organizations[0].licenses[0].optionId}.snk`);
    chmodSync(first, 0o644);
    const service = await startServiceProcess(['--config', join(dir, 'server.json'), '--data-dir', join(dir, 'data')], { NO_COLOR: '1' });
    await stopServiceProcess(service, 'SIGTERM');
    // A line of its JSON log at warn level (40), naming the file and its mode.
    type Line = { level: number; msg: string; keyPair?: string; mode?: string };
    const warnings = service
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line)
      .filter((l) => l.keyPair);
    expect(warnings).toEqual([expect.objectContaining({ level: 40, keyPair: first, mode: '0644' })]);
    expect(warnings[0]!.msg).toContain(`the key pair ${first} is readable by other users of this machine (mode 0644)`);
    expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
  });
});

function readdirSyncSnk(dir: string): string {
  const name = readdirSync(dir).find((n) => n.endsWith('.snk'));
  if (!name) throw new Error(`no key pair in ${dir}`);
  return join(dir, name);
}
