// audit --record: the signing service's record (serve record export) adds to every file of the release the entry
// that returned its bytes; a file signed with the organization's key that the record does not know is SG709; a
// record whose chain does not verify is refused.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { readZip } from '../../src/zip/read-zip.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';
import { schemaValidator } from '../helpers/schemas.js';
import { api, startServer, uploadForm, waitFinished } from '../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const BY_SERVICE = ['SampleAddin.dll', 'SampleAddin.XmlSerializers.dll', 'Interop.SampleCom.dll', 'AddinTool.exe', 'de/SampleAddin.resources.dll'];
const validate = schemaValidator('audit.schema.json');

interface Report {
  formatVersion: number;
  signatureRecord: { file: string; entries: number; lastSeq: number; lastHash: string } | null;
  files: {
    name: string;
    sha256: string;
    outcome: string;
    signature: null | {
      seq: number;
      job: string;
      file: string;
      organization: string;
      user: string;
      tokenId: string | null;
      keyToken: string;
      keyLocation: string;
      signedSha256: string;
      optionId: number;
    };
  }[];
  findings: { ruleId: string; file: string | null; message: string }[];
}

describe('audit --record', () => {
  let dir: string;
  let release: string;
  let record: string;
  let job: string;
  const audit = (...extra: string[]) =>
    runCli(['audit', release, '--key', KEY, '--vendor', 'Contoso', '--no-timestamp', ...extra], { env: { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') } });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'signgate-audit-record-'));
    release = join(dir, 'release');
    // The service signs five of the add-in's files; the helper library is signed with the key elsewhere.
    const server = await startServer({ dataDir: join(dir, 'data') });
    try {
      const token = server.token();
      job = (
        await (
          await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(BY_SERVICE.map((name) => ({ name, bytes: fixture(`addin/${name}`) }))) })
        ).json()
      ).id;
      const status = await waitFinished(server, token, job);
      expect(status.assemblies.map((a) => a.fileProcessingState)).toEqual(BY_SERVICE.map(() => 'Signed'));
      const zip = await readZip(new Uint8Array(await (await api(server, `/assemblies/${job}`, token)).arrayBuffer()));
      for (const name of BY_SERVICE) {
        mkdirSync(join(release, name, '..'), { recursive: true });
        writeFileSync(join(release, name), zip.find((e) => e.name === name)!.bytes);
      }
    } finally {
      await server.close();
    }
    writeFileSync(join(release, 'SampleAddin.Helpers.dll'), signAssembly(readModule(fixture('addin/SampleAddin.Helpers.dll')), pair));
    writeFileSync(join(release, 'ThirdParty.Json.dll'), fixture('addin/ThirdParty.Json.dll'));
    record = join(dir, 'record.jsonl');
    const exported = runCli(['serve', 'record', 'export', '--data-dir', join(dir, 'data'), '-o', record]);
    expect(exported.status, exported.stderr).toBe(0);
    const checkpoint = runCli(['serve', 'record', 'checkpoint', '--data-dir', join(dir, 'data'), '-o', join(dir, 'saved.checkpoint')]);
    expect(checkpoint.status, checkpoint.stderr).toBe(0);
  }, 120_000);

  test('--checkpoint with --record-key: the record continues the checkpoint saved; one cut back is refused, naming what was found', () => {
    const key = join(dir, 'data', 'record-key.pub');
    const saved = join(dir, 'saved.checkpoint');
    const ok = audit('--record', record, '--checkpoint', saved, '--record-key', key, '--format', 'json');
    expect(ok.status, ok.stderr).not.toBe(2);
    expect((JSON.parse(ok.stdout) as Report).signatureRecord?.entries).toBe(5);
    const cut = join(dir, 'cut.jsonl');
    writeFileSync(cut, readFileSync(record, 'utf8').split('\n').slice(0, 3).join('\n') + '\n');
    const refused = audit('--record', cut, '--checkpoint', saved, '--record-key', key, '--format', 'json');
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('cut.jsonl is not a continuation of the checkpoint');
    expect(refused.stderr).toContain('holds 3 entries, fewer than the 5 of the checkpoint');
    const alone = audit('--record', record, '--checkpoint', saved, '--format', 'json');
    expect(alone.status).toBe(2);
    expect(alone.stderr).toContain('--checkpoint needs --record-key');
  });

  test('JSON: each file the service signed carries its entry; the one signed elsewhere is SG709; the report validates (format 4)', () => {
    const r = audit('--record', record, '--format', 'json');
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report.formatVersion).toBe(4);
    expect(report.signatureRecord).toMatchObject({ file: 'record.jsonl', entries: 5, lastSeq: 5 });
    for (const name of BY_SERVICE) {
      const f = report.files.find((x) => x.name === name)!;
      expect(f.signature, name).toMatchObject({
        job,
        file: name,
        organization: 'sandbox',
        user: 'ci',
        optionId: 12345,
        keyLocation: '../test-keys/12345_keypair.snk',
        signedSha256: f.sha256,
      });
      expect(f.outcome).toBe('ok');
    }
    const helper = report.files.find((x) => x.name === 'SampleAddin.Helpers.dll')!;
    expect(helper.signature).toBeNull();
    expect(helper.outcome).toBe('fail');
    const sg709 = report.findings.filter((x) => x.ruleId === 'SG709');
    expect(sg709.length).toBe(1);
    expect(sg709[0]!.file).toMatch(/SampleAddin\.Helpers\.dll$/);
    expect(sg709[0]!.message).toContain('the signature record record.jsonl (5 entries) has no entry that returned these bytes');
    // Needs no signing: not looked up.
    expect(report.files.find((x) => x.name === 'ThirdParty.Json.dll')!.signature).toBeNull();
  });

  test('Markdown and HTML name the entry of each file and the record', () => {
    const md = audit('--record', record, '--format', 'markdown').stdout;
    expect(md).toMatch(/Signature record record\.jsonl: 5 entries, chain verified up to entry 5 \(hash [0-9a-f]{64}\); 5 of the 7 files/);
    expect(md).toMatch(
      new RegExp(`- Signature record: entry \\d: signed \\S+ in job ${job} of sandbox for ci \\(token [0-9a-f]{16}\\), as SampleAddin.dll, option 12345`),
    );
    expect(md).toContain('- Signature record: no entry in record.jsonl');
    const html = audit('--record', record, '--format', 'html').stdout;
    expect(html).toContain('id="signature-record"');
    expect(html).toContain(`in job ${job} of sandbox`);
  });

  test('without --record: no signature, no SG709, signatureRecord null; --verify-report of a report made with the record agrees with the folder', () => {
    const r = audit('--format', 'json');
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.signatureRecord).toBeNull();
    expect(report.files.every((f) => f.signature === null)).toBe(true);
    const stored = join(dir, 'with-record.json');
    writeFileSync(stored, audit('--record', record, '--format', 'json').stdout);
    const verify = (...extra: string[]) =>
      runCli(['audit', '--verify-report', stored, release, ...extra], { env: { SIGNGATE_CACHE_DIR: join(dir, 'no-cache') } });
    const without = verify();
    expect(without.status).toBe(2);
    expect(without.stderr).toContain('was made with the signature record record.jsonl');
    const verified = verify('--record', record);
    expect(verified.status, verified.stdout).toBe(0);
    // Another record (one entry fewer: the chain is still whole): the entry that is gone is named.
    const shorter = join(dir, 'shorter.jsonl');
    writeFileSync(
      shorter,
      readFileSync(record, 'utf8')
        .split('\n')
        .slice(0, 4)
        .map((l) => `${l}\n`)
        .join(''),
    );
    const differs = verify('--record', shorter);
    expect(differs.status).toBe(1);
    expect(differs.stdout).toMatch(/signature record entry in the report entry 5 \([0-9a-f]{16}…\), now none/);
  });

  test('a record whose chain does not verify is refused, naming the file and the break', () => {
    const lines = readFileSync(record, 'utf8').split('\n');
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, [lines[0], lines[2], lines[3], lines[4], ''].join('\n'));
    const r = audit('--record', broken, '--format', 'json');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('broken.jsonl is not a signature record that verifies: entry 3 (line 2) follows entry 1: entry 2 is missing here');
    const torn = join(dir, 'torn.jsonl');
    writeFileSync(torn, readFileSync(record, 'utf8').slice(0, -30));
    expect(audit('--record', torn, '--format', 'json').stderr).toContain('is truncated: line 5, after entry 4, is incomplete');
    const missing = audit('--record', join(dir, 'missing.jsonl'), '--format', 'json');
    expect(missing.status).toBe(3);
    expect(missing.stderr).toContain('missing.jsonl');
  });
});
