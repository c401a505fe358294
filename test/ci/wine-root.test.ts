// scripts/wine-root.sh makes the Wine 10 root of the heavy leg on a machine that has never run CI. It reads the
// Debian mirror from the machine's apt sources, whatever their layout: a new Debian 12 machine has deb822 sources
// only (no /etc/apt/sources.list), an older one a one-line list only, some both. Every failure prints one line that
// says what failed and what to do; none ends the script silently under `set -e`.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

const script = join(repoRoot, 'scripts', 'wine-root.sh');
const dir = mkdtempSync(join(tmpdir(), 'signgate-wine-root-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DEB822 = [
  'Types: deb',
  '# http://snapshot.example/archive/debian/20250520T000000Z',
  'URIs: http://deb.example.org/debian',
  'Suites: bookworm bookworm-updates',
  'Components: main',
  'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
  '',
  'Types: deb',
  'URIs: http://deb.example.org/debian-security',
  'Suites: bookworm-security',
  'Components: main',
  '',
].join('\n');
const SECURITY_FIRST = ['Types: deb', 'URIs: http://security.example.org/debian-security', 'Suites: bookworm-security', 'Components: main', ''].join('\n');
const ONE_LINE = [
  '# the main archive',
  'deb-src http://src.example.org/debian bookworm main',
  'deb http://list.example.org/debian/ bookworm main',
  'deb http://list.example.org/debian-security bookworm-security main',
  '',
].join('\n');

/** An apt configuration folder with the given files (paths relative to it). */
function aptEtc(name: string, files: Record<string, string>): string {
  const etc = join(dir, name);
  mkdirSync(join(etc, 'sources.list.d'), { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(etc, path), text);
  return etc;
}

function run(args: string[], env: Record<string, string>) {
  const r = spawnSync('bash', [script, ...args], { encoding: 'utf8', env: { ...process.env, SIGNGATE_DEBIAN_MIRROR: '', ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the mirror is found in every layout of apt sources', () => {
  const layouts: [string, Record<string, string>, string][] = [
    ['deb822 only (no sources.list: a new Debian 12 machine)', { 'sources.list.d/debian.sources': DEB822 }, 'http://deb.example.org/debian'],
    ['a one-line sources.list only', { 'sources.list': ONE_LINE }, 'http://list.example.org/debian'],
    ['both: the deb822 file first', { 'sources.list.d/debian.sources': DEB822, 'sources.list': ONE_LINE }, 'http://deb.example.org/debian'],
    [
      'a .list file in sources.list.d with options and CRLF line ends',
      { 'sources.list.d/mirror.list': 'deb [arch=amd64 signed-by=/k.gpg] https://opts.example.org/debian bookworm main\r\n' },
      'https://opts.example.org/debian',
    ],
    [
      'a security archive listed before the main one',
      { 'sources.list.d/a-security.sources': SECURITY_FIRST, 'sources.list': ONE_LINE },
      'http://list.example.org/debian',
    ],
    [
      'a stanza naming two URIs',
      { 'sources.list.d/two.sources': 'Types: deb\nURIs: http://x.example.org/ubuntu http://two.example.org/debian/\nSuites: trixie\n' },
      'http://two.example.org/debian',
    ],
  ];
  test.each(layouts)('%s', (name, files, mirror) => {
    const etc = aptEtc(name.replace(/[^a-z0-9]+/gi, '-'), files);
    const r = run(['--mirror'], { SIGNGATE_APT_ETC: etc });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${mirror}\n`);
  });

  test('no sources at all: one line that says what to do, exit 1', () => {
    const etc = aptEtc('none', {});
    const r = run(['--mirror'], { SIGNGATE_APT_ETC: etc });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^wine-root: no Debian mirror found in .*none.*SIGNGATE_DEBIAN_MIRROR/);
  });

  test('an apt folder that does not exist is no silent exit either', () => {
    const r = run(['--mirror'], { SIGNGATE_APT_ETC: join(dir, 'missing') });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^wine-root: no Debian mirror found/);
  });

  test('SIGNGATE_DEBIAN_MIRROR names one outright', () => {
    const r = run(['--mirror'], { SIGNGATE_APT_ETC: join(dir, 'missing'), SIGNGATE_DEBIAN_MIRROR: 'http://named.example.org/debian' });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('http://named.example.org/debian\n');
  });
});

// Making a root needs root (debootstrap, chroot): CI runs as root, so these run there.
describe.runIf(process.getuid?.() === 0 || process.env.CI === 'true')('each failure while making the root says what failed', () => {
  /** A PATH whose debootstrap is the given shell body, in front of the machine's. */
  function withDebootstrap(body: string): string {
    const bin = mkdtempSync(join(dir, 'bin-'));
    writeFileSync(join(bin, 'debootstrap'), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, 'debootstrap'), 0o755);
    return `${bin}:${process.env.PATH}`;
  }
  const etc = () => aptEtc('fail', { 'sources.list.d/debian.sources': DEB822 });

  test('debootstrap fails: its last line and the log are named', () => {
    const root = join(dir, 'roots-a', 'wine');
    const r = run([root], {
      SIGNGATE_APT_ETC: etc(),
      PATH: withDebootstrap('echo "E: Failed getting release file http://deb.example.org/debian/dists/trixie/Release"; exit 1'),
    });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^wine-root: debootstrap trixie from http:\/\/deb\.example\.org\/debian failed \(last line: E: Failed getting release file/);
    expect(lines[0]).toContain('run this script again');
  });

  test('the apt install inside the root fails: said in one line', () => {
    // A debootstrap that leaves an empty folder: chroot then finds no shell in it.
    const root = join(dir, 'roots-b', 'wine');
    const r = run([root], { SIGNGATE_APT_ETC: etc(), PATH: withDebootstrap('mkdir -p "$3"') });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^wine-root: apt-get install wine64 inside .*roots-b\/wine failed/);
  });
});
