// deploy/signgate.service and deploy/Containerfile: the unit as systemd reads it (`systemd-analyze verify` over a root that holds the system's units and
// the executable the unit starts, so every key, value and reference is checked (a value systemd cannot parse is a
// warning it prints, so the unit must verify without a word), and ExecStart names only options `serve` has.
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot, runCli } from '../helpers/fixtures.js';

const UNIT = join(repoRoot, 'deploy', 'signgate.service');
const hasAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;
if (process.env.CI && !hasAnalyze) throw new Error('CI is set but systemd-analyze is not installed; .ci/run must apt-get install systemd');

/** systemd-analyze verify of a unit's text in a root with the system's units and the unit's executable. */
function verify(text: string, withExecutable = true): { status: number | null; output: string } {
  const root = mkdtempSync(join(tmpdir(), 'signgate-systemd-'));
  cpSync('/usr/lib/systemd/system', join(root, 'usr/lib/systemd/system'), { recursive: true });
  // ExecStart's executable (signgate), and the system's own that other Exec lines name (ExecReload's /bin/kill).
  const executables = [...text.matchAll(/^Exec\w+=(\S+)/gm)].map((m) => m[1]!).filter((e, i) => withExecutable || i > 0);
  for (const executable of executables) {
    mkdirSync(join(root, executable, '..'), { recursive: true });
    writeFileSync(join(root, executable), '#!/bin/sh\nexit 0\n');
    chmodSync(join(root, executable), 0o755);
  }
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(join(root, 'etc/systemd/system/signgate.service'), text);
  const r = spawnSync('systemd-analyze', ['verify', `--root=${root}`, '/etc/systemd/system/signgate.service'], { encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

describe.runIf(hasAnalyze || process.env.CI)('deploy/signgate.service', () => {
  const text = readFileSync(UNIT, 'utf8');

  test('systemd-analyze verify accepts it without a word', () => {
    expect(verify(text)).toEqual({ status: 0, output: '' });
  });

  test('the check is real: a value systemd cannot parse, and an executable that is not there, are said', () => {
    expect(verify(text.replace('Restart=on-failure', 'Restart=sometimes')).output).toMatch(/signgate\.service:\d+: Failed to parse service restart specifier/);
    const missing = verify(text, false);
    expect(missing.status).not.toBe(0);
    expect(missing.output).toContain('Command /usr/local/bin/signgate is not executable');
  });

  test('ExecStart names only options serve has, the stop is the graceful one (SIGTERM) with time to drain, a reload is SIGHUP', () => {
    const exec = /^ExecStart=\S+ (.*)$/m.exec(text)![1]!.split(/\s+/);
    expect(exec[0]).toBe('serve');
    const help = runCli(['serve', '--help']).stdout;
    for (const option of exec.filter((a) => a.startsWith('--'))) expect(help, option).toContain(option);
    expect(text).toMatch(/^KillSignal=SIGTERM$/m);
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(text)![1])).toBeGreaterThanOrEqual(30);
    expect(text).toMatch(/^ReadWritePaths=\/var\/lib\/signgate$/m);
    // systemctl reload: the signal that reads server.json again (test/server/reload.test.ts).
    expect(text).toMatch(/^ExecReload=\/bin\/kill -HUP \$MAINPID$/m);
  });
});

describe('deploy/Containerfile', () => {
  const text = readFileSync(join(repoRoot, 'deploy', 'Containerfile'), 'utf8');

  test('it copies the executable build-sea.js makes, runs as a user of its own, and starts serve with options serve has', () => {
    const sea = readFileSync(join(repoRoot, 'scripts', 'build-sea.js'), 'utf8');
    const copied = /^COPY (\S+) \/usr\/local\/bin\/signgate$/m.exec(text)?.[1];
    expect(copied).toBe('signgate-linux-x64');
    expect(sea).toContain(`output: '${copied}'`);
    expect(/^USER (\S+)$/m.exec(text)?.[1]).toBe('signgate');
    expect(text).toMatch(/^STOPSIGNAL SIGTERM$/m);
    const entry = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(text)![1]!) as string[];
    expect(entry.slice(0, 2)).toEqual(['/usr/local/bin/signgate', 'serve']);
    const help = runCli(['serve', '--help']).stdout;
    for (const option of entry.filter((a) => a.startsWith('--'))) expect(help, option).toContain(option);
    // The data directory is the volume, and it is the one serve is given.
    expect(text).toContain('VOLUME ["/var/lib/signgate"]');
    expect(entry[entry.indexOf('--data-dir') + 1]).toBe('/var/lib/signgate');
  });
});
