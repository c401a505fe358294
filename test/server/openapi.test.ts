// The published OpenAPI document names every operation as client generators need it, with licence and tag texts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

test('every operation has a unique operationId; the document has a licence and described tags', () => {
  const doc = JSON.parse(readFileSync(join(repoRoot, 'schemas', 'openapi.json'), 'utf8'));
  const operations = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) => Object.values(item));
  const ids = operations.map((o) => o.operationId);
  expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(operations.length);
  expect(ids).toEqual(expect.arrayContaining(['listLicenses', 'uploadAssemblies', 'listJobs', 'getJobStatus', 'downloadJobResult', 'deleteJob']));
  expect(doc.info.license.name).toBe('MIT');
  expect(doc.tags.every((t: { description?: string }) => typeof t.description === 'string' && t.description.length > 0)).toBe(true);
});
