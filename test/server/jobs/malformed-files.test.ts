// A file's own format error is that file's Error, decided once: every file of fixtures/corrupt uploaded in one job
// beside a good add-in ends Error with SG001 and the same error code `check` and `inspect` give it, in the first
// attempt, and the job finishes; the good file is signed. Only faults of the service are retried.
import { readdirSync, readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { fixturePath, runCli } from '../../helpers/fixtures.js';
import { api, startServer, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';

const corrupt = readdirSync(fixturePath('corrupt'))
  .filter((n) => n.endsWith('.dll'))
  .sort();
const logLines: string[] = [];
let server: TestServer;
beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  server = await startServer({ logger: { level: 'info', stream } });
});
afterAll(() => server?.close());

/**
 * The error code `check` (SG001) and `inspect` give each file, by path: one `check` and one `inspect` over all the
 * files (each reads every file on its own; two processes instead of two per file).
 */
function codes(files: readonly string[]): Map<string, { check: string | undefined; inspect: string | undefined }> {
  const check = runCli(['check', ...files, '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '--format', 'json']);
  const checked = (JSON.parse(check.stdout) as { files: { path: string; findings: { ruleId: string; data?: { code?: string } }[] }[] }).files;
  const inspect = runCli(['inspect', '--json', ...files]);
  const inspected = JSON.parse(inspect.stdout) as { path: string; error?: { code?: string } }[];
  expect([checked.length, inspected.length]).toEqual([files.length, files.length]);
  const byPath = new Map(files.map((file) => [file, { check: undefined as string | undefined, inspect: undefined as string | undefined }]));
  for (const f of checked) byPath.get(f.path)!.check = f.findings.find((x) => x.ruleId === 'SG001')?.data?.code;
  for (const f of inspected) byPath.get(f.path)!.inspect = f.error?.code;
  return byPath;
}

test('check never passes a file that inspect reports as malformed, and names the same error', () => {
  expect(corrupt.length).toBeGreaterThan(30);
  // Paths relative to the repository, where runCli runs the CLI: the reports name them as given.
  const all = codes(corrupt.map((name) => `fixtures/corrupt/${name}`));
  const disagree = corrupt.flatMap((name) => {
    const c = all.get(`fixtures/corrupt/${name}`)!;
    return c.inspect !== undefined && c.check !== c.inspect ? [`${name}: inspect ${c.inspect}, check ${c.check ?? 'passes it'}`] : [];
  });
  expect(disagree).toEqual([]);
  // Every file is malformed, and inspect says so of each.
  expect(corrupt.filter((name) => all.get(`fixtures/corrupt/${name}`)!.inspect === undefined)).toEqual([]);
});

test('the service ends each malformed file Error (SG001) in the first attempt and signs the good one', async () => {
  const token = server.token();
  const files = [
    { name: 'SampleAddin.dll', bytes: readFileSync(fixturePath('addin/SampleAddin.dll')) },
    ...corrupt.map((name) => ({ name, bytes: readFileSync(fixturePath(`corrupt/${name}`)) })),
  ];
  const created = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) });
  expect(created.status, await created.clone().text()).toBe(201);
  const { id } = (await created.json()) as { id: string };
  // The first attempt's wait for a retry is 2 s and the next 10 s: a job that was retried is not finished by 20 s.
  const status = await waitFinished(server, token, id, 20_000);
  const byName = new Map(status.assemblies.map((a) => [a.fileName, a]));
  expect(byName.get('SampleAddin.dll')?.fileProcessingState).toBe('Signed');
  for (const name of corrupt) {
    const file = byName.get(name)!;
    expect(file.fileProcessingState, name).toBe('Error');
    expect(file.messages.map((m) => m.message).join(' '), name).toMatch(/SG001 malformed: SG_ERR_[A-Z_]+/);
  }
  expect(logLines.filter((l) => l.includes('queued again'))).toEqual([]);
});
