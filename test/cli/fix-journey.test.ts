// The journey README and docs/fix.md show, through the built CLI against `signgate serve` on 127.0.0.1: a
// dependency strong-named by `fix --delay-sign <option>_public.snk` goes to the service with the add-in and comes
// back validly signed; a release that still holds it delay-signed, or a dependency delay-signed with a key that is
// no option's, is an error naming the file, never a pass. The dependency is the SDK-built UnsignedLib of each target
// (fixtures/sdk/bin/unsigned-lib/<tfm>), beside the SDK-built add-in that references it.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { classifyStrongName, verifyStrongName } from '../../src/strongname/strong-name.js';
import { fixturePath, hasMono, runCliAsync, runMono } from '../helpers/fixtures.js';
import { schemaValidator } from '../helpers/schemas.js';
import { cliToken, sandboxConfigCopy, startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/service-process.js';

const OPTION_KEY = fixturePath('test-keys/12345_public.snk');
const FOREIGN_KEY = fixturePath('test-keys/other_public.snk');
const optionKey = parseStrongNameKeyFile(readFileSync(OPTION_KEY)).publicKey;
const ADDIN = 'WrongTurn.UnsignedReference.dll';
const LIB = 'UnsignedLib.dll';
const root = mkdtempSync(join(tmpdir(), 'signgate-fix-journey-'));

let service: ServiceProcess;
let env: Record<string, string>;
beforeAll(async () => {
  const config = sandboxConfigCopy();
  const dataDir = join(root, 'service-data');
  service = await startServiceProcess(['--config', config, '--data-dir', dataDir]);
  env = { SIGNGATE_ACCESS_TOKEN: await cliToken(['--config', config, '--data-dir', dataDir]), SIGNGATE_CACHE_DIR: join(root, 'cache') };
});
afterAll(async () => {
  if (service) await stopServiceProcess(service);
});

/** A build output: the SDK-built add-in and UnsignedLib (no strong name) for `tfm`, in a fresh folder below root. */
function buildOutput(name: string, tfm = 'net48'): string {
  const folder = join(root, name);
  cpSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference'), folder, { recursive: true });
  copyFileSync(fixturePath(`sdk/bin/unsigned-lib/${tfm}/${LIB}`), join(folder, LIB));
  return folder;
}

const cli = (args: string[]) => runCliAsync(args, { cwd: root, env });
const options = ['--vendor', 'Contoso', '--key', OPTION_KEY];
const json = (r: { stdout: string }) => JSON.parse(r.stdout);
const validReport = schemaValidator('report.schema.json');
const validAudit = schemaValidator('audit.schema.json');

interface ReportFile {
  path: string;
  role: string;
  needsSigning: boolean;
  outcome: string;
  findings: { ruleId: string; message: string }[];
}

describe('fix --delay-sign with the option key, then sign, then audit', () => {
  test('the delay-signed dependency is uploaded with the add-in and comes back validly signed; the audit of the result passes', async () => {
    buildOutput('journey');
    const fixed = await cli(['fix', 'journey', '--delay-sign', OPTION_KEY, '--out', 'upload']);
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain(
      'next: delay-signed files load on .NET Framework only once the service has signed them: signgate sign uploads them with the add-in',
    );
    expect(classifyStrongName(readModule(readFileSync(join(root, 'upload', LIB)))).state).toBe('delay-signed');

    const checked = await cli(['check', 'upload', ...options, '--format', 'json']);
    expect(checked.status, checked.stdout).toBe(0);
    expect(validReport(json(checked)), JSON.stringify(validReport.errors)).toBe(true);
    const lib = (json(checked).files as ReportFile[]).find((f) => f.path === `upload/${LIB}`)!;
    expect(lib).toMatchObject({ role: 'option-key', needsSigning: true, outcome: 'pass' });
    expect(json(checked).uploadSet.files).toEqual([`upload/${LIB}`, `upload/${ADDIN}`]);

    const signed = await cli([
      'sign',
      'upload',
      '--root',
      'upload',
      ...options,
      '--base-url',
      service.baseUrl,
      '--destination-path',
      'signed',
      '--poll-interval',
      '50',
      '--json',
    ]);
    expect(signed.status, signed.stdout + signed.stderr).toBe(0);
    expect(json(signed).summary).toMatchObject({ files: 2, uploaded: 2, signed: 2, verified: 2, failed: 0, notUploaded: 0 });
    for (const name of [LIB, ADDIN]) {
      expect(verifyStrongName(readModule(readFileSync(join(root, 'signed', name))), { expectedKey: optionKey }).valid, name).toBe(true);
      if (hasMono) expect(runMono('sn', ['-q', '-vf', join(root, 'signed', name)]).status, `sn -vf ${name}`).toBe(0);
    }

    const audited = await cli(['audit', 'signed', ...options, '--format', 'json', '--no-timestamp']);
    expect(audited.status, audited.stdout).toBe(0);
    const report = json(audited);
    expect(validAudit(report), JSON.stringify(validAudit.errors)).toBe(true);
    expect(report.summary.errors).toBe(0);
    expect(report.files.map((f: { path: string; strongName: { signedWithExpectedKey: boolean } }) => [f.path, f.strongName.signedWithExpectedKey])).toEqual([
      [`signed/${LIB}`, true],
      [`signed/${ADDIN}`, true],
    ]);
  });

  test('a release that ships the dependency as fix left it (delay-signed) fails the audit, naming it', async () => {
    buildOutput('partial');
    expect((await cli(['fix', 'partial', '--delay-sign', OPTION_KEY, '--out', 'partial-upload'])).status).toBe(0);
    // The signed add-in copied over the build output; the dependency stays as fix wrote it.
    const release = join(root, 'partial-release');
    mkdirSync(release);
    copyFileSync(join(root, 'partial-upload', LIB), join(release, LIB));
    const signed = await cli([
      'sign',
      join('partial-upload', ADDIN),
      '--root',
      'partial-upload',
      ...options,
      '--base-url',
      service.baseUrl,
      '--destination-path',
      'partial-signed',
      '--poll-interval',
      '50',
    ]);
    expect(signed.status, signed.stdout + signed.stderr).toBe(0);
    copyFileSync(join(root, 'partial-signed', ADDIN), join(release, ADDIN));
    const audited = await cli(['audit', 'partial-release', ...options, '--format', 'json', '--no-timestamp']);
    expect(audited.status).toBe(1);
    const findings = json(audited).findings as { ruleId: string; file: string; message: string }[];
    expect(findings.filter((f) => f.file === `partial-release/${LIB}`).map((f) => f.ruleId)).toEqual(['SG701']);
    expect(findings.find((f) => f.ruleId === 'SG701')!.message).toContain('delay-signed with the right key, but never signed by the service');
    expect(findings.filter((f) => f.file === `partial-release/${ADDIN}`)).toEqual([]);
  });
});

describe("a dependency delay-signed with a key that is no option's: nobody signs it", () => {
  test.each([
    ['net48', '.NETFramework,Version=v4.8', true],
    ['netstandard2.0', '.NETStandard,Version=v2.0', true],
    ['net8.0', '.NETCoreApp,Version=v8.0', false],
  ])('%s: check and audit report SG802 on it when .NET Framework loads it (%s): %s', async (tfm, moniker, refused) => {
    const folder = `foreign-${tfm}`;
    buildOutput(folder, tfm);
    const fixed = await cli(['fix', folder, '--delay-sign', FOREIGN_KEY, '--in-place']);
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(0);

    const checked = await cli(['check', folder, ...options, '--format', 'json']);
    expect(checked.status, checked.stdout).toBe(refused ? 1 : 0);
    const lib = (json(checked).files as ReportFile[]).find((f) => f.path === `${folder}/${LIB}`)!;
    expect(lib).toMatchObject({ role: 'not-required', needsSigning: false, outcome: refused ? 'fail' : 'not-required' });
    expect(lib.findings.map((f) => f.ruleId)).toEqual(refused ? ['SG802'] : []);
    expect(json(checked).uploadSet.files).toEqual([`${folder}/${ADDIN}`]);
    if (refused) {
      expect(lib.findings[0]!.message).toContain(`targets ${moniker}`);
      expect(lib.findings[0]!.message).toContain(
        'delay-signed with key token e23f4a685de2576b, which is not the key of a configured option, so the service will not sign it',
      );
      const text = await cli(['check', folder, ...options]);
      expect(text.stdout).toContain(`FAIL ${folder}/${LIB}`);
      expect(text.stdout).toContain(`signgate fix ${folder} --key <pair.snk> --in-place`);
    }

    const audited = await cli(['audit', folder, ...options, '--format', 'json', '--no-timestamp']);
    const file = (json(audited).files as ReportFile[]).find((f) => f.path === `${folder}/${LIB}`)!;
    expect(file.findings.map((f) => f.ruleId)).toEqual(refused ? ['SG802'] : []);
    expect(file.outcome).toBe(refused ? 'fail' : 'not-required');
  });
});
