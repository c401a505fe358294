// signgate installed the way a user installs it: `npm install --save-dev ./signgate-<version>.tgz` in a fresh
// project, dependencies from the registry as npm resolves them for a consumer (the repository's `overrides` do not
// apply there). On Node 20 (past its end of life, still supported: see the README), npm warns EBADENGINE for
// exactly the two packages that ask for Node 22, and everything works: check, and serve with its /docs page.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';

/** The packages that ask for Node 22 or later in their engines, as a consumer on Node 20 gets them. */
const NODE22_ONLY = ['content-disposition', 'cookie'];

test('a consumer install from the packed tarball: the warnings are known, check and serve work', async () => {
  const project = mkdtempSync(join(tmpdir(), 'signgate-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-addin-build', version: '1.0.0', private: true }));
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', project], { cwd: repoRoot, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  const install = spawnSync('npm', ['install', '--save-dev', '--no-audit', '--no-fund', `./${tarball}`], { cwd: project, encoding: 'utf8' });
  expect(install.status, install.stderr).toBe(0);
  const warned = [...new Set([...install.stderr.matchAll(/EBADENGINE\s+package: '(@?[^@']+)@/g)].map((m) => m[1]!))].sort();
  // On Node 20 exactly the packages known to ask for 22 are named; on 22 and later, none.
  expect(warned).toEqual(Number(process.versions.node.split('.')[0]) < 22 ? NODE22_ONLY : []);
  const cli = join(project, 'node_modules', 'signgate', 'bin', 'signgate.js');
  const check = execFileSync(
    process.execPath,
    [cli, 'check', fixturePath('addin'), '--vendor', 'Contoso', '--key', fixturePath('test-keys/12345_public.snk'), '--format', 'json'],
    { encoding: 'utf8' },
  );
  expect(JSON.parse(check).summary.errors).toBe(0);
  // serve with its documentation page (the consumer's @fastify/static and its content-disposition).
  const serveArgs = ['serve', '--config', fixturePath('server/sandbox.json'), '--data-dir', join(project, 'data'), '--port', '0'];
  const service = spawn(process.execPath, [cli, ...serveArgs], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let log = '';
      service.stdout!.on('data', (d: Buffer) => {
        log += d.toString();
        const m = /API at http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
        if (m) resolve(Number(m[1]));
      });
      service.on('exit', () => reject(new Error(`serve ended: ${log}`)));
    });
    const docs = await fetch(`http://127.0.0.1:${port}/docs/static/index.html`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  } finally {
    service.kill();
  }
});
