// Reload without a restart: SIGHUP reads server.json again; a valid new configuration applies at once (log level,
// users and roles, limits) and the node logs what changed; a broken or invalid one is refused and the last good one
// kept. A node nobody calls sees an edit within seconds too (the file is looked at every 2 s: Windows has no SIGHUP).
// No signal the service handles ends it without its graceful stop.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cliToken, editConfig, sandboxConfigCopy, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { WaitError, waitUntil } from '../helpers/wait.js';

let config: string;
let dataDir: string;
let service: ServiceProcess;
let alice: string;

beforeAll(async () => {
  config = sandboxConfigCopy();
  dataDir = mkdtempSync(join(tmpdir(), 'signgate-reload-'));
  service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
  alice = await cliToken(['--config', config, '--data-dir', dataDir], 'other-org', 'alice');
});
afterAll(() => stopServiceProcess(service));

const licenses = (token: string) => fetch(`${service.baseUrl}/licenses`, { headers: { authorization: `Bearer ${token}` } });
type Line = { level: number; msg: string; changes?: string[]; code?: string; reqId?: string };
/** The JSON lines the service wrote from offset `since` of its stdout. */
const lines = (since = 0): Line[] =>
  service
    .stdout()
    .slice(since)
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
/** Waits for a line written after `since` that `match` takes; that line. */
async function lineAfter(since: number, what: string, match: (l: Line) => boolean): Promise<Line> {
  await waitUntil(
    what,
    () => lines(since).some(match),
    () => service.stdout().slice(since).slice(-2000),
  );
  return lines(since).find(match)!;
}
const reloadedWithChanges = (l: Line) => l.msg.startsWith('configuration reloaded') && (l.changes?.length ?? 0) > 0;
/** Whether a request refused for its token (401, logged at info) leaves a "request completed" line now. */
async function infoLogged(): Promise<boolean> {
  const id = `probe-${Math.random().toString(36).slice(2)}`;
  const r = await fetch(`${service.baseUrl}/licenses`, { headers: { authorization: 'Bearer junk', 'x-request-id': id } });
  expect(r.status).toBe(401);
  await new Promise((done) => setTimeout(done, 300));
  return lines().some((l) => l.reqId === id && l.msg === 'request completed');
}

test('SIGHUP: the log level, a role and a limit apply at once, and one line says what changed', async () => {
  expect((await licenses(alice)).status).toBe(200);
  expect(await infoLogged()).toBe(true);
  editConfig(config, (raw) => {
    (raw as { logLevel?: string }).logLevel = 'warn';
    raw.organizations.find((o) => o.id === 'other-org')!.users[0]!.roles = [];
    raw.limits = { ...raw.limits, maxFilesPerJob: 5 };
  });
  const since = service.stdout().length;
  service.child.kill('SIGHUP');
  const reloaded = await lineAfter(since, 'the reload line', reloadedWithChanges);
  expect(reloaded.level).toBe(30);
  expect(reloaded.changes).toEqual(['logLevel: unset -> "warn"', 'limits.maxFilesPerJob: 1000 -> 5', "other-org: alice's roles: User -> none"]);
  expect((await licenses(alice)).status).toBe(403);
  expect(await infoLogged()).toBe(false);
});

test('a broken file and an invalid one are refused with the reason, the last good configuration is kept, the node runs on', async () => {
  const good = service.stdout().length;
  writeFileSync(config, '{ "vendor": "Contoso", ');
  service.child.kill('SIGHUP');
  const broken = await lineAfter(good, 'the refusal of the broken file', (l) => l.msg.startsWith('configuration refused'));
  expect(broken.level).toBe(50);
  expect(broken.code).toBe('SG_ERR_CONFIG');
  expect(broken.msg).toContain(config);
  // Valid JSON, not a valid configuration: refused too, found by the 2 s look without a signal.
  const since = service.stdout().length;
  writeFileSync(config, JSON.stringify({ vendor: 'Contoso', organizations: [], unknownSetting: 1 }));
  const invalid = await lineAfter(since, 'the refusal of the invalid file', (l) => l.msg.startsWith('configuration refused'));
  expect(invalid.msg).toContain('unknownSetting');
  // The last good one: alice still without her role, the node answers, and nothing was reloaded meanwhile.
  expect((await licenses(alice)).status).toBe(403);
  expect(service.child.exitCode).toBeNull();
  expect(service.stdout().slice(good)).not.toContain('configuration reloaded');
});

test('an edit with no signal and no request applies within seconds and is logged (the way on Windows)', async () => {
  const since = service.stdout().length;
  writeFileSync(config, readFileSync(sandboxConfigCopy(), 'utf8'));
  const back = await lineAfter(since, 'the reload line', reloadedWithChanges);
  // Against the last good configuration (warn, alice without a role, 5 files): the level, her role and the limit are back.
  expect(back.changes).toEqual(['logLevel: "warn" -> unset', 'limits.maxFilesPerJob: 5 -> 1000', "other-org: alice's roles: none -> User"]);
  expect(await infoLogged()).toBe(true);
  expect((await licenses(alice)).status).toBe(200);
});

test('SIGQUIT stops the service gracefully: the shutdown line, the stopped line, exit 0', async () => {
  const other = await startServiceProcess(['--config', sandboxConfigCopy(), '--data-dir', mkdtempSync(join(tmpdir(), 'signgate-quit-'))]);
  // Sent the moment the start line is out: a reload, not the end of a service that is still starting.
  other.child.kill('SIGHUP');
  await waitUntil(
    'the reload line',
    () => {
      if (other.child.exitCode !== null || other.child.signalCode !== null)
        throw new WaitError(`the service ended (${other.child.signalCode ?? other.child.exitCode}) at SIGHUP: ${other.stdout().slice(-1000)}`);
      return other.stdout().includes('configuration reloaded: nothing changed');
    },
    () => other.stdout(),
  );
  expect(other.child.exitCode).toBeNull();
  other.child.kill('SIGQUIT');
  expect(await other.exited).toBe(0);
  expect(other.stdout()).toContain('"signal":"SIGQUIT"');
  expect(other.stdout()).toContain('signgate serve stopped');
});
