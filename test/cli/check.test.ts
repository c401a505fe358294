// `signgate check` through the built CLI: formats, configuration, exit codes, and the licenses cross-check
// against a real HTTP server on loopback.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { schemaValidator } from '../helpers/schemas.js';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repoRoot, runCli, runCliAsync } from '../helpers/fixtures.js';

const KEY = 'fixtures/test-keys/12345_public.snk';
const base = ['check', '--key', KEY, '--vendor', 'Contoso'];

/** Microsoft's SARIF validator from npm (a self-contained binary per platform; no .NET install needed). */
const SARIF_MULTITOOL: string = createRequire(import.meta.url)('@microsoft/sarif-multitool');

interface SarifValidation {
  readonly errors: string[];
  readonly warnings: string[];
}

/**
 * Runs `Sarif.Multitool validate` (JSON schema plus the SARIF SDK's rules) over a log and reads its findings from
 * the SARIF log it writes; the tool exits 0 whatever it finds, so its own output is the verdict.
 */
function validateSarif(text: string): SarifValidation {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-sarif-'));
  const input = join(dir, 'report.sarif');
  const output = join(dir, 'validation.sarif');
  writeFileSync(input, text);
  const r = spawnSync(SARIF_MULTITOOL, ['validate', input, '--output', output, '--log', 'ForceOverwrite', '--quiet'], { encoding: 'utf8' });
  expect(r.status, `${r.error ?? ''}${r.stdout}${r.stderr}`).toBe(0);
  const log = JSON.parse(readFileSync(output, 'utf8'));
  expect(log.runs[0].invocations[0].executionSuccessful).toBe(true);
  const results = (log.runs[0].results ?? []) as { ruleId: string; level?: string; message: { arguments?: string[] } }[];
  const show = (x: (typeof results)[number]) => `${x.ruleId} ${(x.message.arguments ?? []).join(' ')}`;
  return {
    errors: results.filter((x) => x.level === 'error').map(show),
    // SARIF's default level is warning.
    warnings: results.filter((x) => (x.level ?? 'warning') === 'warning').map(show),
  };
}

