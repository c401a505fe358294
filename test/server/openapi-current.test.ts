// schemas/openapi.json is what the service publishes: `npm run openapi` regenerates it, and this test fails
// when a route changed without it.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { buildServer } from '../../src/server/app.js';
import { parseServerConfig } from '../../src/server/server-config.js';
import { repoRoot } from '../helpers/fixtures.js';

test('schemas/openapi.json equals the document the service generates (run npm run openapi)', async () => {
  const config = parseServerConfig({ vendor: 'Contoso', organizations: [] }, repoRoot);
  const app = await buildServer({ config, dataDir: mkdtempSync(join(tmpdir(), 'signgate-openapi-')) });
  try {
    const committed = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'openapi.json'), 'utf8'));
    expect(JSON.parse(JSON.stringify(app.swagger()))).toEqual(committed);
  } finally {
    await app.close();
  }
});
