// schemas/openapi.json as .NET reads it: Microsoft.OpenApi (NuGet; the library under ASP.NET Core's OpenAPI support
// and Kiota), driven by tools/openapi-reader, must read it as OpenAPI 3.1 with no error and no warning, and its
// default validation rules must find nothing. Needs the .NET SDK (fails in CI without it).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';
import { buildOnce, hasDotnet, requireDotnet, run, runDotnetTests } from './dotnet.js';

const TOOL = join(repoRoot, 'tools', 'openapi-reader');
const DOCUMENT = join(repoRoot, 'schemas', 'openapi.json');

interface ReaderReport {
  specificationVersion: string | null;
  errors: string[];
  warnings: string[];
  validation: string[];
  license: string | null;
  operations: { method: string; path: string; operationId: string | null }[];
}

async function readWithMicrosoftOpenApi(file: string): Promise<ReaderReport> {
  const r = await run('dotnet', [join(TOOL, 'bin', 'Release', 'openapi-reader.dll'), file], { cwd: repoRoot });
  expect(r.status, r.output).toBe(0);
  return JSON.parse(r.output) as ReaderReport;
}

describe.runIf(runDotnetTests)('Microsoft.OpenApi reads schemas/openapi.json', () => {
  beforeAll(async () => {
    if (!hasDotnet) return; // each test then fails on requireDotnet(), as it must in CI
    const build = await buildOnce(TOOL);
    if (build.status !== 0) throw new Error(`dotnet build tools/openapi-reader failed:\n${build.output}`);
  });

  test('as OpenAPI 3.1, with no reader error or warning and no validation finding', async () => {
    requireDotnet();
    const report = await readWithMicrosoftOpenApi(DOCUMENT);
    expect(report).toMatchObject({ specificationVersion: 'OpenApi3_1', errors: [], warnings: [], validation: [], license: 'MIT' });
    // Every operation of the document, with its id, as .NET sees them.
    const doc = JSON.parse(readFileSync(DOCUMENT, 'utf8')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const expected = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, operationId: op.operationId })),
    );
    expect(report.operations).toEqual(expect.arrayContaining(expected));
    expect(report.operations).toHaveLength(expected.length);
  });

  test('reports a broken document (the check above is not vacuous)', async () => {
    requireDotnet();
    const doc = JSON.parse(readFileSync(DOCUMENT, 'utf8'));
    delete doc.info.title;
    doc.paths['/assembly-signing/v1.0/licenses'].get.responses['200'].content['application/json'].schema.type = 42;
    const file = join(mkdtempSync(join(tmpdir(), 'signgate-openapi-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const report = await readWithMicrosoftOpenApi(file);
    expect(report.errors.join('\n')).toMatch(/title/);
    expect(report.errors.join('\n')).toMatch(/schema type/i);
  });
});
