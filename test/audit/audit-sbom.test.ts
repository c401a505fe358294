// audit --sbom: the release's CycloneDX SBOM from the audit's evidence, one component per shipped file, validated with
// the CycloneDX library's strict JSON-schema validator, with every field BSI TR-03183-2 v2.1 requires; NuGet packages
// through *.deps.json and .nuspec; the bad inputs (files that are no assemblies, a deps.json naming a missing file, a
// file that differs from its package, no package folder, two assemblies of one name, a file no reader can read).
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';
import { componentFields, expectEveryRequiredField, expectValidSbom } from '../helpers/sbom.js';
import { auditWithSbom, renderSbom } from '../../src/workflows/audit.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const KEY = fixturePath('test-keys/12345_public.snk');
const CREATOR = ['--sbom-creator-url', 'https://contoso.example'];
const OWN = [
  '--sbom-license',
  'LicenseRef-Contoso-EULA',
  '--sbom-source-uri',
  'https://git.contoso.example/addin',
  '--sbom-download-uri',
  'https://contoso.example/addin-1.4.2.zip',
];
const prop = (c: Json, name: string): string[] => ((c.properties ?? []) as Json[]).filter((p) => p.name === name).map((p) => p.value as string);
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
const sha = (alg: string, path: string) => createHash(alg).update(readFileSync(path)).digest('hex');
/** `audit <dir>` as JSON without a timestamp, with the SBOM written to `sbom` (the report beside it). */
const KEYED = ['--key', KEY, '--vendor', 'Contoso'];
const jsonAudit = (dir: string, sbom: string, ...more: string[]) => [
  'audit',
  dir,
  ...KEYED,
  '--format',
  'json',
  '-o',
  `${sbom}.json`,
  '--no-timestamp',
  '--sbom',
  sbom,
  ...more,
];
const hash = (c: Json, alg: string) => (c.hashes as Json[]).find((h) => h.alg === alg)?.content;

