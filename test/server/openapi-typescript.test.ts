// TypeScript types from schemas/openapi.json with openapi-typescript (npm), as docs/clients.md shows: the
// declarations and the example of docs/clients.md compile under `tsc --strict`, and what a mistake in the
// example's use of the types looks like is a type error (the types carry the document's shapes).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);
let dir: string;

/** The TypeScript example of docs/clients.md (the first ```ts block), as a user copies it. */
function docsExample(): string {
  const doc = readFileSync(join(repoRoot, 'docs', 'clients.md'), 'utf8');
  const m = /```ts\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/clients.md has no ```ts block');
  return m[1]!;
}

function typecheck(file: string) {
  return spawnSync(bin('tsc'), ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', join(repoRoot, 'node_modules', '@types'), file], { encoding: 'utf8' });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'signgate-openapi-ts-'));
  const r = spawnSync(bin('openapi-typescript'), [join(repoRoot, 'schemas', 'openapi.json'), '-o', join(dir, 'signing-service.d.ts')], { encoding: 'utf8' });
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
}, 60_000);

test('the generated declarations name every operation and the shared Problem schema', () => {
  const types = readFileSync(join(dir, 'signing-service.d.ts'), 'utf8');
  for (const id of ['listLicenses', 'uploadAssemblies', 'listJobs', 'getJobStatus', 'downloadJobResult', 'deleteJob']) expect(types).toContain(`${id}: {`);
  expect(types).toMatch(/Problem: \{/);
  expect(types).toMatch(/fileProcessingState: "Pending" \| "Processing" \| "Signed" \| "Error"/);
});

test("docs/clients.md's TypeScript example compiles against them under tsc --strict", () => {
  writeFileSync(join(dir, 'client.ts'), docsExample());
  const r = typecheck(join(dir, 'client.ts'));
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
}, 60_000);

test('a state the document does not have is a type error (the check above is not vacuous)', () => {
  const wrong = `${docsExample()}\nexport const isDone = (s: JobStatus) => s.assemblies.some((a) => a.fileProcessingState === 'Done');\n`;
  writeFileSync(join(dir, 'wrong.ts'), wrong);
  const r = typecheck(join(dir, 'wrong.ts'));
  expect(r.status).not.toBe(0);
  expect(r.stdout).toMatch(/TS2367.*"Done"/);
}, 60_000);
