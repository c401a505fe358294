// The SDK fixtures are reproducible: fixtures/scripts/build-sdk-fixtures.sh, run with `dotnet build` in a fresh
// temporary folder, gives the committed bytes of fixtures/sdk/bin, file for file (fixtures/sdk/manifest.json).
// A whole solution's build (a few minutes): in `npm run test:sdk`, not in `npm test`. Needs the .NET SDK (fails
// in CI without it).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { requireDotnet, run, runDotnetTests } from './dotnet.js';
import { listFiles, manifest, sha256 } from './sdk-manifest.js';

describe.runIf(runDotnetTests)('determinism: a rebuild with dotnet gives the committed bytes', () => {
  test('build-sdk-fixtures.sh in a fresh temporary folder reproduces every file of the manifest', async () => {
    requireDotnet();
    const sdk = (await run('dotnet', ['--version'], { cwd: fixturePath('sdk') })).output.trim();
    expect(sdk, `the manifest was made with SDK ${manifest.sdk}; rebuild with: bash fixtures/scripts/build-sdk-fixtures.sh`).toBe(manifest.sdk);
    const out = join(mkdtempSync(join(tmpdir(), 'signgate-sdk-rebuild-')), 'bin');
    const r = await run('bash', [join(repoRoot, 'fixtures/scripts/build-sdk-fixtures.sh'), out], { cwd: repoRoot });
    expect(r.status, r.output).toBe(0);
    const rebuilt = listFiles(out).map((file) => ({ file: `bin/${file}`, sha256: sha256(join(out, file)) }));
    expect(rebuilt).toEqual(manifest.files);
  }, 900_000);
});
