// Will it load? On the SDK fixtures built by the real .NET SDK for net48 and net8.0 (their project files name the
// target: the oracle for TargetFrameworkAttribute), delay-signed as built, signed with the sandbox key pair, and
// without a strong name; and in the audit's JSON, Markdown and HTML.
import { beforeAll, describe, expect, test } from 'vitest';
import { formatAuditHtml } from '../../src/report/audit-html.js';
import { formatAuditMarkdown } from '../../src/report/audit-markdown.js';
import { collectFacts } from '../../src/rules/facts.js';
import { loadsUnder, loadVerdict, targetFramework } from '../../src/rules/load.js';
import type { CheckInput } from '../../src/rules/types.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { checkPaths, defaultSettings, runCheck, buildAudit } from '../helpers/check.js';
import { fixture } from '../helpers/fixtures.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const API = fixture('sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll');
const input = (path: string, bytes: Uint8Array): CheckInput => ({ path, uploadName: path.split('/').pop()!, bytes, explicit: true });
const verdictOf = (path: string, bytes: Uint8Array) => {
  const facts = collectFacts([input(path, bytes), input('Contoso.AddinApi.dll', API)], defaultSettings());
  return loadVerdict(facts.get(path)!, defaultSettings())!;
};
const net48 = fixture('sdk/bin/net48/SampleAddin.dll');
const net8 = fixture('sdk/bin/net8.0/SampleAddin.dll');

describe('the target framework', () => {
  test('from TargetFrameworkAttribute, as the SDK wrote it for each target', () => {
    expect(targetFramework(readModule(net48))).toEqual({ moniker: '.NETFramework,Version=v4.8', kind: 'framework', source: 'attribute' });
    expect(targetFramework(readModule(net8))).toEqual({ moniker: '.NETCoreApp,Version=v8.0', kind: 'core', source: 'attribute' });
  });

  test('without the attribute (Mono mcs builds), from the core library referenced', () => {
    expect(targetFramework(readModule(fixture('addin/SampleAddin.dll')))).toEqual({ moniker: null, kind: 'framework', source: 'core-library' });
  });
});

describe('under which license it loads', () => {
  test('delay-signed for .NET Framework: neither license (Framework refuses it without sn -Vr)', () => {
    const v = verdictOf('SampleAddin.dll', net48);
    expect(v.apiProgram).toBe(true);
    expect(v.runtimeLicense).toEqual({ loads: false, why: 'delay-signed, not signed by the service' });
    expect(v.netFramework).toEqual({
      loads: false,
      why: 'delay-signed: .NET Framework refuses it unless its key is registered for verification skipping (sn -Vr *,5d004f218731cd20)',
    });
    expect(v.developerLicense.loads).toBe(false);
    expect(loadsUnder(v)).toBe('neither');
  });

  test('delay-signed for .NET 8: the developer license, as .NET does not validate strong names', () => {
    const v = verdictOf('SampleAddin.dll', net8);
    expect(v.netFramework).toBeNull();
    expect(v.runtimeLicense.loads).toBe(false);
    expect(v.developerLicense).toEqual({ loads: true, why: 'not signed by the service; .NET does not validate strong names' });
    expect(loadsUnder(v)).toBe('developer');
  });

  test('signed with the organization key pair, vendor attribute true: the runtime license only, for both targets', () => {
    for (const bytes of [net48, net8]) {
      const v = verdictOf('SampleAddin.dll', signAssembly(readModule(bytes), pair));
      expect(v.runtimeLicense).toEqual({ loads: true, why: "signed by the service with the organization's key, vendor attribute true" });
      expect(v.developerLicense.loads).toBe(false);
      expect(loadsUnder(v)).toBe('runtime');
    }
  });

  test('signed with the organization key but the vendor attribute false: not under the runtime license', () => {
    const bytes = fixture('sdk/bin/wrong-turns/AttributeFalse/WrongTurn.AttributeFalse.dll');
    const v = verdictOf('WrongTurn.AttributeFalse.dll', signAssembly(readModule(bytes), pair));
    expect(v.runtimeLicense).toEqual({ loads: false, why: 'vendor attribute false' });
    expect(v.netFramework?.loads).toBe(true);
    expect(loadsUnder(v)).toBe('developer');
  });

  test('not strong-named at all: the developer license, on .NET Framework too', () => {
    const v = verdictOf('WrongTurn.NotSigned.dll', fixture('sdk/bin/wrong-turns/NotSigned/WrongTurn.NotSigned.dll'));
    expect(v.target.kind).toBe('framework');
    expect(v.developerLicense).toEqual({ loads: true, why: 'an unsigned API program' });
    expect(loadsUnder(v)).toBe('developer');
  });

  test('public-signed and tampered signatures do not load on .NET Framework', () => {
    expect(verdictOf('WrongTurn.PublicSign.dll', fixture('sdk/bin/wrong-turns/PublicSign/WrongTurn.PublicSign.dll')).netFramework?.loads).toBe(false);
    const signed = Buffer.from(signAssembly(readModule(net48), pair));
    signed[signed.length - 1]! ^= 0xff; // the last byte is hashed content: the signature no longer matches
    const v = verdictOf('SampleAddin.dll', signed);
    expect(v.netFramework).toEqual({ loads: false, why: 'its signature does not match its bytes: .NET Framework refuses it' });
    expect(loadsUnder(v)).toBe('neither');
  });

  test('a library that uses no vendor API: no license decides; Framework still validates it', () => {
    const v = verdictOf('ThirdParty.Json.dll', fixture('addin/ThirdParty.Json.dll'));
    expect(v.apiProgram).toBe(false);
    expect(loadsUnder(v)).toBe('both');
  });
});

