// Tokens and roles change while the service runs: a token made by `serve token create` in another process
// works at once, `serve token revoke` and the removal of a role take effect within seconds, without a restart.
// Health and readiness answer a load balancer without a token.
import { existsSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { request } from 'node:http';
import {
  cliToken,
  editConfig,
  refusal,
  runSigngate,
  sandboxConfigCopy,
  startServiceProcess,
  stopServiceProcess,
  type ServiceProcess,
} from '../../helpers/service-process.js';
import { waitUntil } from '../../helpers/wait.js';

let config: string;
let dataDir: string;
let service: ServiceProcess;

beforeAll(async () => {
  config = sandboxConfigCopy();
  dataDir = mkdtempSync(join(tmpdir(), 'signgate-live-'));
  service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
});
afterAll(() => stopServiceProcess(service));

const licenses = (token: string) => fetch(`${service.baseUrl}/licenses`, { headers: { authorization: `Bearer ${token}` } });

/** Polls until `check` holds or `ms` pass; the time it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - start;
}

describe('tokens made and revoked while the service runs', () => {
  test('a token created through the CLI is accepted at once; revoked, it is refused within 2 s', async () => {
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    expect((await licenses(token)).status).toBe(200);
    const other = await cliToken(['--config', config, '--data-dir', dataDir]);
    // From a file, as a script keeps it out of the process list (CRLF and a BOM as Windows editors write it).
    const tokenFile = join(dataDir, 'old-token.txt');
    writeFileSync(tokenFile, `\uFEFF${token}\r\n`);
    const revoke = await runSigngate(['serve', 'token', 'revoke', '--data-dir', dataDir, '--token-file', tokenFile]);
    expect(revoke.code, revoke.err).toBe(0);
    expect(revoke.err).toMatch(/Revoked 1 token/);
    expect(revoke.err).not.toContain(token);
    expect(await within(2000, async () => (await licenses(token)).status === 401)).toBeLessThan(2000);
    const refusal = await (await licenses(token)).json();
    expect(refusal.detail).toMatch(/revoked/);
    expect((await licenses(other)).status).toBe(200);
    // Every token of the user at once; revoking again finds nothing (exit 2).
    expect((await runSigngate(['serve', 'token', 'revoke', '--data-dir', dataDir, '--org', 'sandbox', '--user', 'ci'])).code).toBe(0);
    await within(2000, async () => (await licenses(other)).status === 401);
    const again = await runSigngate(['serve', 'token', 'revoke', '--data-dir', dataDir, '--token', token]);
    expect(again.code).toBe(2);
    expect(again.err).toMatch(/Nothing to revoke/);
  });

  test('revoke names the service as create does (--config, --data-dir): the wrong folder is refused and nothing made there; the right one stops the token', async () => {
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    expect((await licenses(token)).status).toBe(200);
    const elsewhere = mkdtempSync(join(tmpdir(), 'signgate-revoke-cwd-'));
    const tokenFile = join(elsewhere, 't.txt');
    writeFileSync(tokenFile, `${token}\n`);
    // As a user types it from another folder: no --data-dir, so the default ./signgate-data, which is not the service's.
    const wrong = await runSigngate(['serve', 'token', 'revoke', '--config', config, '--token-file', tokenFile], {}, elsewhere);
    expect(wrong.code).not.toBe(0);
    expect(wrong.err).toContain('signgate-data holds no tokens');
    expect(wrong.err).toContain('Pass the --data-dir (or --database) the service runs with');
    expect(existsSync(join(elsewhere, 'signgate-data'))).toBe(false);
    expect((await licenses(token)).status).toBe(200);
    // --config is taken by revoke as by create; with the service's --data-dir the token stops working.
    const right = await runSigngate(['serve', 'token', 'revoke', '--config', config, '--data-dir', dataDir, '--token-file', tokenFile], {}, elsewhere);
    expect(right.code, right.err).toBe(0);
    expect(right.err).not.toContain(token);
    await waitUntil('the revoked token to be refused', async () => (await licenses(token)).status === 401);
    // A token this service never made: non-zero, nothing made.
    writeFileSync(tokenFile, 'sgt_never-made-by-this-service-0123456789abcdef\n');
    const unknown = await runSigngate(['serve', 'token', 'revoke', '--config', config, '--data-dir', dataDir, '--token-file', tokenFile], {}, elsewhere);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toMatch(/Nothing to revoke: the token is not known in /);
    expect(readdirSync(elsewhere)).toEqual(['t.txt']);
  });

  test('serve token revoke without --token or --org/--user says what it needs', async () => {
    const r = await runSigngate(['serve', 'token', 'revoke', '--data-dir', dataDir, '--org', 'sandbox']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/needs --token-file \(or --token\), or --org and --user/);
  });

  test('removing the role in the configuration refuses the user within 2 s; granting it again lets them in', async () => {
    const token = await cliToken(['--config', config, '--data-dir', dataDir], 'other-org', 'alice');
    expect((await licenses(token)).status).toBe(200);
    // Both saves carry the same modification time, as two saves within one tick of the file system's clock do.
    const tick = Math.floor(Date.now() / 1000);
    editConfig(config, (raw) => (raw.organizations.find((o) => o.id === 'other-org')!.users[0]!.roles = []));
    utimesSync(config, tick, tick);
    await within(2000, async () => (await licenses(token)).status === 403);
    editConfig(config, (raw) => (raw.organizations.find((o) => o.id === 'other-org')!.users[0]!.roles = ['User']));
    utimesSync(config, tick, tick);
    await within(2000, async () => (await licenses(token)).status === 200);
  });
});

describe('health and readiness', () => {
  test('/healthz and /readyz answer 200 without a token, and stay out of the OpenAPI document', async () => {
    const origin = `http://127.0.0.1:${service.port}`;
    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', role: 'all' });
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    expect((await ready.json()).status).toBe('ready');
    const doc = await (await fetch(`${service.baseUrl}/openapi.json`)).json();
    expect(Object.keys(doc.paths).some((p) => /healthz|readyz/.test(p))).toBe(false);
  });

  test('while the node shuts down (an upload in flight keeps it running) /readyz is never 200', async () => {
    const other = await startServiceProcess(['--config', config, '--data-dir', mkdtempSync(join(tmpdir(), 'signgate-ready-'))]);
    const token = await cliToken(['--config', config, '--data-dir', dataDir]);
    const upload = request({
      host: '127.0.0.1',
      port: other.port,
      method: 'POST',
      path: '/assembly-signing/v1.0/assemblies',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=b', 'content-length': 100_000 },
    });
    upload.on('error', () => {});
    upload.write('--b\r\nContent-Disposition: form-data; name="files[0]"; filename="A.dll"\r\n\r\n');
    const origin = `http://127.0.0.1:${other.port}`;
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    other.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(other.child.exitCode).toBeNull(); // still finishing the upload
    // fastify stops listening at once: a load balancer's new probe is refused; one on an open connection gets 503.
    const ready = await fetch(`${origin}/readyz`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect(ready === 'refused' || ready === 503).toBe(true);
    upload.destroy();
    await stopServiceProcess(other);
  });
});

describe('several-node options without their store', () => {
  test('--role api/worker without --database, and a database that does not answer: clear refusals that keep the password out', async () => {
    const worker = await runSigngate(['serve', '--config', config, '--data-dir', dataDir, '--port', '0', '--role', 'worker'], { SIGNGATE_DATABASE_URL: '' });
    expect(worker.code).toBe(2);
    expect(refusal(worker.out)).toMatch(/--role worker needs --database/);
    const unreachable = await runSigngate([
      'serve',
      '--config',
      config,
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--database',
      'postgres://signgate:Sup3rSecret@127.0.0.1:1/signgate',
    ]);
    expect(unreachable.code).toBe(2);
    expect(refusal(unreachable.out)).toContain('cannot use the database postgres://signgate@127.0.0.1:1/signgate');
    expect(unreachable.err + unreachable.out).not.toContain('Sup3rSecret');
    const notPostgres = await runSigngate([
      'serve',
      'token',
      'create',
      '--config',
      config,
      '--org',
      'sandbox',
      '--user',
      'ci',
      '--database',
      'mysql://root:Sup3rSecret@db/x',
    ]);
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.err).toMatch(/is not a PostgreSQL connection string/);
    expect(notPostgres.err).not.toContain('Sup3rSecret');
  });
});
