// Comparing two releases built in the test: what changed in the strong-name state, the vendor attribute and
// the option, in words a release manager uses; a lost signature is an error finding, not a "re-signed" file.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { compareAudits } from '../../src/audit/compare.js';
import type { AuditFile } from '../../src/audit/model.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
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
const sign = (bytes: Uint8Array) => signAssembly(readModule(bytes), pair);

/** A copy of the sample add-in with the files that need signing signed, except those named in `delaySigned`. */
function release(delaySigned: readonly string[], finding: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-release-'));
  cpSync(fixturePath('addin'), dir, { recursive: true });
  for (const name of NEEDS_SIGNING) if (!delaySigned.includes(name)) writeFileSync(join(dir, name), sign(fixture(`addin/${name}`)));
  writeFileSync(join(dir, 'FindingAddin.dll'), sign(fixture(`findings/${finding}/FindingAddin.dll`)));
  return dir;
}

const audit = (dir: string, ...extra: string[]) =>
  runCli(['audit', dir, '--key', KEY, '--vendor', 'Contoso', '--no-timestamp', ...extra], { env: { SIGNGATE_CACHE_DIR: join(dir, '..', 'no-cache') } });

describe('audit --compare on two releases', () => {
  let report: {
    changes: Record<string, string[]> & {
      files: { name: string; regression: boolean; summary: string; aspects: { aspect: string; before: string | null; after: string | null }[] }[];
    };
    findings: { ruleId: string; rule: string; severity: string; file: string; message: string }[];
  };
  let status: number | null;
  let markdown: string;
  let html: string;
  beforeAll(() => {
    const one = release([], 'passing');
    const previous = join(one, '..', `release-1-${process.pid}.json`);
    const first = audit(one, '--format', 'json');
    expect(first.status, first.stderr).toBe(0);
    writeFileSync(previous, first.stdout);
    // Release 2: Helpers is the delay-signed build output again; FindingAddin lost its vendor attribute;
    // SampleAddin.dll has new bytes with the same identity and a valid signature (the PE checksum is not
    // covered by the strong name).
    const two = release(['SampleAddin.Helpers.dll'], 'vendor-attribute-false');
    const rebuilt = Buffer.from(readFileSync(join(one, 'SampleAddin.dll')));
    rebuilt.writeUInt32LE(0x1234, 0xd8);
    writeFileSync(join(two, 'SampleAddin.dll'), rebuilt);
    const r = audit(two, '--format', 'json', '--compare', previous);
    status = r.status;
    report = JSON.parse(r.stdout);
    expect(schemaValidator('audit.schema.json')(report)).toBe(true);
    markdown = audit(two, '--format', 'markdown', '--compare', previous).stdout;
    html = audit(two, '--format', 'html', '--compare', previous).stdout;
  }, 60_000);

  test('signed → delay-signed is a lost signature, not a re-signed file', () => {
    expect(report.changes.signatureLost).toEqual(['SampleAddin.Helpers.dll']);
    expect(report.changes.resigned).toEqual(['SampleAddin.dll']);
    const helpers = report.changes.files.find((f) => f.name === 'SampleAddin.Helpers.dll')!;
    expect(helpers.regression).toBe(true);
    expect(helpers.summary).toBe('lost its signature: signed → delay-signed');
    expect(helpers.aspects.map((a) => a.aspect)).toEqual(['strong-name', 'bytes']);
  });

  test('the lost signature and the lost vendor attribute are error findings; the exit code says so', () => {
    expect(status).toBe(1);
    const lost = report.findings.find((f) => f.ruleId === 'SG704')!;
    expect(lost).toMatchObject({ rule: 'signature-lost', severity: 'error' });
    expect(lost.file).toMatch(/SampleAddin\.Helpers\.dll$/);
    expect(lost.message).toBe(
      "signed by the service with the organization's key for option 12345 in the previous release; now delay-signed with the right key, but never signed by the service",
    );
    const vendor = report.findings.find((f) => f.ruleId === 'SG705')!;
    expect(vendor.file).toMatch(/FindingAddin\.dll$/);
    expect(vendor.message).toBe('the vendor attribute was present in the previous release; now false');
    expect(report.changes.vendorAttributeChanged).toEqual(['FindingAddin.dll']);
  });

  test('Markdown and HTML say the same in words', () => {
    expect(markdown).toContain('- Lost their signature: SampleAddin.Helpers.dll');
    expect(markdown).toContain('- **regression** SampleAddin.Helpers.dll: lost its signature: signed → delay-signed');
    expect(markdown).toContain('- Re-signed (same identity and key, new bytes): SampleAddin.dll');
    expect(html).toContain(
      '<span class="regression">regression</span> <code>SampleAddin.<wbr>Helpers.<wbr>dll</code>: lost its signature: signed → delay-signed',
    );
  });
});

