// The release audit with Authenticode: per file beside the strong name, in the summary, and compared with the
// previous release (a publisher change is SG708, a broken signature SG707); osslsigncode verify is the oracle.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, osslVerify, removeTestPki, type TestPki } from '../helpers/authenticode.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';
import { schemaValidator } from '../helpers/schemas.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const NEEDS_SIGNING = [
  'SampleAddin.dll',
  'SampleAddin.Helpers.dll',
  'SampleAddin.XmlSerializers.dll',
  'Interop.SampleCom.dll',
  'AddinTool.exe',
  'de/SampleAddin.resources.dll',
];

/** The sample add-in strong-name signed as the service signs it. */
function release(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-ac-release-'));
  cpSync(fixturePath('addin'), dir, { recursive: true });
  for (const name of NEEDS_SIGNING) writeFileSync(join(dir, name), signAssembly(readModule(fixture(`addin/${name}`)), pair));
  return dir;
}

async function signInPlace(pki: TestPki, file: string): Promise<void> {
  await authenticodeSign(pki, file, `${file}.ac`);
  renameSync(`${file}.ac`, file);
}

const audit = (dir: string, ...extra: string[]) =>
  runCli(['audit', dir, '--key', KEY, '--vendor', 'Contoso', '--no-timestamp', ...extra], { env: { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') } });

interface Report {
  formatVersion: number;
  summary: { byAuthenticode: Record<string, number>; errors: number; warnings: number };
  files: { name: string; authenticode: { state: string; publisher: string | null; reason: string | null } | null }[];
  findings: { ruleId: string; severity: string; file: string | null; message: string }[];
  changes: {
    publisherChanged: string[];
    files: { name: string; regression: boolean; aspects: { aspect: string; before: string | null; after: string | null }[] }[];
  } | null;
}

describe.skipIf(!hasOsslsigncode)('audit with Authenticode', () => {
  let contoso: TestPki;
  let fabrikam: TestPki;
  let one: string;
  let two: string;
  let first: Report;
  let second: Report;
  let secondStatus: number | null;
  let previous: string;

  beforeAll(async () => {
    [contoso, fabrikam] = await Promise.all([makeTestPki('Contoso Test'), makeTestPki('Fabrikam Test')]);
    one = release();
    await signInPlace(contoso, join(one, 'SampleAddin.dll'));
    const r1 = audit(one, '--format', 'json');
    expect(r1.status, r1.stderr).toBe(0);
    first = JSON.parse(r1.stdout);
    previous = join(contoso.dir, 'release-1.json');
    writeFileSync(previous, r1.stdout);
    // Release 2: SampleAddin.dll signed by another publisher; Helpers Authenticode-signed before the strong name.
    two = release();
    await signInPlace(fabrikam, join(two, 'SampleAddin.dll'));
    await authenticodeSign(contoso, fixturePath('addin/SampleAddin.Helpers.dll'), join(contoso.dir, 'helpers-ac.dll'));
    writeFileSync(join(two, 'SampleAddin.Helpers.dll'), signAssembly(readModule(new Uint8Array(readFileSync(join(contoso.dir, 'helpers-ac.dll')))), pair));
    const r2 = audit(two, '--format', 'json', '--compare', previous);
    secondStatus = r2.status;
    second = JSON.parse(r2.stdout);
  });
  afterAll(() => {
    removeTestPki(contoso);
    removeTestPki(fabrikam);
    for (const dir of [one, two]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const file = (r: Report, name: string) => r.files.find((f) => f.name === name)!;

  test('each file shows its Authenticode state and publisher; the summary counts them', async () => {
    expect(schemaValidator('audit.schema.json')(first)).toBe(true);
    expect(first.formatVersion).toBe(4);
    expect(file(first, 'SampleAddin.dll').authenticode).toMatchObject({ state: 'valid', publisher: contoso.signerSubject });
    expect((await osslVerify(contoso, join(one, 'SampleAddin.dll'))).ok).toBe(true);
    expect(file(first, 'SampleAddin.Helpers.dll').authenticode?.state).toBe('absent');
    expect(first.summary.byAuthenticode).toEqual({ absent: 7, valid: 1 });
    expect(first.findings.filter((f) => f.ruleId === 'SG707' || f.ruleId === 'SG208')).toEqual([]);
  });

  test('a broken Authenticode signature is SG707, as osslsigncode says', async () => {
    expect((await osslVerify(contoso, join(two, 'SampleAddin.Helpers.dll'))).ok).toBe(false);
    expect(file(second, 'SampleAddin.Helpers.dll').authenticode?.state).toBe('invalid');
    const sg707 = second.findings.filter((f) => f.ruleId === 'SG707');
    expect(sg707).toHaveLength(1);
    expect(sg707[0]!.severity).toBe('error');
    expect(sg707[0]!.file).toMatch(/SampleAddin\.Helpers\.dll$/);
    expect(sg707[0]!.message).toContain('changed after Authenticode signing');
    expect(secondStatus).toBe(1);
  });

  test('a publisher change since the previous release is SG708', () => {
    expect(schemaValidator('audit.schema.json')(second)).toBe(true);
    expect(second.changes?.publisherChanged).toEqual(['SampleAddin.dll']);
    const change = second.changes!.files.find((f) => f.name === 'SampleAddin.dll')!;
    expect(change.regression).toBe(true);
    expect(change.aspects).toContainEqual({ aspect: 'publisher', before: contoso.signerSubject, after: fabrikam.signerSubject });
    const sg708 = second.findings.filter((f) => f.ruleId === 'SG708');
    expect(sg708.map((f) => [f.severity, f.message])).toEqual([
      ['warning', `Authenticode publisher ${contoso.signerSubject} in the previous release; now ${fabrikam.signerSubject}`],
    ]);
    // Helpers had no Authenticode before: gaining a (broken) one is not a publisher change.
    expect(second.changes!.files.find((f) => f.name === 'SampleAddin.Helpers.dll')?.aspects.some((a) => a.aspect === 'publisher')).toBe(false);
  });

  test('Markdown and HTML carry the same', () => {
    const md = audit(two, '--format', 'markdown', '--compare', previous).stdout;
    expect(md).toContain('By Authenticode signature: absent 6, invalid 1, valid 1.');
    expect(md).toContain(`| valid: ${fabrikam.signerSubject} |`);
    expect(md).toContain('- Authenticode publisher changed: SampleAddin.dll');
    const html = audit(two, '--format', 'html', '--compare', previous).stdout;
    expect(html).toContain('By Authenticode signature');
    expect(html).toContain('Authenticode publisher changed: <code>SampleAddin.<wbr>dll</code>');
  });

  test('--verify-report agrees with the folder, and names an Authenticode change', () => {
    const stored = join(fabrikam.dir, 'release-2.json');
    writeFileSync(stored, audit(two, '--format', 'json').stdout);
    const same = runCli(['audit', '--verify-report', stored, two]);
    expect(same.status, same.stdout + same.stderr).toBe(0);
    const report = JSON.parse(readFileSync(stored, 'utf8'));
    report.files.find((f: { name: string }) => f.name === 'SampleAddin.dll').authenticode.publisher = 'CN=Someone Else';
    writeFileSync(stored, JSON.stringify(report));
    const differs = runCli(['audit', '--verify-report', stored, two]);
    expect(differs.status).toBe(1);
    expect(differs.stdout).toMatch(/SampleAddin\.dll: authenticode in the report .*CN=Someone Else/);
  });

  test('in worker threads, with the files in shared memory, audit and check report the same signatures', () => {
    for (const dir of [one, two]) {
      const inThread = audit(dir, '--format', 'json', '--threads', '0');
      const pooled = audit(dir, '--format', 'json', '--threads', '2');
      expect(pooled.stdout).toBe(inThread.stdout);
      expect((JSON.parse(pooled.stdout) as Report).files.some((f) => f.authenticode?.state === 'valid')).toBe(true);
      const check = (threads: string) => runCli(['check', dir, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '--threads', threads]);
      const [checked, checkedPooled] = [check('0'), check('2')];
      expect(checkedPooled.stdout).toBe(checked.stdout);
      expect(checkedPooled.status).toBe(checked.status);
    }
    // SG208 reads the Authenticode signature of a file to upload: it comes back from the threads.
    expect(runCli(['check', two, '--key', KEY, '--vendor', 'Contoso', '--threads', '2']).stdout).toContain('authenticode-before-strong-name');
  });
});
