// An error of a command the targets run (`--from-msbuild`) is one canonical MSBuild line: its origin the file it is
// about (so Visual Studio's error list shows it on that file), else `signgate`, and its words the build's MSBuild
// properties, not the command line's options. The same command typed by hand with `--format msbuild`, and an error
// about options typed into SigngateCheckArguments, keep the options' names. The builds themselves:
// test/sdk/msbuild-diagnostics.test.ts and test/sdk/msbuild-solution.test.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixturePath, runCli } from '../helpers/fixtures.js';

const ADDIN = fixturePath('addin/SampleAddin.dll');
const KEY = fixturePath('test-keys/12345_public.snk');
/** Where no signgate.config.json is found above, and no SIGNGATE_* variable is set. */
const cwd = mkdtempSync(join(tmpdir(), 'signgate-msbuild-errors-'));
const env = { SIGNGATE_ACCESS_TOKEN: '', SIGNGATE_BASE_URL: '', SIGNGATE_CACHE_DIR: join(cwd, 'cache') };
const lines = (text: string) => text.trimEnd().split('\n');

describe('errors in a build', () => {
  test('a missing vendor or key names SigngateVendor and SigngateKey, as properties to set', () => {
    const vendor = runCli(['check', ADDIN, '--key', KEY, '--format', 'msbuild', '--from-msbuild'], { cwd, env });
    expect(vendor.status).toBe(2);
    expect(lines(vendor.stderr)).toEqual([
      'signgate : error SG_ERR_USAGE: no vendor name; hint: Set <SigngateVendor>Name</SigngateVendor> (the attribute is <Name>SignedAssemblyAttribute) or set "vendor" in signgate.config.json.',
    ]);
    const key = runCli(['check', ADDIN, '--vendor', 'Contoso', '--format', 'msbuild', '--from-msbuild'], { cwd, env });
    expect(key.status).toBe(2);
    expect(lines(key.stderr)).toEqual([
      'signgate : error SG_ERR_USAGE: no key file; hint: Set <SigngateKey>optionId_public.snk</SigngateKey> (several are allowed) or set "keys" in signgate.config.json.',
    ]);
  });

  test("the signing step's missing service address names SigngateBaseUrl, and keeps the sentence around it", () => {
    const r = runCli(['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--from-msbuild'], {
      cwd,
      env: { ...env, SIGNGATE_ACCESS_TOKEN: 'sgt_0123456789abcdef' },
    });
    expect(r.status).toBe(2);
    expect(lines(r.stderr)).toEqual([
      'signgate : error SG_ERR_USAGE: sign needs the service\'s address: no SigngateBaseUrl is given; hint: Set <SigngateBaseUrl>…/service-name/v1.0</SigngateBaseUrl> (or "baseUrl" in signgate.config.json, or SIGNGATE_BASE_URL).',
    ]);
  });

  test('an unreadable token file or key file is the error of that file', () => {
    const token = join(cwd, 'no-such-token.txt');
    const r = runCli(['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--access-token-file', token, '--from-msbuild'], { cwd, env });
    expect(r.status).toBe(3);
    expect(lines(r.stderr)).toEqual([
      `${token} : error SG_ERR_IO_READ: ${token}: the file does not exist; check the path (relative paths start at the working directory, or at the config file for paths in signgate.config.json)`,
    ]);
    const key = join(cwd, 'missing_public.snk');
    const k = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', key, '--format', 'msbuild', '--from-msbuild'], { cwd, env });
    expect(k.status).toBe(3);
    // Shown relative to the working folder, the project's in a build, which MSBuild resolves it from.
    expect(lines(k.stderr)).toHaveLength(1);
    expect(k.stderr).toMatch(/^missing_public\.snk : error SG_ERR_IO_READ: missing_public\.snk: the file does not exist/);
  });

  test('an unreadable SigngateRecordKey is the error of that file', () => {
    const record = join(cwd, 'no-such-record-key.pub');
    const r = runCli(['sign', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--record-key', record, '--from-msbuild'], {
      cwd,
      env: { ...env, SIGNGATE_ACCESS_TOKEN: 'sgt_0123456789abcdef' },
    });
    expect(r.status).toBe(2);
    expect(lines(r.stderr)).toEqual([
      `${record} : error SG_ERR_USAGE: cannot read the record public key ${record}: ENOENT; hint: Pass the file record-key.pub of the service's data directory, or the line \`signgate serve record public-key\` prints.`,
    ]);
  });

  test("fix's key is SigngateFixKey", () => {
    const r = runCli(['fix', ADDIN, '--out', join(cwd, 'fixed'), '--from-msbuild'], { cwd, env });
    expect(r.status).toBe(2);
    expect(r.stderr).not.toMatch(/--key\b/);
    expect(r.stderr).toContain('SigngateFixKey');
  });

  test('typed by hand (--format msbuild alone), and an option mistyped into SigngateCheckArguments, keep the options', () => {
    const online = [
      'check',
      ADDIN,
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--online',
      '--base-url',
      'http://127.0.0.1:9/assembly-signing/v1.0',
      '--format',
      'msbuild',
    ];
    const byHand = runCli(online, { cwd, env });
    expect(byHand.status).toBe(2);
    expect(byHand.stderr).toContain(
      'check goes online (--online, http://127.0.0.1:9/assembly-signing/v1.0) but no access token is given; hint: Pass --access-token-file <file>',
    );
    const inBuild = runCli([...online, '--from-msbuild'], { cwd, env });
    expect(lines(inBuild.stderr)).toEqual([
      'signgate : error SG_ERR_USAGE: check goes online (<SigngateCheckOnline>true</SigngateCheckOnline>, http://127.0.0.1:9/assembly-signing/v1.0) but no access token is given; hint: Set <SigngateAccessTokenFile>file</SigngateAccessTokenFile> or set SIGNGATE_ACCESS_TOKEN; or check offline: leave out <SigngateCheckOnline>true</SigngateCheckOnline> (in a build: -p:SigngateCheckOnline=false).',
    ]);
    const typo = runCli(['check', ADDIN, '--vendor', 'Contoso', '--key', KEY, '--format', 'msbuild', '--from-msbuild', '--onlin'], { cwd, env });
    expect(typo.status).toBe(2);
    expect(lines(typo.stderr)).toEqual([
      "signgate : error SG_ERR_USAGE: Unknown argument: --onlin; hint: Did you mean --online for --onlin? Run 'signgate check --help' for the options.",
    ]);
  });
});
