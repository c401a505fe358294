// Small untruths, each said true: the audit's format follows -o; a command missing its argument names what it takes;
// a mistyped option is named once, as typed, with the option it was meant to be; fix says a friend's loss once, when
// it happens; the summary beside SG504 says nothing is signed; a bare check asks for the inputs first; a retry line
// names its URL once; a build's summary counts in the singular when there is one; a usage hint names the command run;
// a 401 gives its advice once; SG304 for a wrong vendor namespace names the attribute's namespace.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { retryLine } from '../../src/cli/progress.js';
import { openTransport, type RetryInfo } from '../../src/service-client/http.js';
import { fixturePath, has, runCli, runCliAsync } from '../helpers/fixtures.js';
import { startServer } from '../helpers/server.js';

const KEY = fixturePath('test-keys/12345_public.snk');
const root = mkdtempSync(join(tmpdir(), 'signgate-true-messages-'));

describe('audit -o chooses the format by its extension', () => {
  const audit = (...args: string[]) => runCli(['audit', fixturePath('addin'), '--key', KEY, '--vendor', 'Contoso', '--no-timestamp', ...args], { cwd: root });

  // The add-in is delay-signed, not yet signed by the service: the audit's verdict is 1, the report is written.
  test('-o c.md is Markdown, -o c.json JSON, -o c.html and another extension HTML', () => {
    expect(audit('-o', 'c.md').stderr).toContain('markdown audit written to c.md');
    expect(readFileSync(join(root, 'c.md'), 'utf8')).toMatch(/^# /);
    expect(audit('-o', 'c.json').stderr).toContain('json audit written to c.json');
    expect(JSON.parse(readFileSync(join(root, 'c.json'), 'utf8')).files.length).toBeGreaterThan(0);
    for (const name of ['c.html', 'c.report']) {
      const r = audit('-o', name);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`html audit written to ${name}`);
      expect(readFileSync(join(root, name), 'utf8')).toMatch(/^<!DOCTYPE html>/);
    }
  });

  test('a --format that disagrees with -o is a usage error naming both; one that agrees is fine', () => {
    const r = audit('--format', 'html', '-o', 'd.md');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('error SG_ERR_USAGE: --format html and -o d.md disagree: d.md names a markdown file');
    expect(audit('--json', '-o', 'd.md').stderr).toContain('--format json and -o d.md disagree');
    expect(audit('--format', 'markdown', '-o', 'd.md').stderr).toContain('markdown audit written to d.md');
  });
});

describe('the command line', () => {
  test('bare jobs names its actions', () => {
    const r = runCli(['jobs']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('error SG_ERR_USAGE: signgate jobs needs <action>: list, status, download, delete, prune or unpin-record');
    expect(r.stderr).toContain('hint: For example: signgate jobs list');
    expect(r.stderr).not.toContain('non-option arguments');
  });

  test('--destination: did you mean --destination-path; a dashed option is named once, as typed', () => {
    const sign = runCli(['sign', fixturePath('addin'), '--destination', 'out']);
    expect(sign.status).toBe(2);
    expect(sign.stderr).toContain('error SG_ERR_USAGE: Unknown argument: --destination\n');
    expect(sign.stderr).toContain('hint: Did you mean --destination-path for --destination?');
    const check = runCli(['check', fixturePath('addin'), '--vendor-apis', 'x']);
    expect(check.stderr).toContain('error SG_ERR_USAGE: Unknown argument: --vendor-apis\n');
    expect(check.stderr).toContain('Did you mean --vendor-api for --vendor-apis?');
    expect(check.stderr).not.toContain('vendorApis');
  });

  test('bare check, no config: the missing inputs first, not the vendor', () => {
    const empty = mkdtempSync(join(tmpdir(), 'signgate-bare-'));
    const r = runCli(['check'], { cwd: empty });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('error SG_ERR_USAGE: no files to check');
    expect(r.stderr).not.toContain('vendor');
  });
});

describe('the check summary', () => {
  test('a mistyped --vendor: the summary says nothing is signed (SG504), not that files need signing and pass', () => {
    const r = runCli(['check', fixturePath('addin/SampleAddin.dll'), '--key', KEY, '--vendor', 'Contso']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('SG504 nothing-to-sign');
    const summary =
      "1 file: 1 carries an option's key (1 fail), but no file uses the vendor API (Contso.*), so nothing is signed (SG504), 0 not required; upload: none";
    expect(r.stdout).toContain(summary);
    expect(r.stdout).not.toMatch(/needs? signing/);
  });

  test('--format msbuild and github count in the singular when there is one', () => {
    const msbuild = runCli(['check', fixturePath('addin/SampleAddin.dll'), '--key', KEY, '--vendor', 'Contoso', '--format', 'msbuild']);
    expect(msbuild.stdout.trimEnd()).toBe('signgate check, 1 file, 1 needs signing (1 pass, 0 fail), 0 errors, 0 warnings, 0 notes');
    const github = runCli(['check', fixturePath('addin/SampleAddin.dll'), '--key', KEY, '--vendor', 'Contoso', '--format', 'github']);
    expect(github.stdout.trimEnd()).toBe('signgate check: 1 file, 1 needs signing (1 pass, 0 fail); 0 errors, 0 warnings, 0 notes');
  });
});

describe('a retry line', () => {
  test('names the URL once, and the service not again by its address', async () => {
    const url = 'http://127.0.0.1:8123/assembly-signing/v1.0/licenses';
    const lines: string[] = [];
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
    const refused = Object.assign(new TypeError('fetch failed'), { cause });
    const attempt = openTransport({
      baseUrl: 'http://127.0.0.1:8123/assembly-signing/v1.0',
      accessToken: 'sgt_test',
      fetch: async () => Promise.reject(refused),
      retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 1 },
      sleep: async () => {},
      onRetry: (r: RetryInfo) => lines.push(retryLine(r)),
    })('GET', url, { idempotent: true });
    await expect(attempt).rejects.toThrow(`GET ${url} failed: connection refused (ECONNREFUSED) by http://127.0.0.1:8123`);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toMatch(/^retrying GET \S+ \(connection refused \(ECONNREFUSED\) by the service: nothing listens there; .*\) in 1 ms$/);
      expect(line.split('127.0.0.1:8123').length - 1).toBe(1);
    }
  });
});

