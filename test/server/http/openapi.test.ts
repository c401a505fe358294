// The published OpenAPI document names every operation as client generators need it, with licence and tag texts,
// shows an example of every body, and is lint-clean under Redocly's linter (the npm package's own binary).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../../helpers/fixtures.js';

const DOCUMENT = join(repoRoot, 'schemas', 'openapi.json');
const readDocument = () => JSON.parse(readFileSync(DOCUMENT, 'utf8'));

interface Media {
  schema?: { format?: string };
  example?: unknown;
  examples?: unknown;
}
interface Operation {
  operationId?: string;
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
const operationsOf = (doc: { paths: Record<string, Record<string, Operation>> }) => Object.values(doc.paths).flatMap((item) => Object.values(item));

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
}

/** `redocly lint` with its recommended rules, as JSON; telemetry and the update check stay off (no network). */
function lint(file: string): { errors: number; warnings: number; problems: LintProblem[] } {
  const r = spawnSync(join(repoRoot, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json'], {
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  expect(r.error, String(r.error)).toBeUndefined();
  const out = JSON.parse(r.stdout) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
  // Exit code 1 exactly when there are errors.
  expect(r.status, r.stderr).toBe(out.totals.errors > 0 ? 1 : 0);
  return { errors: out.totals.errors, warnings: out.totals.warnings, problems: out.problems };
}

test('every operation has a unique operationId; the document has a licence and described tags', () => {
  const doc = readDocument();
  const operations = operationsOf(doc);
  const ids = operations.map((o) => o.operationId);
  expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(operations.length);
  expect(ids).toEqual(expect.arrayContaining(['listLicenses', 'uploadAssemblies', 'listJobs', 'getJobStatus', 'downloadJobResult', 'deleteJob']));
  expect(doc.info.license.name).toBe('MIT');
  expect(doc.tags.every((t: { description?: string }) => typeof t.description === 'string' && t.description.length > 0)).toBe(true);
});

test('every request and response body has an example, except the binary result package', () => {
  const missing: string[] = [];
  let bodies = 0;
  for (const op of operationsOf(readDocument())) {
    const media: [string, Media][] = [
      ...Object.entries(op.requestBody?.content ?? {}).map(([type, m]): [string, Media] => [`${op.operationId} request ${type}`, m]),
      ...Object.entries(op.responses).flatMap(([status, r]) =>
        Object.entries(r.content ?? {}).map(([type, m]): [string, Media] => [`${op.operationId} ${status} ${type}`, m]),
      ),
    ];
    for (const [where, m] of media) {
      if (m.schema?.format === 'binary') continue;
      bodies++;
      if (m.example === undefined && m.examples === undefined) missing.push(where);
    }
  }
  expect(missing).toEqual([]);
  expect(bodies).toBeGreaterThanOrEqual(25);
});

test('@redocly/cli lint: 0 errors and 0 warnings with the recommended rules', () => {
  const result = lint(DOCUMENT);
  expect(result.problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message}`)).toEqual([]);
  expect(result).toMatchObject({ errors: 0, warnings: 0 });
});

test('the linter does see a broken document (the check above is not vacuous)', () => {
  const doc = readDocument();
  const status = doc.paths['/assembly-signing/v1.0/assemblies/{id}/status'].get;
  status.responses['200'].content['application/json'].example.processingFinished = 'yes';
  delete status.operationId;
  const file = join(mkdtempSync(join(tmpdir(), 'signgate-openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc));
  const ruleIds = lint(file).problems.map((p) => p.ruleId);
  expect(ruleIds).toContain('no-invalid-media-type-examples');
  expect(ruleIds).toContain('operation-operationId');
});
