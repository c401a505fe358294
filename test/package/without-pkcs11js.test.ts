// `npm install` on a fresh clone builds signgate (the prepare script runs tsc) also where the optional dependency
// pkcs11js is missing: its native build needs a C++ compiler and Node's headers, which most Windows machines lack,
// and npm then leaves it out of node_modules. The sources are type-checked here against a node_modules without it.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

test('the sources build without the optional pkcs11js', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-no-pkcs11js-'));
  try {
    // A copy of the sources (tsc resolves a symbolic link to where it points, and would find the repository's
    // node_modules from there) beside a node_modules that has every installed package but pkcs11js.
    cpSync(join(repoRoot, 'src'), join(dir, 'src'), { recursive: true });
    for (const file of ['tsconfig.json', 'package.json']) cpSync(join(repoRoot, file), join(dir, file)); // "type": "module"
    mkdirSync(join(dir, 'node_modules'));
    const left = readdirSync(join(repoRoot, 'node_modules')).filter((name) => name !== 'pkcs11js' && name !== '.bin');
    for (const name of left) symlinkSync(join(repoRoot, 'node_modules', name), join(dir, 'node_modules', name), 'junction');
    expect(left).toContain('typescript');
    const tsc = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json'), '--noEmit'], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