describe('check: a note where a file loads under neither license as built, when asked for', () => {
  test('off by default: the delay-signed build before the upload is the expected state', async () => {
    const framework = await checkPaths(['fixtures/sdk/bin/net48/SampleAddin.dll', 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll']);
    expect(framework.findings.filter((f) => f.ruleId === 'SG801')).toEqual([]);
  });

  test('SG801 on the delay-signed net48 build, with the sn -Vr command for its token; none on net8.0', async () => {
    const framework = await checkPaths(
      ['fixtures/sdk/bin/net48/SampleAddin.dll', 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll'],
      {},
      { severities: { 'loads-under-no-license': 'note' } },
    );
    const note = framework.findings.find((f) => f.ruleId === 'SG801');
    expect(note).toMatchObject({ severity: 'note', rule: 'loads-under-no-license', file: 'fixtures/sdk/bin/net48/SampleAddin.dll' });
    expect(note!.message).toContain('as built it loads under neither license (.NETFramework,Version=v4.8)');
    expect(note!.hint).toContain('sn -Vr *,5d004f218731cd20');
    expect(framework.summary.errors).toBe(0);
    const core = await checkPaths(
      ['fixtures/sdk/bin/net8.0/SampleAddin.dll', 'fixtures/sdk/bin/wrong-turns/VendorCopied/Contoso.AddinApi.dll'],
      {},
      { severities: { 'loads-under-no-license': 'note' } },
    );
    expect(core.findings.filter((f) => f.ruleId === 'SG801')).toEqual([]);
  });

  test('no note once the file is signed, and none when the rule is off', async () => {
    const signed = await runCheck([input('SampleAddin.dll', signAssembly(readModule(net48), pair)), input('Contoso.AddinApi.dll', API)], {
      settings: defaultSettings(),
      severities: { 'loads-under-no-license': 'note' },
    });
    expect(signed.findings.filter((f) => f.ruleId === 'SG801')).toEqual([]);
    const off = await runCheck([input('SampleAddin.dll', net48), input('Contoso.AddinApi.dll', API)], {
      settings: defaultSettings(),
      severities: { 'loads-under-no-license': 'off' },
    });
    expect(off.findings.filter((f) => f.ruleId === 'SG801')).toEqual([]);
  });
});

describe('the audit shows it per file and in the summary', () => {
  const inputs = [
    input('net48/SampleAddin.dll', signAssembly(readModule(net48), pair)),
    input('net8.0/SampleAddin.dll', net8),
    input('net48/Contoso.AddinApi.dll', API),
  ];
  let report: Awaited<ReturnType<typeof buildAudit>>;
  beforeAll(async () => {
    report = await buildAudit(inputs, { settings: defaultSettings() });
  });

  test('JSON: per file and counted over the API programs', () => {
    const byPath = new Map(report.files.map((f) => [f.path, f]));
    expect(byPath.get('net48/SampleAddin.dll')!.load).toMatchObject({ loadsUnder: 'runtime', target: { kind: 'framework' } });
    expect(byPath.get('net8.0/SampleAddin.dll')!.load).toMatchObject({ loadsUnder: 'developer', netFramework: null });
    expect(byPath.get('net48/Contoso.AddinApi.dll')!.load!.apiProgram).toBe(false);
    expect(report.summary.load).toEqual({ apiPrograms: 2, runtimeLicense: 1, developerLicense: 1, neither: 0, refusedByNetFramework: 0 });
  });

  test('Markdown and HTML', () => {
    const md = formatAuditMarkdown(report, null);
    expect(md).toContain('Will it load: of 2 API programs, 1 loads under the runtime license');
    expect(md).toMatch(/\| net48\/SampleAddin\.dll \|.*\| runtime license \|/);
    // The net48 build has a .NET Framework row; the net8.0 build, which .NET runs, none.
    const section = (name: string) => md.slice(md.indexOf(`### ${name}`), md.indexOf('\n\n', md.indexOf(`### ${name}`) + name.length + 6));
    expect(section('net48/SampleAddin.dll')).toContain('- .NET Framework: yes: validly signed');
    expect(section('net8.0/SampleAddin.dll')).toContain('- Target framework: .NETCoreApp,Version=v8.0');
    expect(section('net8.0/SampleAddin.dll')).not.toContain('.NET Framework');
    const html = formatAuditHtml(report, null);
    expect(html).toContain('<p id="load-summary">Will it load: of 2 API programs');
    expect(html).toContain('<dt>Developer license</dt><dd>yes: not signed by the service; .NET does not validate strong names</dd>');
  });

  test('the delay-signed Framework build in the audit: neither, counted', async () => {
    const r = await buildAudit([input('SampleAddin.dll', net48), input('Contoso.AddinApi.dll', API)], { settings: defaultSettings() });
    expect(r.summary.load).toMatchObject({ apiPrograms: 1, neither: 1, refusedByNetFramework: 1 });
  });
});