describe('report formats', () => {
  test('json validates against schemas/report.schema.json', () => {
    const r = runCli([...base, 'fixtures/addin', 'fixtures/findings', '--format', 'json']);
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout);
    const validate = schemaValidator('report.schema.json');
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    const addin = report.files.find((f: { path: string }) => f.path === 'fixtures/addin/SampleAddin.dll');
    // Passing, with no finding: that the delay-signed build loads under no license until it is signed is reported
    // only when asked for (--rule loads-under-no-license=note).
    expect(addin).toMatchObject({ needsSigning: true, outcome: 'pass', findings: [] });
    expect(report.summary.errors).toBeGreaterThan(10);
  });

  test("sarif passes Microsoft's SARIF validator with no error and no warning", () => {
    const r = runCli([...base, 'fixtures/findings', 'fixtures/corrupt', '--format', 'sarif']);
    const log = JSON.parse(r.stdout);
    expect(validateSarif(r.stdout)).toEqual({ errors: [], warnings: [] });
    const run = log.runs[0];
    expect(run.tool.driver.rules.map((x: { id: string }) => x.id)).toContain('SG301');
    expect(run.originalUriBaseIds['%SRCROOT%']).toBeDefined();
    const slot = run.results.find((x: { ruleId: string }) => x.ruleId === 'SG206');
    expect(slot.locations[0].physicalLocation.artifactLocation).toMatchObject({ uriBaseId: '%SRCROOT%' });
    expect(slot.locations[0].physicalLocation.region).toMatchObject({ byteOffset: expect.any(Number), byteLength: 64 });
    expect(slot.level).toBe('error');
    // A finding about the whole file covers all of its bytes.
    const whole = run.results.find((x: { ruleId: string }) => x.ruleId === 'SG301');
    const uri = whole.locations[0].physicalLocation.artifactLocation.uri;
    const artifact = run.artifacts.find((a: { location: { uri: string } }) => a.location.uri === uri);
    expect(whole.locations[0].physicalLocation.region).toEqual({ byteOffset: 0, byteLength: artifact.length });
  });

  test('sarif regions point at the bytes a finding is about: key blob, attribute row, reference row', () => {
    const r = runCli([...base, 'fixtures/findings', '--format', 'sarif']);
    const results = JSON.parse(r.stdout).runs[0].results as {
      ruleId: string;
      properties?: { data?: { token?: string } };
      locations: { physicalLocation: { artifactLocation: { uri: string }; region: { byteOffset: number; byteLength: number } } }[];
    }[];
    const bytesOf = (x: (typeof results)[number]) => {
      const { artifactLocation, region } = x.locations[0]!.physicalLocation;
      return readFileSync(join(repoRoot, decodeURI(artifactLocation.uri))).subarray(region.byteOffset, region.byteOffset + region.byteLength);
    };
    // wrong-key: the region is the public key blob, so its token (SHA-1, last 8 bytes reversed) is the one reported.
    const wrongKey = results.filter((x) => x.ruleId === 'SG205');
    expect(wrongKey.length).toBeGreaterThan(0);
    for (const x of wrongKey) {
      const token = Buffer.from(createHash('sha1').update(bytesOf(x)).digest().subarray(-8))
        .reverse()
        .toString('hex');
      expect(token).toBe(x.properties?.data?.token);
    }
    // vendor-attribute-false, -wrong-type: a CustomAttribute row whose Parent (HasCustomAttribute, tag 14) is
    // Assembly row 1, i.e. the attribute on the assembly.
    for (const id of ['SG302', 'SG303']) {
      const x = results.find((y) => y.ruleId === id)!;
      expect(bytesOf(x).readUInt16LE(0), id).toBe((1 << 5) | 14);
    }
    // unsigned-reference: an AssemblyRef row with an empty PublicKeyOrToken (its blob index, after the 12 bytes of
    // version and flags, is 0).
    const reference = results.find((x) => x.ruleId === 'SG401')!;
    expect(bytesOf(reference).readUInt16LE(12)).toBe(0);
  });

  test('the SARIF validator does report a broken log (the check above is not vacuous)', () => {
    const broken = { version: '2.1.0', runs: [{ tool: { driver: {} }, results: [{ message: {} }] }] };
    expect(validateSarif(JSON.stringify(broken)).errors.length).toBeGreaterThan(0);
  });

  test('junit is well-formed XML with one failure per failing file', () => {
    const r = runCli([...base, 'fixtures/findings', '--format', 'junit']);
    expect(XMLValidator.validate(r.stdout)).toBe(true);
    const xml = new XMLParser({ ignoreAttributes: false }).parse(r.stdout);
    const suite = xml.testsuites.testsuite;
    const cases = suite.testcase as { '@_name': string; failure?: unknown }[];
    const failing = cases.filter((c) => c.failure).map((c) => c['@_name']);
    expect(failing).toContain('fixtures/findings/vendor-attribute-false/FindingAddin.dll');
    expect(failing).not.toContain('fixtures/findings/passing/FindingAddin.dll');
    expect(Number(suite['@_failures'])).toBe(failing.length);
  });

  test('text: grouped by file, no colour codes when not a terminal, --output writes atomically', () => {
    const r = runCli([...base, 'fixtures/findings/vendor-attribute-false']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('FAIL fixtures/findings/vendor-attribute-false/FindingAddin.dll');
    expect(r.stdout).toContain('SG302 vendor-attribute-false');
    expect(r.stdout).toContain('fix: ');
    expect(r.stdout).not.toMatch(/\u001b\[/);
    const out = join(mkdtempSync(join(tmpdir(), 'signgate-out-')), 'report.sarif');
    const w = runCli([...base, 'fixtures/addin', '--format', 'sarif', '-o', out]);
    expect(w.status).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).version).toBe('2.1.0');
    expect(w.stderr).toContain('sarif report written to');
  });
});

