// TypeScript types from schemas/openapi.json with openapi-typescript (npm), as docs/clients.md shows: the
// declarations and the example of docs/clients.md compile under `tsc --strict`, and what a mistake in the
// example's use of the types looks like is a type error (the types carry the document's shapes).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { repoRoot } from '../../helpers/fixtures.js';

const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);
let dir: string;

/** The TypeScript example of docs/clients.md (the first ```ts block), as a user copies it. */
function docsExample(): string {
  const doc = readFileSync(join(repoRoot, 'docs', 'clients.md'), 'utf8');
  const m = /```ts\n([\s\S]*?)```/.exec(doc);
  if (!m) throw new Error('docs/clients.md has no ```ts block');
  return m[1]!;
}

/** tsc --strict over the files; its exit code and its diagnostics ("file(line,col): error TS…"), one a line. */
function typecheck(files: string[]) {
  return spawnSync(
    bin('tsc'),
    [
      '--noEmit',
      '--strict',
      '--pretty',
      'false',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--types',
      'node',
      '--typeRoots',
      join(repoRoot, 'node_modules', '@types'),
      ...files,
    ],
    { encoding: 'utf8' },
  );
}

// The example as written (client.ts) and with a mistake (wrong.ts), type-checked in one tsc run (a run costs
// seconds): each test reads the diagnostics of its own file. Each file is a module of its own.
let checked: { status: number | null; lines: string[] };
/** A diagnostic of wrong.ts: tsc names the file relative to the working folder. */
const ofWrong = (line: string) => /(^|[/\\])wrong\.ts\(\d+,\d+\)/.test(line);
const WRONG = "\nexport const isDone = (s: JobStatus) => s.assemblies.some((a) => a.fileProcessingState === 'Done');\n";

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'signgate-openapi-ts-'));
  const r = spawnSync(bin('openapi-typescript'), [join(repoRoot, 'schemas', 'openapi.json'), '-o', join(dir, 'signing-service.d.ts')], { encoding: 'utf8' });
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  writeFileSync(join(dir, 'client.ts'), docsExample());
  writeFileSync(join(dir, 'wrong.ts'), `${docsExample()}${WRONG}`);
  const tsc = typecheck([join(dir, 'client.ts'), join(dir, 'wrong.ts')]);
  checked = { status: tsc.status, lines: `${tsc.stdout}${tsc.stderr}`.split('\n').filter((l) => l.trim()) };
});

test('the generated declarations name every operation and the shared Problem schema', () => {
  const types = readFileSync(join(dir, 'signing-service.d.ts'), 'utf8');
  for (const id of ['listLicenses', 'uploadAssemblies', 'listJobs', 'getJobStatus', 'downloadJobResult', 'deleteJob']) expect(types).toContain(`${id}: {`);
  expect(types).toMatch(/Problem: \{/);
  expect(types).toMatch(/fileProcessingState: "Pending" \| "Processing" \| "Signed" \| "Error"/);
});

test("docs/clients.md's TypeScript example compiles against them under tsc --strict", () => {
  // Every diagnostic of the run is one of wrong.ts's own (none of client.ts, none of the run as a whole).
  expect(
    checked.lines.filter((l) => !ofWrong(l)),
    checked.lines.join('\n'),
  ).toEqual([]);
});

test('a state the document does not have is a type error (the check above is not vacuous)', () => {
  expect(checked.status).not.toBe(0);
  expect(checked.lines.filter(ofWrong).join('\n')).toMatch(/TS2367.*"Done"/);
});
