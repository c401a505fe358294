// Evidence that stands on its own: the report carries per file the hash, token, state and signature check,
// and the inputs (keys in full, vendor settings, tool version); `--verify-report` re-checks it against a folder.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { VERSION } from '../../src/runtime/version.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const env = (dir: string) => ({ env: { SIGNGATE_CACHE_DIR: join(dir, '..', 'no-cache') } });

describe('audit --verify-report', () => {
  let dir: string;
  let reportPath: string;
  let report: {
    tool: { version: string };
    settings: { vendor: string; vendorApi: string[]; keys: { source: string; token: string; optionId: number; publicKey: string }[] };
    jobSource: { ledger: string; found: boolean };
    files: {
      name: string;
      sha256: string;
      assembly: { publicKeyToken: string };
      strongName: { state: string; signatureValid: boolean | null; key: string };
      verdict: string;
    }[];
    findings: { ruleId: string; message: string }[];
  };
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'signgate-verify-'));
    cpSync(fixturePath('addin'), dir, { recursive: true });
    writeFileSync(join(dir, 'SampleAddin.dll'), signAssembly(readModule(fixture('addin/SampleAddin.dll')), pair));
    reportPath = join(dir, '..', `report-${process.pid}-${Date.now()}.json`);
    const r = runCli(['audit', dir, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '--no-timestamp', '-o', reportPath], env(dir));
    expect(r.status, r.stderr).toBe(1);
    report = JSON.parse(readFileSync(reportPath, 'utf8'));
  }, 60_000);

  test('the report carries the tool version, the inputs and per-file evidence', () => {
    expect(report.tool.version).toBe(VERSION);
    expect(report.settings.vendorApi).toEqual(['Contoso.*']);
    expect(report.settings.keys[0]).toMatchObject({ token: '5d004f218731cd20', optionId: 12345 });
    expect(report.settings.keys[0]!.publicKey).toBe(
      Buffer.from(fixture('test-keys/12345_public.snk')).toString('hex').slice(0, report.settings.keys[0]!.publicKey.length),
    );
    expect(report.jobSource).toEqual({ ledger: '$SIGNGATE_CACHE_DIR/jobs.json', found: false });
    const signed = report.files.find((f) => f.name === 'SampleAddin.dll')!;
    expect(signed.strongName).toMatchObject({ state: 'signed', signatureValid: true, key: 'expected' });
    expect(signed.verdict).toBe("signed by the service with the organization's key for option 12345");
    const helpers = report.files.find((f) => f.name === 'SampleAddin.Helpers.dll')!;
    expect(helpers.strongName).toMatchObject({ state: 'delay-signed', signatureValid: null, key: 'expected' });
    expect(helpers.assembly.publicKeyToken).toBe('5d004f218731cd20');
  });

  test('SG701 says what is wrong in words, not "key token …; expected validly signed with …"', () => {
    const messages = report.findings.filter((f) => f.ruleId === 'SG701').map((f) => f.message);
    expect(messages).toContain(
      'delay-signed with the right key, but never signed by the service; a release needs it signed by the service with the key of option 12345 (token 5d004f218731cd20)',
    );
  });

  test('identical: exit 0, and a re-run gives the same bytes', () => {
    const r = runCli(['audit', '--verify-report', reportPath, dir], env(dir));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /matches .*: 8 files, the same hashes, keys, strong-name states, Authenticode signatures, vendor attributes, options and findings/,
    );
    const again = join(dir, '..', `again-${process.pid}-${Date.now()}.json`);
    runCli(['audit', dir, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '--no-timestamp', '-o', again], env(dir));
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(reportPath, 'utf8'));
  }, 60_000);

  test('no key file needed: the report holds the public keys', () => {
    const elsewhere = join(dir, '..', `moved-${process.pid}.json`);
    const moved = { ...report, settings: { ...report.settings, keys: report.settings.keys.map((k) => ({ ...k, source: 'gone/12345_public.snk' })) } };
    writeFileSync(elsewhere, JSON.stringify(moved));
    expect(runCli(['audit', '--verify-report', elsewhere, dir], env(dir)).status).toBe(0);
  }, 60_000);

  test('every difference is named: a changed, a missing and an extra file; exit 1', () => {
    const changed = mkdtempSync(join(tmpdir(), 'signgate-verify-changed-'));
    cpSync(dir, changed, { recursive: true });
    writeFileSync(join(changed, 'SampleAddin.dll'), fixture('addin/SampleAddin.dll')); // the delay-signed build output
    rmSync(join(changed, 'ThirdParty.Json.dll'));
    cpSync(fixturePath('findings/passing/FindingAddin.dll'), join(changed, 'Extra.dll'));
    const r = runCli(['audit', '--verify-report', reportPath, changed], env(dir));
    expect(r.status).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/differs from .* in \d+ points:$/);
    expect(lines).toContain('  - ThirdParty.Json.dll: in the report, not in the folder');
    expect(lines).toContain('  - Extra.dll: in the folder, not in the report');
    const sha = lines.find((l) => l.startsWith('  - SampleAddin.dll: sha256 in the report'))!;
    expect(sha).toBeDefined();
    expect(lines).toContain(
      `  - SampleAddin.dll: verdict in the report "signed by the service with the organization's key for option 12345", now "delay-signed with the right key, but never signed by the service"`,
    );
    expect(lines.some((l) => l.startsWith('  - SampleAddin.dll: outcome in the report "ok", now "fail"'))).toBe(true);
  }, 60_000);

  test('a report without its inputs (format 1) is refused with a hint', () => {
    const old = join(dir, '..', `old-${process.pid}.json`);
    writeFileSync(
      old,
      JSON.stringify({ formatVersion: 1, settings: { vendor: 'Contoso', keys: [{ source: 'k', optionId: 1, token: '5d004f218731cd20' }] }, files: [] }),
    );
    const r = runCli(['audit', '--verify-report', old, dir], env(dir));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('is not an audit JSON report that records its inputs (format 1)');
  });
});