describe('configuration', () => {
  test('signgate.config.json is found from the working directory upward; paths are relative to it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-config-'));
    writeFileSync(
      join(dir, 'signgate.config.json'),
      JSON.stringify({
        vendor: 'Contoso',
        keys: [join(repoRoot, KEY)],
        paths: [join(repoRoot, 'fixtures/findings/missing-vendor-attribute')],
        rules: { 'missing-vendor-attribute': 'warning' },
      }),
    );
    mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
    const r = runCli(['check'], { cwd: join(dir, 'deep', 'er') });
    expect(r.stdout).toContain('warning SG301');
    expect(r.status).toBe(0);
  });

  test('a bad key gets a message naming the key and what is allowed; exit 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-config-'));
    writeFileSync(join(dir, 'signgate.config.json'), JSON.stringify({ vendor: 'Contoso', keyz: ['x'], format: 'xml' }));
    const r = runCli(['check', 'x'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('SG_ERR_CONFIG');
    expect(r.stderr).toContain('unknown key "keyz"');
    expect(r.stderr).toContain('format must be one of "text", "json", "sarif", "junit"');
  });

  test('an unknown rule name in the config is refused with the list of rules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-config-'));
    writeFileSync(join(dir, 'signgate.config.json'), JSON.stringify({ rules: { SG999: 'off' } }));
    const r = runCli(['check', '--vendor', 'Contoso', '--key', join(repoRoot, KEY), join(repoRoot, 'fixtures/addin')], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('rules.SG999 is not a rule');
    expect(r.stderr).toContain('SG301 missing-vendor-attribute');
  });

  test('missing vendor or key is a usage error with a hint', () => {
    const r = runCli(['check', 'fixtures/addin', '--key', KEY], { cwd: repoRoot });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--vendor');
  });
});

describe('licenses cross-check against a real server on loopback', () => {
  const TOKEN = 'sg_test_3b9c0f1e2d4a5b6c7d8e9f00';
  let server: Server;
  let baseUrl: string;
  let licenses: unknown = [{ optionId: 12345 }];
  let status = 200;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization === `Bearer ${TOKEN}` ? 'auth-ok' : 'auth-bad'}`);
      if (req.url !== '/assembly-signing/v1.0/licenses') {
        res.writeHead(404).end();
        return;
      }
      if (status !== 200) {
        res
          .writeHead(status, { 'content-type': 'application/problem+json' })
          .end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status, detail: 'The token has expired.' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(licenses));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    baseUrl = `http://127.0.0.1:${address.port}/assembly-signing/v1.0`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const online = (extra: string[] = []) => runCliAsync([...base, 'fixtures/addin', '--base-url', baseUrl, ...extra], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } });

  test('a licensed option passes and the request carried the token', async () => {
    licenses = [{ optionId: 12345, name: 'ignored' }, { optionId: '67890' }];
    status = 200;
    const r = await online();
    expect(r.status).toBe(0);
    expect(seen.at(-1)).toBe('GET /assembly-signing/v1.0/licenses auth-ok');
    expect(r.stdout).not.toContain('offline');
  });

  test('an option the organization does not hold: option-not-licensed', async () => {
    licenses = [{ optionId: 67890 }];
    const r = await online(['--format', 'json']);
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout);
    expect(report.uploadSet.findings.map((f: { rule: string }) => f.rule)).toEqual(['option-not-licensed']);
    expect(report.settings.online).toBe(true);
  });

  test('an empty list: no-license', async () => {
    licenses = [];
    const r = await online(['--format', 'json']);
    expect(JSON.parse(r.stdout).uploadSet.findings.map((f: { rule: string }) => f.rule)).toEqual(['no-license']);
  });

  test('401: exit 3, advice to create a new token, and the token is never printed', async () => {
    status = 401;
    const r = await online();
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('401');
    expect(r.stderr).toContain('create a new token');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
    status = 200;
  });

  test('an unreachable service: exit 3 with a clear message', () => {
    const r = runCli([...base, 'fixtures/addin', '--base-url', 'http://127.0.0.1:1/assembly-signing/v1.0'], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('SG_ERR_HTTP_UNREACHABLE');
  });

  test('plain HTTP to another host is refused before any request', () => {
    const r = runCli([...base, 'fixtures/addin', '--base-url', 'http://signing.example.com/assembly-signing/v1.0'], { env: { SIGNGATE_ACCESS_TOKEN: TOKEN } });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('SG_ERR_HTTP_INSECURE');
  });
});

test('a native DLL named alone is not required, no failure: "skip", and the summary counts it as not required', () => {
  const r = runCli([...base, 'fixtures/variants/native.dll']);
  expect(r.stdout).toMatch(/^skip fixtures\/variants\/native\.dll {2}not required: native code/m);
  expect(r.stdout).not.toContain('FAIL');
  expect(r.stdout).toContain('1 file: 0 need signing (0 pass, 0 fail), 1 not required');
  // Nothing to sign is still said (SG504): a check over native code alone approves nothing.
  expect(r.stdout).toContain('SG504 nothing-to-sign');
  expect(r.stdout).not.toContain('SG002');
  expect(r.status).toBe(1);
});
