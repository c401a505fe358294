// `npm start` must keep working on a fresh clone: service, check, sign, verify and audit, all on loopback.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

test('npm start: the whole story succeeds and the audit knows the signing job', () => {
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'demo.js')], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('6 need signing (6 pass, 0 fail)');
  expect(r.stdout).toContain('6 uploaded in 1 job(s): 6 signed and verified, 0 failed');
  expect(r.stdout).toContain('6 of 6 files validly signed with key token 5d004f218731cd20');
  expect(r.stdout).toContain('Every step succeeded.');
  // The commands it shows can be copied into a shell: an argument with a space is quoted.
  expect(r.stdout).toContain('--comment "npm start"');
  expect(r.stdout + r.stderr).not.toMatch(/sgt_[A-Za-z0-9_-]{20,}/); // the token is never printed
  const audit = JSON.parse(readFileSync(join(repoRoot, 'out', 'demo', 'audit.json'), 'utf8'));
  expect(audit.summary.byOutcome).toEqual({ ok: 6, fail: 0, 'not-required': 0 });
  expect(audit.files.every((f: { job: { jobId: string } | null }) => f.job?.jobId)).toBe(true);
}, 60_000);
