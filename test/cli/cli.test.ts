// The built CLI in a child process: JSON output against its schema, exit codes, atomic writes.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schemaValidator } from '../helpers/schemas.js';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, runCli, runMono } from '../helpers/fixtures.js';

const validate = schemaValidator('inspect.schema.json');

describe('signgate inspect --json', () => {
  let files: {
    path: string;
    managed: boolean;
    error: { code: string } | null;
    assembly: { name: string; publicKeyToken: string | null } | null;
    strongName: { state: string } | null;
    attributes: { type: string; assembly: string | null; arguments: { value: unknown }[] }[];
  }[];
  beforeAll(() => {
    const r = runCli(['inspect', '--json', 'fixtures/addin', 'fixtures/assemblies', 'fixtures/corrupt', 'fixtures/variants']);
    expect(r.status).toBe(3); // the corrupt files cannot be read
    files = JSON.parse(r.stdout);
  });

  test('the output validates against schemas/inspect.schema.json', () => {
    const ok = validate(files);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  test('paths are relative with / separators, sorted', () => {
    const paths = files.map((f) => f.path);
    expect(paths).toContain('fixtures/addin/de/SampleAddin.resources.dll');
    expect([...paths].sort()).toEqual(paths);
    expect(paths.every((p) => !p.includes('\\') && !p.startsWith('/'))).toBe(true);
  });

  test('the sample add-in: delay-signed, vendor attribute from Contoso.AddinApi with true', () => {
    const addin = files.find((f) => f.path === 'fixtures/addin/SampleAddin.dll')!;
    expect(addin.strongName!.state).toBe('delay-signed');
    const attr = addin.attributes.find((a) => a.type === 'Contoso.ContosoSignedAssemblyAttribute')!;
    expect(attr.assembly).toBe('Contoso.AddinApi');
    expect(attr.arguments).toEqual([{ type: 'bool', value: true }]);
  });

  test('unreadable files carry a typed error and no crash', () => {
    const zero = files.find((f) => f.path === 'fixtures/corrupt/zero-byte.dll')!;
    expect(zero.error!.code).toBe('SG_ERR_PE_TRUNCATED');
    const native = files.find((f) => f.path === 'fixtures/variants/native.dll')!;
    expect(native).toMatchObject({ managed: false, error: null });
  });
});

describe('exit codes', () => {
  test('inspect of good files exits 0; text output names each file', () => {
    const r = runCli(['inspect', 'fixtures/addin/SampleAddin.dll']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('fixtures/addin/SampleAddin.dll');
    expect(r.stdout).toContain('delay-signed');
    expect(r.stdout).not.toMatch(/\u001b\[/); // no colour codes when not a terminal
  });

  test('a missing input exits 3 with a hint; an unknown option exits 2', () => {
    const missing = runCli(['inspect', 'no/such/file.dll']);
    expect(missing.status).toBe(3);
    expect(missing.stderr).toContain('SG_ERR_NO_INPUT');
    expect(missing.stderr).toContain('no/such/file.dll');
    const usage = runCli(['inspect', '--frobnicate', 'fixtures/addin']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('SG_ERR_USAGE');
  });

  test('--help lists the commands and exit codes', () => {
    const r = runCli(['--help']);
    expect(r.status).toBe(0);
    for (const word of ['inspect', 'verify', 'token', 'resign', 'Exit codes', '3  unreadable input']) expect(r.stdout).toContain(word);
  });

  test('verify: 0 when all are signed with the key, 1 otherwise, 3 for unreadable files', () => {
    expect(
      runCli(['verify', 'fixtures/assemblies/signed-1024.dll', 'fixtures/assemblies/mono-resigned.dll', '--key', 'fixtures/test-keys/12345_public.snk']).status,
    ).toBe(0);
    const wrongKey = runCli(['verify', 'fixtures/assemblies/signed-other-key.dll', '--key', 'fixtures/test-keys/12345_public.snk']);
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stdout).toContain('not the expected key token 5d004f218731cd20');
    expect(runCli(['verify', 'fixtures/assemblies/delay-1024.dll']).status).toBe(1);
    expect(runCli(['verify', 'fixtures/corrupt/zero-byte.dll']).status).toBe(3);
  });

  test('verify with a glob (quoted) expands it', () => {
    const r = runCli(['verify', '--json', 'fixtures/assemblies/signed-*.dll']);
    const records = JSON.parse(r.stdout) as { path: string; valid: boolean }[];
    expect(records.map((x) => x.path)).toEqual([
      'fixtures/assemblies/signed-1024.dll',
      'fixtures/assemblies/signed-2048.dll',
      'fixtures/assemblies/signed-other-key.dll',
    ]);
    expect(records.every((x) => x.valid)).toBe(true);
    expect(r.status).toBe(0);
  });
});

describe('signgate token', () => {
  test.each([
    ['fixtures/test-keys/12345_public.snk', '5d004f218731cd20'],
    ['fixtures/test-keys/12345_keypair.snk', '5d004f218731cd20'],
    ['fixtures/assemblies/signed-2048.dll', '1ee7f56da45ef1a0'],
  ])('%s has token %s', (file, token) => {
    const r = runCli(['token', file]);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(`Public key token is ${token}`);
  });

  test.skipIf(!hasMono)('agrees with sn -t and sn -T', () => {
    expect(runMono('sn', ['-t', fixturePath('test-keys/67890_public.snk')]).stdout).toContain(
      JSON.parse(runCli(['token', '--json', 'fixtures/test-keys/67890_public.snk']).stdout).publicKeyToken,
    );
    expect(runMono('sn', ['-T', fixturePath('addin/SampleAddin.dll')]).stdout).toContain(
      JSON.parse(runCli(['token', '--json', 'fixtures/addin/SampleAddin.dll']).stdout).publicKeyToken,
    );
  });

  test('a key pair never prints private key material', () => {
    const pair = readFileSync(fixturePath('test-keys/12345_keypair.snk'));
    const r = runCli(['token', '-p', '--json', 'fixtures/test-keys/12345_keypair.snk']);
    const all = r.stdout + r.stderr;
    // prime1 starts right after the modulus (offset 148 for 1024 bits)
    expect(all).not.toContain(pair.subarray(148, 180).toString('hex'));
    expect(all).toContain('5d004f218731cd20');
  });

  test('an unsigned assembly has no token: exit 1', () => {
    expect(runCli(['token', 'fixtures/assemblies/unsigned.dll']).status).toBe(1);
  });
});

describe('signgate resign', () => {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-resign-'));

  test('signs into --output; the result verifies with our verify and Mono sn -vf', () => {
    const out = join(dir, 'Addin.dll');
    const r = runCli(['resign', 'fixtures/addin/SampleAddin.dll', '--key-pair', 'fixtures/test-keys/12345_keypair.snk', '-o', out]);
    expect(r.status, r.stderr).toBe(0);
    expect(runCli(['verify', out, '--key', 'fixtures/test-keys/12345_public.snk']).status).toBe(0);
    if (hasMono) expect(runMono('sn', ['-vf', out]).stdout).toContain('is strongnamed');
  });

  test('in place: replaces the file atomically and leaves no temporary files', () => {
    const target = join(dir, 'inplace.dll');
    copyFileSync(fixturePath('assemblies/delay-2048.dll'), target);
    expect(runCli(['resign', target, '--key-pair', 'fixtures/test-keys/67890_keypair.snk']).status).toBe(0);
    expect(readdirSync(dir).filter((f) => f.includes('signgate-tmp'))).toEqual([]);
    expect(runCli(['verify', target]).status).toBe(0);
  });

  test('refuses a key pair of another key and leaves the file untouched', () => {
    const target = join(dir, 'refused.dll');
    copyFileSync(fixturePath('assemblies/delay-1024.dll'), target);
    const before = readFileSync(target);
    const mtime = statSync(target).mtimeMs;
    const r = runCli(['resign', target, '--key-pair', 'fixtures/test-keys/other_keypair.snk']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not match');
    expect(readFileSync(target).equals(before)).toBe(true);
    expect(statSync(target).mtimeMs).toBe(mtime);
  });

  test('refuses a public key file with a clear error', () => {
    const r = runCli(['resign', 'fixtures/assemblies/delay-1024.dll', '--key-pair', 'fixtures/test-keys/12345_public.snk', '-o', join(dir, 'x.dll')]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('SG_ERR_KEY_NOT_PAIR');
    expect(r.stderr).toContain('12345_public.snk');
  });

  test('a garbage key file names the file', () => {
    const bad = join(dir, 'garbage.snk');
    writeFileSync(bad, 'not a key');
    const r = runCli(['resign', 'fixtures/assemblies/delay-1024.dll', '--key-pair', bad]);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('garbage.snk');
    expect(r.stderr).toContain('SG_ERR_KEY_BAD_BLOB');
  });
});
