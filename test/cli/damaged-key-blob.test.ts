// One damaged field of a file's public key blob is that file's finding, never a stopped run or a stalled job: for
// each damage (magic, bit length 0, 1023 and 2^20, exponent 0, cbPublicKey 65535, a 2-byte blob, the blob type, the
// hash algorithm), `check` and `audit` of a folder judge the intact file beside it, write their whole report with
// SG001 on the damaged file (naming the assembly's own key, not --key), and exit 1; the service ends the damaged file
// Error at once and signs the intact one.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCliAsync } from '../helpers/fixtures.js';
import { KEY_DAMAGES, landmarks, withDamagedKey } from '../helpers/mutator.js';
import { api, startServer, uploadForm, waitFinished, type TestServer } from '../helpers/server.js';

const marks = landmarks(readFileSync(fixturePath('addin/SampleAddin.dll')));
const intact = readFileSync(fixturePath('addin/AddinTool.exe'));
const key = fixturePath('test-keys/12345_public.snk');
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

interface Report {
  files: { path: string; outcome: string; findings: { ruleId: string; message: string; data?: { code?: string } }[] }[];
}

describe('a damaged key blob in check and audit', () => {
  test.each(KEY_DAMAGES.map((d, i) => [d.name, i] as const))('%s: SG001 on that file, the other judged, the whole report, exit 1', async (_name, i) => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-key-blob-'));
    mkdirSync(join(dir, 'release'));
    writeFileSync(join(dir, 'release', 'SampleAddin.dll'), withDamagedKey(marks, i));
    writeFileSync(join(dir, 'release', 'AddinTool.exe'), intact);
    const settings = ['--key', key, '--vendor', 'Contoso'];
    const [check, audit] = await Promise.all([
      runCliAsync(['check', 'release', ...settings, '--format', 'json'], { cwd: dir }),
      runCliAsync(['audit', 'release', ...settings, '--format', 'json', '-o', 'audit.json', '--no-timestamp'], { cwd: dir }),
    ]);
    expect(check.status, check.stderr).toBe(1);
    const report = JSON.parse(check.stdout) as Report;
    const damaged = report.files.find((f) => f.path.endsWith('SampleAddin.dll'))!;
    expect(damaged.findings.map((f) => [f.ruleId, f.data?.code])).toContainEqual(['SG001', 'SG_ERR_KEY_BAD_BLOB']);
    expect(damaged.findings.find((f) => f.ruleId === 'SG001')!.message).toContain("the assembly's own public key");
    expect(report.files.find((f) => f.path.endsWith('AddinTool.exe'))!.outcome).toBe('pass');
    expect(audit.status, audit.stderr).toBe(1);
    const written = JSON.parse(readFileSync(join(dir, 'audit.json'), 'utf8')) as { files: { path: string }[] };
    expect(written.files.map((f) => f.path.split('/').pop()).sort()).toEqual(['AddinTool.exe', 'SampleAddin.dll']);
    expect(`${check.stderr}${audit.stderr}`).not.toMatch(/SG_ERR_KEY_BAD_BLOB: RSA/);
  });
});

test('the service ends every damaged file Error (SG001) in seconds and signs the intact file beside them', async () => {
  const token = server.token();
  const files = [
    { name: 'AddinTool.exe', bytes: intact },
    ...KEY_DAMAGES.map((_, i) => ({ name: `damaged-${i}/SampleAddin.dll`, bytes: withDamagedKey(marks, i) })),
  ];
  const created = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(files) });
  expect(created.status, await created.clone().text()).toBe(201);
  const { id } = (await created.json()) as { id: string };
  // A job retried as the service's fault waits 2 s, then 10 s: 10 s is seconds, not the minutes of six attempts.
  const status = await waitFinished(server, token, id, 10_000);
  const byName = new Map(status.assemblies.map((a) => [a.fileName, a]));
  expect(byName.get('AddinTool.exe')?.fileProcessingState).toBe('Signed');
  for (let i = 0; i < KEY_DAMAGES.length; i++) {
    const file = byName.get(`damaged-${i}/SampleAddin.dll`)!;
    expect(file.fileProcessingState).toBe('Error');
    expect(file.messages.map((m) => m.message).join(' ')).toMatch(/^SG001 malformed: SG_ERR_KEY_BAD_BLOB: the assembly's own public key/);
  }
});
