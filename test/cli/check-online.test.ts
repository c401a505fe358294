// `check` goes online only when asked: --online, --base-url on its command line, or "online": true in
// signgate.config.json. SIGNGATE_BASE_URL (which the README has users export for `sign`) and "baseUrl" in the config
// file alone leave it offline, with one note; the same for `audit`, which never goes online. Through the built CLI,
// with the variable pointing at a port where nothing listens and no token.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { sharedServer } from '../helpers/shared-server.js';

const ADDIN = fixturePath('addin/SampleAddin.dll');
const KEY = fixturePath('test-keys/12345_public.snk');
const CHECK = ['check', ADDIN, '--vendor', 'Contoso', '--key', KEY];
const OFFLINE = '0 errors, 0 warnings, 0 notes (offline: licenses not checked)';

let dead = '';
beforeAll(async () => {
  dead = `http://127.0.0.1:${await freePort()}/assembly-signing/v1.0`;
});

/** A working folder of its own (no signgate.config.json above it), optionally with one. */
function folder(config?: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-online-'));
  if (config) writeFileSync(join(dir, 'signgate.config.json'), JSON.stringify(config));
  return dir;
}

/** The CLI with SIGNGATE_BASE_URL (nothing listening there) and no token, unless `env` says otherwise. */
const cli = (args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}) =>
  runCliAsync(args, { cwd: options.cwd ?? folder(), env: { SIGNGATE_BASE_URL: dead, SIGNGATE_ACCESS_TOKEN: '', ...options.env } });

const notes = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('note: '));

describe('an address alone leaves check offline', () => {
  test('SIGNGATE_BASE_URL set, no token, nothing listening: exit 0 offline, and one note saying how to go online', async () => {
    const r = await cli(CHECK);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(OFFLINE);
    expect(notes(r.stderr)).toEqual([
      'note: check ran offline: SIGNGATE_BASE_URL is the service for sign; --online takes check there too, for the license cross-check ' +
        '(or "online": true in signgate.config.json; in a build, SigngateCheckOnline)',
    ]);
    expect(r.stderr).not.toContain('error');
  });

  test('"baseUrl" in signgate.config.json alone: offline too, the note names the file', async () => {
    const r = await cli(CHECK, { cwd: folder({ baseUrl: dead }), env: { SIGNGATE_BASE_URL: '' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(OFFLINE);
    expect(notes(r.stderr)).toHaveLength(1);
    expect(r.stderr).toContain('note: check ran offline: "baseUrl" in signgate.config.json is the service for sign');
  });

  test('no address anywhere: offline without a note; --no-online: offline without a note, whatever the config says', async () => {
    const none = await cli(CHECK, { env: { SIGNGATE_BASE_URL: '' } });
    expect(none.status, none.stderr).toBe(0);
    expect(notes(none.stderr)).toEqual([]);
    const off = await cli([...CHECK, '--no-online'], { cwd: folder({ online: true }) });
    expect(off.status, off.stderr).toBe(0);
    expect(off.stdout).toContain(OFFLINE);
    expect(notes(off.stderr)).toEqual([]);
  });

  test('audit with SIGNGATE_BASE_URL set and no token answers as without the variable (it never goes online)', async () => {
    const args = ['audit', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--format', 'json', '--no-timestamp'];
    const [set, unset] = await Promise.all([cli(args), cli(args, { env: { SIGNGATE_BASE_URL: '' } })]);
    expect(set.stderr).not.toContain('SG_ERR');
    expect(set.status, set.stderr).toBe(unset.status);
    expect(set.stdout).toBe(unset.stdout);
  });
});

describe('asked to go online, check needs an address and a token', () => {
  test('--online, --base-url, "online": true: without a token a usage error (exit 2) naming what asked, with what to do', async () => {
    const asked: [string[], string | undefined, string][] = [
      [['--online'], undefined, '--online'],
      [['--base-url', dead], undefined, '--base-url'],
      [[], JSON.stringify({ online: true }), '"online": true in signgate.config.json'],
    ];
    for (const [args, config, by] of asked) {
      const cwd = folder(config ? JSON.parse(config) : undefined);
      const r = await cli([...CHECK, ...args], { cwd });
      expect(r.status, by).toBe(2);
      expect(r.stderr).toContain(`error SG_ERR_USAGE: check goes online (${by}, ${dead}) but no access token is given\n`);
      expect(r.stderr).toContain('  hint: Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN (avoid --access-token: it shows in process lists)');
      expect(r.stderr).toContain(`; or check offline: leave out ${by}`);
      expect(r.stdout).toBe('');
    }
  });

  test('--online without any address: a usage error that says where an address may come from', async () => {
    const r = await cli([...CHECK, '--online'], { env: { SIGNGATE_BASE_URL: '' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('error SG_ERR_USAGE: check goes online (--online) but no signing service address is given');
    expect(r.stderr).toContain('hint: Pass --base-url <…/<service-name>/v1.0>, set "baseUrl" in signgate.config.json or set SIGNGATE_BASE_URL');
  });

  test('--online with a token and the service down: exit 3, the service unreachable', async () => {
    const r = await cli([...CHECK, '--online'], { env: { SIGNGATE_ACCESS_TOKEN: 'sgt_not-a-real-token' } });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('error SG_ERR_HTTP_UNREACHABLE');
  });

  test('--format msbuild: a usage error is one MSBuild error line that keeps its hint', async () => {
    const r = await cli([...CHECK, '--online', '--format', 'msbuild']);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `signgate : error SG_ERR_USAGE: check goes online (--online, ${dead}) but no access token is given; ` +
        'hint: Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN (avoid --access-token: it shows in process lists); ' +
        'or check offline: leave out --online (in a build: -p:SigngateCheckOnline=false).',
    ]);
    // A mistyped option is a usage error of yargs', on one line as well.
    const typo = await cli([...CHECK, '--format=msbuild', '--onlin']);
    expect(typo.status).toBe(2);
    expect(typo.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(typo.stderr).toMatch(/^signgate : error SG_ERR_USAGE: Unknown argument: --onlin; hint: Did you mean --online/);
  });
});

describe('online against the service', () => {
  const shared = sharedServer();

  test('--online with SIGNGATE_BASE_URL and the token: the licenses are cross-checked, no note', async () => {
    const env = { SIGNGATE_BASE_URL: shared.server().baseUrl, SIGNGATE_ACCESS_TOKEN: shared.token() };
    const r = await cli([...CHECK, '--online'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('0 errors, 0 warnings, 0 notes');
    expect(r.stdout).not.toContain('offline');
    expect(notes(r.stderr)).toEqual([]);
  });
});