describe('audit --compare: a file signed for another option than in the previous release', () => {
  test('SG706 option-changed, a warning: the exit code stays 0, the message names both options', () => {
    // lib.dll: signed for option 12345 (delay-1024.dll) in release 1, for option 67890 (delay-2048.dll) in release 2.
    const one = release([], 'passing');
    writeFileSync(join(one, 'lib.dll'), sign(fixture('assemblies/delay-1024.dll')));
    const previous = join(one, '..', `release-option-${process.pid}.json`);
    const keys = ['--key', fixturePath('test-keys/67890_public.snk')];
    const first = audit(one, '--format', 'json', ...keys);
    expect(first.status, first.stderr).toBe(0);
    writeFileSync(previous, first.stdout);
    const two = release([], 'passing');
    const other = parseStrongNameKeyFile(fixture('test-keys/67890_keypair.snk'));
    writeFileSync(join(two, 'lib.dll'), signAssembly(readModule(fixture('assemblies/delay-2048.dll')), other));
    const r = audit(two, '--format', 'json', ...keys, '--compare', previous);
    const findings = (JSON.parse(r.stdout) as { findings: { ruleId: string; rule: string; severity: string; file: string; message: string }[] }).findings;
    expect(findings.filter((f) => f.ruleId.startsWith('SG70'))).toEqual([
      expect.objectContaining({
        ruleId: 'SG706',
        rule: 'option-changed',
        severity: 'warning',
        message: 'signed for option 12345 in the previous release; now for option 67890',
      }),
    ]);
    expect(findings.find((f) => f.ruleId === 'SG706')!.file).toMatch(/lib\.dll$/);
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('compareAudits, aspect by aspect', () => {
  const file = (over: Partial<AuditFile> & { state?: string; expected?: boolean; optionId?: number | null }): AuditFile =>
    ({
      name: 'A.dll',
      sha256: 'a'.repeat(64),
      assembly: { name: 'A', version: '1.0.0.0', culture: '', publicKeyToken: '5d004f218731cd20' },
      vendorAttribute: 'present',
      strongName: {
        state: over.state ?? 'signed',
        keyBits: 1024,
        hashAlgorithm: 'sha1',
        signedWithExpectedKey: over.expected ?? true,
        key: 'expected',
        signatureValid: true,
        optionId: over.optionId === undefined ? 12345 : over.optionId,
      },
      ...over,
    }) as AuditFile;

  test.each([
    [
      'delay-signed → signed',
      file({ state: 'delay-signed', expected: false }),
      file({ sha256: 'b'.repeat(64) }),
      'newlySigned',
      false,
      'now signed for release: delay-signed → signed',
    ],
    ['signed → signed, new bytes', file({}), file({ sha256: 'b'.repeat(64) }), 'resigned', false, 're-signed: same identity and key, new bytes'],
    [
      'signed → invalid signature',
      file({}),
      file({ sha256: 'b'.repeat(64), state: 'invalid-signature', expected: false }),
      'signatureLost',
      true,
      'lost its signature: signed → invalid-signature',
    ],
    ['option 12345 → 67890', file({}), file({ sha256: 'b'.repeat(64), optionId: 67890 }), 'optionChanged', false, 'option 12345 → 67890'],
    [
      'vendor attribute present → missing',
      file({}),
      file({ sha256: 'b'.repeat(64), vendorAttribute: 'missing' }),
      'vendorAttributeChanged',
      true,
      'vendor attribute present → missing',
    ],
    // A file that no longer needs the attribute (no longer uses the vendor API) has not regressed.
    [
      'vendor attribute present → not required',
      file({}),
      file({ sha256: 'b'.repeat(64), vendorAttribute: 'not-required' }),
      'vendorAttributeChanged',
      false,
      'vendor attribute present → not-required',
    ],
  ] as const)('%s', (_label, before, after, list, regression, summary) => {
    const changes = compareAudits({ files: [before] }, [after]);
    expect((changes as unknown as Record<string, string[]>)[list]).toEqual(['A.dll']);
    if (list !== 'resigned') expect(changes.resigned).toEqual([]);
    expect(changes.files[0]).toMatchObject({ regression, summary });
  });

  test('identical files are no change', () => {
    expect(compareAudits({ files: [file({})] }, [file({})]).files).toEqual([]);
  });
});
