// `npm install` on a fresh clone must leave package-lock.json as committed (git status clean). npm writes
// `hasInstallScript: true` for a package that has an install script once it has the package on disk, also for one
// whose install script is implicit: a binding.gyp without an install script means `node-gyp rebuild` (pkcs11js).
// The registry's metadata does not say so, so a lock file written from it alone (`--package-lock-only`, or an
// install where the optional package did not land) lacks the flag, and every user's `npm install` adds it.
// This test holds the lock to what npm writes for the packages installed here; .ci/run also runs `npm install` on
// the clean copy and fails when the lock changes.
import { existsSync, readFileSync } from 'node:fs';
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
    if (onDisk !== (entry.hasInstallScript === true)) wrong.push(`${path}: the lock says hasInstallScript ${entry.hasInstallScript === true}, the installed package ${onDisk}`);
  }
  expect(checked).toBeGreaterThan(100);
  expect(wrong, 'npm install rewrites these entries of package-lock.json; commit the lock as `npm install` writes it').toEqual([]);
});

test('the implicit install script of a binding.gyp counts', () => {
  // pkcs11js (an optional dependency) has binding.gyp and no install script; it is the entry npm rewrote. Checked
  // apart because it is not on disk where its native build failed (no compiler), and the test above then skips it.
  expect(lock.packages['node_modules/pkcs11js']?.hasInstallScript).toBe(true);
});
