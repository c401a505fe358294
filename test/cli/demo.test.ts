// `npm start` must keep working on a fresh clone: check, sign and verify the sample add-ins.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

test('npm start: the sample add-ins pass the check, are signed and verify', () => {
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'demo.js')], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('6 need signing (6 pass, 0 fail)');
  expect(r.stdout).toContain('6 of 6 files validly signed with key token 5d004f218731cd20');
  expect(r.stdout).not.toContain('FAIL');
});
