// `npm install` on a fresh clone must leave package-lock.json as committed (git status clean). npm writes
// `hasInstallScript: true` for a package that has an install script once it has the package on disk, also for one
// whose install script is implicit: a binding.gyp without an install script means `node-gyp rebuild` (pkcs11js).
// The registry's metadata does not say so, so a lock file written from it alone (`--package-lock-only`, or an
// install where the optional package did not land) lacks the flag, and every user's `npm install` adds it.
// This test holds the lock to what npm writes for the packages installed here; .ci/run also runs `npm install` on
// the clean copy and fails when the lock changes.
// Other npm versions write the lock in their own format (npm 10 drops the `libc` fields npm 11 writes), so the
// project's .npmrc says save=false: `npm install` installs from the lock and never writes it back.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

interface LockEntry {
  version?: string;
  hasInstallScript?: boolean;
  link?: boolean;
}

/** Whether npm counts the installed package in `folder` as having an install script (as @npmcli/arborist does). */
export function hasInstallScript(folder: string): boolean {
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean };
  const scripts = manifest.scripts ?? {};
  if (scripts.preinstall || scripts.install || scripts.postinstall) return true;
  return manifest.gypfile !== false && existsSync(join(folder, 'binding.gyp'));
}

const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };

test('package-lock.json says hasInstallScript exactly for the installed packages that have an install script', () => {
  const wrong: string[] = [];
  let checked = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.link) continue;
    const folder = join(repoRoot, path);
    // An optional package for another platform (or one whose build failed) is not on disk: npm keeps its entry as is.
    if (!existsSync(join(folder, 'package.json'))) continue;
    checked++;
    const onDisk = hasInstallScript(folder);
    if (onDisk !== (entry.hasInstallScript === true))
      wrong.push(`${path}: the lock says hasInstallScript ${entry.hasInstallScript === true}, the installed package ${onDisk}`);
  }
  expect(checked).toBeGreaterThan(100);
  expect(wrong, 'npm install rewrites these entries of package-lock.json; commit the lock as `npm install` writes it').toEqual([]);
});

test('the implicit install script of a binding.gyp counts', () => {
  // pkcs11js (an optional dependency) has binding.gyp and no install script; it is the entry npm rewrote. Checked
  // apart because it is not on disk where its native build failed (no compiler), and the test above then skips it.
  expect(lock.packages['node_modules/pkcs11js']?.hasInstallScript).toBe(true);
});

test('npm install leaves package-lock.json as it is, also when npm would write it otherwise', () => {
  // A copy of the project's package files in which package.json asks for a wider range than the lock records (as
  // an npm of another version reads a lock differently): npm install would write the lock again, unless .npmrc says
  // save=false. --package-lock-only --offline: nothing is installed or fetched, the lock has everything.
  const dir = mkdtempSync(join(tmpdir(), 'signgate-lock-'));
  try {
    for (const file of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(join(repoRoot, file), join(dir, file));
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    expect(manifest.devDependencies.yazl).toMatch(/^\^3\.3\./);
    manifest.devDependencies.yazl = '^3.3.0';
    writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
    // Only the project's own settings: none inherited from an npm that runs this test (npm test sets npm_config_*).
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
    const npm = spawnSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
      cwd: dir,
      env,
      encoding: 'utf8',
      shell: process.platform === 'win32',
    });
    expect(npm.status, npm.stderr).toBe(0);
    expect(
      readFileSync(join(dir, 'package-lock.json'), 'utf8') === readFileSync(join(repoRoot, 'package-lock.json'), 'utf8'),
      'npm install rewrote package-lock.json: does .npmrc still say save=false?',
    ).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
