// The library as a user gets it: `npm pack`, unpacked into a fresh node_modules, imported by name. check, sign
// (against the reference service from 'signgate/server') and audit run through the public API only, and the
// entries signgate/reader and signgate/record resolve by name.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';

let app: string;
let packed: string[];

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'signgate-packed-'));
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', app], { cwd: repoRoot, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1)!;
  execFileSync('tar', ['xzf', join(app, tarball), '-C', app]);
  mkdirSync(join(app, 'node_modules'));
  renameSync(join(app, 'package'), join(app, 'node_modules', 'signgate'));
  // The dependencies as npm would have installed them beside the package.
  for (const dep of readdirSync(join(repoRoot, 'node_modules'))) {
    if (dep !== '.bin' && dep !== 'signgate') symlinkSync(join(repoRoot, 'node_modules', dep), join(app, 'node_modules', dep));
  }
  packed = execFileSync('tar', ['tzf', join(app, tarball)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
});

describe('the packed package', () => {
  test('ships the built library, the schemas, the docs and the licence; no tests, no fixtures', () => {
    expect(packed).toContain('package/dist/index.js');
    expect(packed).toContain('package/dist/index.d.ts');
    for (const entry of ['server-api', 'reader-api', 'record-api']) {
      expect(packed).toContain(`package/dist/${entry}.js`);
      expect(packed).toContain(`package/dist/${entry}.d.ts`);
    }
    expect(packed).toContain('package/schemas/config.schema.json');
    expect(packed.some((f) => f.startsWith('package/test/') || f.startsWith('package/fixtures/'))).toBe(false);
  });

  test('check, sign against serve, and audit through the public API', () => {
    const work = join(app, 'work');
    mkdirSync(work);
    const script = `
      import { check, sign, audit, renderAudit, checkExitCode } from 'signgate';
      import { buildServer, watchServerConfigFile } from 'signgate/server';
      import { inspectAssembly } from 'signgate/reader';
      import { verifyRecordText } from 'signgate/record';
      import { readFileSync } from 'node:fs';
      const key = ${JSON.stringify(fixturePath('test-keys/12345_public.snk'))};
      const addin = ${JSON.stringify(fixturePath('addin'))};
      const server = await buildServer({ config: watchServerConfigFile(${JSON.stringify(fixturePath('server/sandbox.json'))}).current, dataDir: 'service-data', logger: false });
      await server.listen({ port: 0, host: '127.0.0.1' });
      const baseUrl = 'http://127.0.0.1:' + server.server.address().port + server.signgate.apiPrefix;
      const accessToken = server.signgate.tokens.create('sandbox', 'ci', 1).token;
      try {
        const checked = await check({ paths: [addin], keys: [key], vendor: 'Contoso', baseUrl, accessToken });
        const signed = await sign({ paths: [addin], root: addin, keys: [key], vendor: 'Contoso', baseUrl, accessToken, destination: 'signed', pollIntervalMs: 50, deleteAfterwards: true });
        const report = await audit({ paths: ['signed'], keys: [key], vendor: 'Contoso' });
        const html = renderAudit(report, 'html', null);
        const inspected = inspectAssembly(readFileSync('signed/SampleAddin.dll'), 'SampleAddin.dll');
        const record = verifyRecordText('');
        process.stdout.write(JSON.stringify({ inspected: inspected.strongName.state, record: record.entries === 0 && record.break === undefined, check: checkExitCode(checked.result), licensed: checked.prepared.settings.licensedOptionIds, sign: signed.summary, audit: report.summary.byOutcome, html: html.startsWith('<!DOCTYPE html>') }));
      } finally {
        await server.close();
      }
    `;
    writeFileSync(join(work, 'run.mjs'), script);
    const r = spawnSync(process.execPath, ['run.mjs'], { cwd: work, encoding: 'utf8', env: { ...process.env, SIGNGATE_CACHE_DIR: join(work, 'cache') } });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.check).toBe(0);
    expect(out.inspected).toBe('signed');
    expect(out.record).toBe(true);
    expect(out.licensed).toEqual([12345, 67890]);
    expect(out.sign).toMatchObject({ uploaded: 6, verified: 6, failed: 0 });
    expect(out.audit).toMatchObject({ ok: 6, fail: 0 });
    expect(out.html).toBe(true);
  });
});
