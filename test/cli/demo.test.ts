// `npm start` must keep working on a fresh clone: service, check, sign, verify and audit, all on loopback.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot, runCliAsync } from '../helpers/fixtures.js';
import { expectEveryRequiredField, expectValidSbom } from '../helpers/sbom.js';
import { startServiceProcess, stopServiceProcess } from '../helpers/service-process.js';

test('npm start: the whole story succeeds and the audit knows the signing job', async () => {
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
  // The SBOM of the signed folder: valid by the CycloneDX library's strict validator, every field TR-03183-2 v2.1
  // requires on every component, and the signing job on each assembly the service signed.
  const sbom = await expectValidSbom(readFileSync(join(repoRoot, 'out', 'demo', 'release.cdx.json'), 'utf8'));
  expectEveryRequiredField(sbom);
  const props = (c: { properties: { name: string; value: string }[] }) => Object.fromEntries(c.properties.map((p) => [p.name, p.value]));
  const signed = sbom.components.filter((c: { properties: { name: string; value: string }[] }) => props(c)['signgate:strongName:state'] === 'signed');
  expect(signed.length).toBe(6);
  for (const c of signed) expect(props(c)['signgate:job:id']).toBe(audit.files.find((f: { name: string }) => f.name === props(c)['signgate:path']).job.jobId);
  // Every command it shows runs from the clone (npx finds this package's own bin), and the hint at the end names
  // the demo's own data folder: the service it names starts on that data and takes a token made as it says.
  expect(r.stdout).not.toMatch(/^\$ signgate /m);
  expect(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).bin.signgate).toBe('./bin/signgate.js');
  const serve = /^\s*npx signgate (serve --config \S+ --data-dir (\S+))$/m.exec(r.stdout);
  const create = /^\s*npx signgate (serve token create .*)$/m.exec(r.stdout);
  expect(serve, r.stdout).not.toBeNull();
  expect(create, r.stdout).not.toBeNull();
  expect(serve![2]).toBe('out/demo/service-data');
  const made = await runCliAsync(create![1]!.split(' '));
  expect(made.status, made.stderr).toBe(0);
  const service = await startServiceProcess([...serve![1]!.split(' ').slice(1), '--port', '0'], {}, repoRoot);
  try {
    expect(service.stdout()).toContain(`data in ${join(repoRoot, 'out', 'demo', 'service-data')}`);
    const licenses = await fetch(`${service.baseUrl}/licenses`, { headers: { authorization: `Bearer ${made.stdout.trim()}` } });
    expect(licenses.status).toBe(200);
  } finally {
    await stopServiceProcess(service);
  }
});