describe.skipIf(!has('mcs'))('fix and InternalsVisibleTo', () => {
  test('the note that a friend without a key loses access comes with the strong name, not again on a file left unchanged', () => {
    const folder = join(root, 'friends');
    mkdirSync(folder, { recursive: true });
    const source = '[assembly: System.Runtime.CompilerServices.InternalsVisibleTo("Lib.Tests")]\npublic class Lib { internal static int X() { return 1; } }\n';
    writeFileSync(join(folder, 'lib.cs'), source);
    execFileSync('mcs', ['-nologo', '-target:library', `-out:${join(folder, 'Lib.dll')}`, join(folder, 'lib.cs')]);
    const fix = () => runCli(['fix', 'friends', '--key', fixturePath('test-keys/other_keypair.snk'), '--in-place'], { cwd: root });
    const first = fix();
    expect(first.status, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain('friends/Lib.dll: strong-named');
    expect(first.stdout).toContain('note: InternalsVisibleTo("Lib.Tests") names an assembly that is not strong-named here');
    const second = fix();
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('friends/Lib.dll: unchanged');
    expect(second.stdout).not.toContain('note:');
  });
});

describe("a usage hint names the command that was run, never '<command>'", () => {
  test.each([
    [['check', fixturePath('addin'), '--vendr', 'Contoso'], "Run 'signgate check --help' for the options."],
    [['jobs', 'list', '--bogus'], "Run 'signgate jobs --help' for the options."],
    [['serve', 'token', 'create', '--bogus'], "Run 'signgate serve token create --help' for the options."],
    [['check', fixturePath('addin'), '--max-upload-bytes', 'lots'], "Run 'signgate check --help' for the options."],
    [['--bogus'], "Run 'signgate --help' for the commands"],
  ])('signgate %j', (args, hint) => {
    const r = runCli(args, { cwd: root });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(hint);
    expect(r.stderr).not.toContain('<command>');
  });
});

describe('a 401 gives its advice once', () => {
  test("the service's own reason for an unknown and an expired token, without a second, generic advice", async () => {
    const service = await startServer();
    try {
      const licenses = (token: string) =>
        runCliAsync(['licenses', '--base-url', service.baseUrl], { env: { SIGNGATE_ACCESS_TOKEN: token, SIGNGATE_CACHE_DIR: join(root, 'cache-401') } });
      const unknown = await licenses('sgt_unknown-to-this-service');
      expect(unknown.status).toBe(3);
      expect(unknown.stderr).toMatch(/answered 401 \(Unauthorized\): The access token is not known/);
      expect(unknown.stderr).not.toContain('the access token is missing, unknown or expired');
      const expired = await licenses(service.token('sandbox', 'ci', 1, new Date(Date.now() - 2 * 86_400_000)));
      expect(expired.status).toBe(3);
      expect(expired.stderr.match(/prolonged/gi)).toHaveLength(1);
      expect(expired.stderr.match(/create a new/gi)).toHaveLength(1);
    } finally {
      await service.close();
    }
  });
});

describe('SG304 with a --vendor-namespace the attribute is not in', () => {
  test("the fix names the attribute's own namespace, not a local declaration that does not exist", () => {
    const r = runCli(['check', fixturePath('addin/SampleAddin.dll'), '--key', KEY, '--vendor', 'Contoso', '--vendor-namespace', 'Contoso.Addins', '--json'], {
      cwd: root,
    });
    const [file] = (JSON.parse(r.stdout) as { files: { findings: { ruleId: string; message: string; hint: string }[] }[] }).files;
    const findings = file!.findings.filter((f) => f.ruleId === 'SG304');
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain('is not in the vendor namespace Contoso.Addins');
    expect(findings[0]!.hint).toContain('Contoso.AddinApi declares the attribute in the namespace Contoso: if it is the vendor');
    expect(findings[0]!.hint).toContain('--vendor-namespace Contoso');
    expect(findings[0]!.hint).not.toContain('Delete the local declaration');
  });
});