/** A nuspec as NuGet writes one into its package folder. */
function nuspec(id: string, version: string, license: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://schemas.microsoft.com/packaging/2013/05/nuspec.xsd">
  <metadata>
    <id>${id}</id>
    <version>${version}</version>
    <authors>Json &amp; Friends</authors>
    <license type="expression">${license}</license>
    <projectUrl>https://example.org/${id}</projectUrl>
    <repository type="git" url="https://git.example.org/${id}.git" commit="0123abcd" />
  </metadata>
</package>
`;
}

describe('audit --sbom', () => {
  let dir: string;
  let out: string;
  let bom: Json;
  let run: ReturnType<typeof runCli>;
  const noPackages = (home: string) => ({
    env: { SIGNGATE_CACHE_DIR: join(home, 'cache'), HOME: home, USERPROFILE: home, NUGET_PACKAGES: join(home, 'none') },
  });

  beforeAll(async () => {
    const base = mkdtempSync(join(tmpdir(), 'signgate-sbom-'));
    dir = join(base, 'release');
    out = join(base, 'out');
    mkdirSync(out);
    cpSync(fixturePath('addin'), dir, { recursive: true });
    // What a build output holds beside its assemblies, a second assembly of one name in another folder, a file that
    // is named like an assembly but is none.
    writeFileSync(join(dir, 'SampleAddin.pdb'), Buffer.from('Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0 portable pdb stand-in'));
    writeFileSync(join(dir, 'readme.txt'), 'Contoso sample add-in\r\n');
    writeFileSync(join(dir, 'Broken.dll'), Buffer.from('MZ this is no PE image at all'));
    mkdirSync(join(dir, 'legacy'));
    cpSync(join(dir, 'ThirdParty.Json.dll'), join(dir, 'legacy', 'ThirdParty.Json.dll'));
    run = runCli(
      ['audit', dir, '--key', KEY, '--vendor', 'Contoso', '-o', join(out, 'audit.json'), '--sbom', join(out, 'r.cdx.json'), ...CREATOR, ...OWN],
      noPackages(base),
    );
    bom = await expectValidSbom(readFileSync(join(out, 'r.cdx.json'), 'utf8'));
  }, 120_000);

  test('one component per shipped file, each with the SHA-256 and SHA-512 of its bytes, its name and its path', () => {
    expect(run.stderr).toContain('CycloneDX 1.6 SBOM written to');
    expect(run.status, run.stderr).toBe(1); // the fixture's delay-signed files are SG701, as in the audit
    const shipped = files(dir).map((f) => relative(dir, f).split('\\').join('/'));
    const components = bom.components as Json[];
    expect(components.map((c) => prop(c, 'signgate:path')[0]).sort()).toEqual(shipped.sort());
    expect(new Set(components.map((c) => c['bom-ref'])).size).toBe(components.length);
    for (const c of components) {
      const path = join(dir, prop(c, 'signgate:path')[0]!);
      expect(hash(c, 'SHA-512'), path).toBe(sha('sha512', path));
      expect(hash(c, 'SHA-256'), path).toBe(sha('sha256', path));
      expect(prop(c, 'bsi:component:filename')).toEqual([path.split(/[\\/]/).pop()]);
      expect(c.evidence.occurrences).toEqual([{ location: prop(c, 'signgate:path')[0] }]);
    }
    // The two ThirdParty.Json.dll are two components, told apart by their bom-ref.
    expect(
      components
        .filter((c) => c.name === 'ThirdParty.Json')
        .map((c) => c['bom-ref'])
        .sort(),
    ).toEqual(['file:ThirdParty.Json.dll', 'file:legacy/ThirdParty.Json.dll']);
  });

  test('the kinds: assemblies are libraries (an .exe an application), other files and unreadable ones are file components with their findings', () => {
    const by = (path: string) => (bom.components as Json[]).find((c) => prop(c, 'signgate:path')[0] === path)!;
    expect(by('SampleAddin.dll')).toMatchObject({ type: 'library', name: 'SampleAddin', version: '1.4.2.0' });
    expect(by('AddinTool.exe').type).toBe('application');
    const satellite = by('de/SampleAddin.resources.dll');
    expect(prop(satellite, 'signgate:assembly:culture')).toEqual(['de']);
    expect(by('SampleAddin.dll').dependencies ?? []).toEqual([]);
    const graph = new Map((bom.dependencies as Json[]).map((d) => [d.ref, d.dependsOn ?? []]));
    expect(graph.get('file:SampleAddin.dll')).toContain('file:de/SampleAddin.resources.dll');
    expect(graph.get('file:SampleAddin.dll')).toContain('file:Contoso.AddinApi.dll');
    const pdb = by('SampleAddin.pdb');
    expect(pdb.type).toBe('file');
    expect(prop(pdb, 'bsi:component:executable')).toEqual(['non-executable']);
    expect(prop(by('SampleAddin.dll'), 'bsi:component:executable')).toEqual(['executable']);
    expect(prop(by('readme.txt'), 'bsi:component:structured')).toEqual(['unstructured']);
    expect(prop(by('readme.txt'), 'signgate:version:source')).toEqual(['modified']);
    expect(by('readme.txt').version).toBe(statSync(join(dir, 'readme.txt')).mtime.toISOString());
    const broken = by('Broken.dll');
    expect(broken.type).toBe('file');
    expect(prop(broken, 'signgate:kind')).toEqual(['unreadable']);
    expect(prop(broken, 'signgate:finding').join('\n')).toMatch(/^SG001 malformed \(error\)/);
  });

  test('the evidence no other SBOM has: strong name, key token, verdict, Authenticode, as signgate: properties', () => {
    const addin = (bom.components as Json[]).find((c) => c['bom-ref'] === 'file:SampleAddin.dll')!;
    expect(prop(addin, 'signgate:strongName:state')).toEqual(['delay-signed']);
    expect(prop(addin, 'signgate:publicKeyToken')).toEqual(['5d004f218731cd20']);
    expect(prop(addin, 'signgate:strongName:key')).toEqual(['expected']);
    expect(prop(addin, 'signgate:strongName:verdict')).toEqual(['delay-signed with the right key, but never signed by the service']);
    expect(prop(addin, 'signgate:strongName:hashAlgorithm')[0]).toMatch(/^SHA/i);
    expect(prop(addin, 'signgate:authenticode:state')).toEqual(['absent']);
    expect(prop(addin, 'signgate:finding').some((f) => f.startsWith('SG701 not-signed-for-release (error)'))).toBe(true);
    // References to what the release does not ship (the framework) are named, and the graph says it is incomplete there.
    expect(prop(addin, 'signgate:unresolvedReference').some((r) => r.startsWith('mscorlib, Version='))).toBe(true);
    const incomplete = (bom.compositions as Json[]).find((k) => k.aggregate === 'incomplete');
    expect(incomplete.dependencies).toContain('file:SampleAddin.dll');
    expect((bom.compositions as Json[]).find((k) => k['bom-ref'] === 'composition:files')).toMatchObject({ aggregate: 'complete' });
  });

  test('the SBOM: creator, timestamp, serial number, the tool, the primary component; every field TR-03183-2 v2.1 requires', () => {
    expect(bom.metadata.manufacturer).toEqual({ name: 'Contoso', url: ['https://contoso.example'] });
    expect(Date.parse(bom.metadata.timestamp)).toBeGreaterThan(Date.parse('2020-01-01'));
    expect(bom.metadata.tools.components[0]).toMatchObject({ name: 'signgate' });
    expect(bom.metadata.component).toMatchObject({ name: 'SampleAddin', version: '1.4.2.0', 'bom-ref': 'release' });
    expectEveryRequiredField(bom);
  });

  test('--no-timestamp: the same inputs give the same bytes; 1.7 on request validates too', async () => {
    const args = (name: string, ...more: string[]) => jsonAudit(dir, join(out, name), ...CREATOR, ...more);
    const env = noPackages(join(out, '..'));
    expect(runCli(args('a.cdx.json'), env).status).toBe(1);
    expect(runCli(args('b.cdx.json'), env).status).toBe(1);
    const a = readFileSync(join(out, 'a.cdx.json'), 'utf8');
    expect(readFileSync(join(out, 'b.cdx.json'), 'utf8')).toBe(a);
    const parsed = await expectValidSbom(a);
    expect(parsed.metadata.timestamp).toBeUndefined();
    expect(parsed.serialNumber).not.toBe(bom.serialNumber);
    expect(runCli(args('c.cdx.json', '--sbom-spec', '1.7', '--sbom-creator-email', 'release@contoso.example'), env).status).toBe(1);
    const v17 = await expectValidSbom(readFileSync(join(out, 'c.cdx.json'), 'utf8'));
    expect(v17.specVersion).toBe('1.7');
  });

  test('the same SBOM whether the files are held, read on demand or read in worker threads', async () => {
    const made = async (more: { threads?: number; readAtOnceBytes?: number }) => {
      const result = await auditWithSbom({ paths: [dir], keys: [KEY], vendor: 'Contoso', ...more, sbom: { creatorUrl: 'https://contoso.example' } });
      return [...(await renderSbom(result, null))].join('');
    };
    const held = await made({ threads: 0 });
    expect(await made({ threads: 0, readAtOnceBytes: 0 })).toBe(held);
    expect(await made({ threads: 2 })).toBe(held);
    expect((await expectValidSbom(held)).components.length).toBe(files(dir).length);
  });

  test('no creator: a refusal that names the options, before anything is written; a stray SBOM option without --sbom is a usage error', () => {
    const r = runCli(
      ['audit', dir, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '-o', join(out, 'x.json'), '--sbom', join(out, 'x.cdx.json')],
      noPackages(join(out, '..')),
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--sbom-creator-url or --sbom-creator-email');
    expect(() => statSync(join(out, 'x.cdx.json'))).toThrow();
    const stray = runCli(['audit', dir, '--format', 'json', '--sbom-creator-url', 'https://contoso.example'], noPackages(join(out, '..')));
    expect(stray.status).toBe(2);
    expect(stray.stderr).toContain('--sbom-creator-url is an option of the SBOM');
  });
});

describe('audit --sbom with NuGet packages', () => {
  let dir: string;
  let packages: string;
  let base: string;
  beforeAll(() => {
    base = mkdtempSync(join(tmpdir(), 'signgate-sbom-nuget-'));
    dir = join(base, 'release');
    cpSync(fixturePath('addin'), dir, { recursive: true });
    // ThirdParty.Json 1.0.0 (MIT) brought ThirdParty.Json.dll, and a Missing.dll the release does not hold; Dual.Lib
    // 2.0.0 (MIT OR Apache-2.0) brought Interop.SampleCom.dll, whose bytes differ from the package's.
    const deps = {
      runtimeTarget: { name: '.NETCoreApp,Version=v8.0' },
      targets: {
        '.NETCoreApp,Version=v8.0': {
          'SampleAddin/1.4.2': { dependencies: { 'ThirdParty.Json': '1.0.0', 'Dual.Lib': '2.0.0' }, runtime: { 'SampleAddin.dll': {} } },
          'ThirdParty.Json/1.0.0': { runtime: { 'lib/net8.0/ThirdParty.Json.dll': {}, 'lib/net8.0/Missing.dll': {} } },
          'Dual.Lib/2.0.0': { runtime: { 'lib/net8.0/Interop.SampleCom.dll': {} } },
        },
      },
      libraries: {
        'SampleAddin/1.4.2': { type: 'project', serviceable: false, sha512: '' },
        'ThirdParty.Json/1.0.0': {
          type: 'package',
          serviceable: true,
          sha512: `sha512-${Buffer.alloc(64, 7).toString('base64')}`,
          path: 'thirdparty.json/1.0.0',
        },
        'Dual.Lib/2.0.0': { type: 'package', serviceable: true, sha512: `sha512-${Buffer.alloc(64, 9).toString('base64')}`, path: 'dual.lib/2.0.0' },
      },
    };
    writeFileSync(join(dir, 'SampleAddin.deps.json'), `\uFEFF${JSON.stringify(deps, null, 2)}`);
    packages = join(base, 'packages');
    const put = (path: string, content: string | Uint8Array) => {
      mkdirSync(join(packages, path, '..'), { recursive: true });
      writeFileSync(join(packages, path), content);
    };
    put('thirdparty.json/1.0.0/thirdparty.json.nuspec', nuspec('ThirdParty.Json', '1.0.0', 'MIT'));
    put('thirdparty.json/1.0.0/lib/net8.0/ThirdParty.Json.dll', fixture('addin/ThirdParty.Json.dll'));
    put('dual.lib/2.0.0/dual.lib.nuspec', nuspec('Dual.Lib', '2.0.0', 'MIT OR Apache-2.0'));
    put('dual.lib/2.0.0/lib/net8.0/Interop.SampleCom.dll', Buffer.from('not the shipped bytes'));
  });
  const env = () => ({ env: { SIGNGATE_CACHE_DIR: join(base, 'cache'), HOME: base, USERPROFILE: base, NUGET_PACKAGES: join(base, 'none') } });
  const audit = (name: string, ...more: string[]) => {
    const r = runCli(jsonAudit(dir, join(base, name), ...CREATOR, ...OWN, ...more), env());
    return { r, text: () => readFileSync(join(base, name), 'utf8') };
  };

  test('purls, licences (a single id declared and concluded, a compound expression once), authors, URLs, the package as the deployable form; SG710 and SG711', async () => {
    const { r, text } = audit('p.cdx.json', '--nuget-packages', packages);
    expect(r.status, r.stderr).toBe(1);
    const bom = await expectValidSbom(text());
    const by = (ref: string) => (bom.components as Json[]).find((c) => c['bom-ref'] === ref)!;
    const json = by('file:ThirdParty.Json.dll');
    expect(json.purl).toBe('pkg:nuget/ThirdParty.Json@1.0.0');
    expect(json.author).toBe('Json & Friends');
    expect(json.licenses).toEqual([{ license: { id: 'MIT', acknowledgement: 'declared' } }, { license: { id: 'MIT', acknowledgement: 'concluded' } }]);
    expect(json.manufacturer).toEqual({ name: 'Json & Friends', url: ['https://example.org/ThirdParty.Json'] });
    const refs = Object.fromEntries((json.externalReferences as Json[]).map((x) => [x.type, x]));
    expect(refs.distribution.url).toBe('https://www.nuget.org/api/v2/package/ThirdParty.Json/1.0.0');
    expect(refs.distribution.hashes).toEqual([{ alg: 'SHA-512', content: Buffer.alloc(64, 7).toString('hex') }]);
    expect(refs['source-distribution'].url).toBe('https://git.example.org/ThirdParty.Json.git');
    expect(prop(json, 'signgate:nuget:sameBytes')).toEqual(['true']);
    for (const [field, ok] of Object.entries(componentFields(bom, json))) expect(ok, field).toBe(true);
    const dual = by('file:Interop.SampleCom.dll');
    expect(dual.licenses).toEqual([{ expression: 'MIT OR Apache-2.0', acknowledgement: 'declared' }]);
    expect(prop(dual, 'signgate:licence:concluded')).toEqual(['MIT OR Apache-2.0']);
    expect(prop(dual, 'signgate:nuget:sameBytes')).toEqual(['false']);
    expect(prop(dual, 'signgate:finding').join('\n')).toContain('SG711 differs-from-package (error)');
    expect(r.stderr).toMatch(/warning SG710 deps-file-missing .*SampleAddin\.deps\.json names Missing\.dll/);
    expect(r.stderr).toMatch(
      /error SG711 differs-from-package .*Interop\.SampleCom\.dll differs from lib\/net8\.0\/Interop\.SampleCom\.dll of the package Dual\.Lib 2\.0\.0/,
    );
    // The project deps.json names is the primary component; it depends on its packages' files.
    expect(bom.metadata.component).toMatchObject({ name: 'SampleAddin', version: '1.4.2.0' });
    const graph = new Map((bom.dependencies as Json[]).map((d) => [d.ref, d.dependsOn ?? []]));
    expect(graph.get('file:SampleAddin.dll')).toEqual(expect.arrayContaining(['file:ThirdParty.Json.dll', 'file:Interop.SampleCom.dll']));
  });

  test('no NuGet package folder: purls from deps.json alone, licences said to be unknown, no crash; --nuget-packages that is no folder is refused', async () => {
    const { r, text } = audit('n.cdx.json');
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain('(no NuGet package folder: their licences are unknown)');
    const bom = await expectValidSbom(text());
    const json = (bom.components as Json[]).find((c) => c['bom-ref'] === 'file:ThirdParty.Json.dll')!;
    expect(json.purl).toBe('pkg:nuget/ThirdParty.Json@1.0.0');
    expect(json.licenses ?? []).toEqual([]);
    expect(prop(json, 'signgate:licence:unknown')[0]).toContain('not in the NuGet package folder');
    expect(prop(json, 'signgate:nuget:sameBytes')).toEqual(['unknown']);
    const bad = audit('m.cdx.json', '--nuget-packages', join(base, 'nowhere'));
    expect(bad.r.status).toBe(2);
    expect(bad.r.stderr).toContain(`--nuget-packages ${join(base, 'nowhere')} is not a folder`);
  });

  test('a deps.json that is no deps.json is SG712, and the SBOM is still written', async () => {
    const broken = join(base, 'broken');
    cpSync(fixturePath('addin'), broken, { recursive: true });
    writeFileSync(join(broken, 'Other.deps.json'), '{ "not": "deps" }');
    const r = runCli(
      ['audit', broken, '--key', KEY, '--vendor', 'Contoso', '--format', 'json', '-o', join(base, 'b.json'), '--sbom', join(base, 'b.cdx.json'), ...CREATOR],
      env(),
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/warning SG712 deps-json-unreadable .*Other\.deps\.json cannot be read as a \.deps\.json/);
    await expectValidSbom(readFileSync(join(base, 'b.cdx.json'), 'utf8'));
  });
});

describe('audit --verify-report with an SBOM', () => {
  test('the folder still matches it: same files, same SHA-512, same identities; exit 1 naming each difference', () => {
    const base = mkdtempSync(join(tmpdir(), 'signgate-sbom-verify-'));
    const dir = join(base, 'release');
    cpSync(fixturePath('addin'), dir, { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'release notes\n');
    const env = { env: { SIGNGATE_CACHE_DIR: join(base, 'cache'), HOME: base, USERPROFILE: base, NUGET_PACKAGES: join(base, 'none') } };
    const sbom = join(base, 'r.cdx.json');
    expect(runCli(jsonAudit(dir, sbom, ...CREATOR), env).status).toBe(1);
    const same = runCli(['audit', '--verify-report', sbom, dir], env);
    expect(same.stdout).toMatch(/r\.cdx\.json matches .*: 9 files, the same files, SHA-512 and assembly identities/);
    expect(same.status, same.stderr).toBe(0);
    // Another file in place of one, a file gone, a file added, one changed in a byte.
    cpSync(fixturePath('addin/SampleAddin.Helpers.dll'), join(dir, 'ThirdParty.Json.dll'));
    rmSync(join(dir, 'notes.txt'));
    writeFileSync(join(dir, 'extra.json'), '{}');
    const bytes = readFileSync(join(dir, 'AddinTool.exe'));
    bytes[bytes.length - 1] ^= 1;
    writeFileSync(join(dir, 'AddinTool.exe'), bytes);
    const r = runCli(['audit', '--verify-report', sbom, dir], env);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain('notes.txt is in the SBOM but not in the folder');
    expect(r.stdout).toContain('extra.json is in the folder but not in the SBOM');
    expect(r.stdout).toMatch(/AddinTool\.exe: SHA-512 [0-9a-f]{128} in the SBOM, [0-9a-f]{128} in the folder/);
    expect(r.stdout).toMatch(
      /ThirdParty\.Json\.dll: identity ThirdParty\.Json, Version=[\d.]+, Culture=neutral, PublicKeyToken=\w+ in the SBOM, SampleAddin\.Helpers, Version=/,
    );
  });
});
