// Imports point one way: cli -> workflows and server (neither imports the other) -> engine -> audit/report/client ->
// rules -> strongname -> metadata/authenticode -> pe -> binary -> core, as ALLOWED below says for each room; the engine
// imports neither product (the check's findings, the audit's evidence: they are passed in); record (the signature record: its entries, Merkle tree and signed checkpoints) sits on
// core, below whoever reads it; runtime (process helpers: worker modules, heap, version) imports nothing of ours; and
// no module imports itself through others (no circles).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ErrorCodes } from '../src/core/error-codes.js';
import { repoRoot } from './helpers/fixtures.js';
import { moduleSpecifiers } from './helpers/imports.js';

const src = join(repoRoot, 'src');
const ALLOWED: Record<string, readonly string[]> = {
  core: [],
  runtime: [],
  record: ['core'],
  binary: ['core'],
  pe: ['binary', 'core'],
  authenticode: ['pe', 'binary', 'core'],
  metadata: ['pe', 'binary', 'core'],
  strongname: ['authenticode', 'metadata', 'pe', 'binary', 'core'],
  rules: ['strongname', 'authenticode', 'metadata', 'pe', 'binary', 'core'],
  audit: ['record', 'rules', 'strongname', 'authenticode', 'metadata', 'pe', 'binary', 'core'],
  engine: ['runtime', 'rules', 'strongname', 'authenticode', 'metadata', 'pe', 'binary', 'core'],
  report: ['runtime', 'audit', 'rules', 'authenticode', 'core'],
  'service-client': ['record', 'core'],
  zip: ['core'],
  server: ['engine', 'runtime', 'record', 'zip', 'rules', 'strongname', 'authenticode', 'metadata', 'pe', 'binary', 'core'],
  workflows: [
    'engine',
    'runtime',
    'record',
    'audit',
    'report',
    'rules',
    'service-client',
    'zip',
    'strongname',
    'authenticode',
    'metadata',
    'pe',
    'binary',
    'core',
  ],
  cli: [
    'engine',
    'runtime',
    'record',
    'workflows',
    'server',
    'audit',
    'report',
    'rules',
    'service-client',
    'zip',
    'strongname',
    'authenticode',
    'metadata',
    'pe',
    'binary',
    'core',
  ],
};
/** Packages a layer may import; yargs and glob belong to the CLI, chalk to the CLI and the terminal reporter. */
const PACKAGES: Record<string, readonly string[]> = {
  pe: ['pe-library'],
  authenticode: ['pkijs', 'asn1js'],
  strongname: ['pkcs11js'],
  // sarif: the types of @types/sarif (type-only imports)
  report: ['chalk', ...['Enums', 'Models', 'Serialize', 'SPDX', 'Spec'].map((part) => `@cyclonedx/cyclonedx-library/${part}`), 'sarif'],
  zip: ['fflate', 'yauzl'],
  server: [
    'fastify',
    '@fastify/multipart',
    '@fastify/swagger',
    '@fastify/swagger-ui',
    'ajv/dist/2020.js',
    '@fastify/rate-limit',
    'pg',
    'piscina',
    'jose',
    '@aws-sdk/client-s3',
    'pino',
    'prom-client',
  ],
  'service-client': ['ajv/dist/2020.js'],
  engine: ['piscina'],
  workflows: ['glob', 'ajv/dist/2020.js', 'jsonc-parser'],
  cli: ['yargs', 'chalk', 'glob', 'cli-progress'],
};

/**
 * Workflow modules that any workflow may import: helpers that know no command and import only each other. Everything
 * else a workflow needs of another goes through the pipeline's entry, `workflows/pipeline/index.ts` (the reading of
 * inputs, the settings, the two rounds, the pool), or is an exception below.
 */
const WORKFLOW_LEAVES: Record<string, string> = {
  'input-paths.ts': 'the files that paths, folders and globs name, each known by what it is on disk and shown relative to the working directory',
  'files.ts': 'bytes: files read (held, shared or as files the engine reads) with errors that name them, and written atomically',
  'config.ts': 'signgate.config.json: a leaf, not in the pipeline, because service.ts (jobs, licenses) reads it too',
  'keys.ts': 'key files: public keys for the pipeline, key pairs for fix',
  'access-token.ts':
    'the access token from the options, a file or the environment, and a secret read from the first line of a file (sign, check, service.ts, serve)',
  'licenses.ts': 'the licenses fetched online, compared with the key files (check and sign)',
  'client-options.ts':
    "the service client's options, one way: the address, the token and the waits of SIGNGATE_RETRY_DELAYS (sign, archive, check, service.ts)",
  'ledger.ts': 'the local job ledger (sign, jobs, audit, archive, record-proof)',
  'audit-records.ts': "what an audit reads besides the release: the ledger's jobs, the manifest, the previous report, the signature record",
  'extract.ts': "the service's result ZIP, extracted (sign, jobs)",
  'record-proof.ts': "a job's proof in the service's signature record (sign)",
  'sign-inputs.ts': 'what sign uploads and where to: the inputs outside the destination, the address and the token (sign)',
  'sign-job.ts': 'the jobs of sign: the plan of the upload set, then each job uploaded, polled, proven, downloaded, verified (sign, sign --archive, jobs)',
  'returned-file.ts': "a returned file's verdict: signed with the organization's key and changed in nothing else (sign, sign --archive)",
  'pool-thresholds.ts': 'from how many files the pools start, decided without loading them (pipeline, scan, cli)',
  'scan-file.ts': 'one file inspected or verified (scan.ts and the scan worker)',
  'assembly-parts.ts': "an assembly's headers and metadata read without the rest of the file (fix plans a set from them)",
  'build-folders.ts': 'the folders that hold the inputs: their assembly files, and where each deps.json resolved the rest (SG401, fix)',
  'nuget-packages.ts': "the NuGet package folder: each package's .nuspec and the hashes of its files a release ships (audit --sbom)",
};
/** Imports between workflow modules that pass neither through the pipeline's entry nor to a leaf, each with why. */
const WORKFLOW_EXCEPTIONS: Record<string, string> = {
  'scan.ts -> scan-thread.ts': 'type only: the task and answer its worker threads exchange (inspect and verify scan files; they are not the check pipeline)',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('architecture', () => {
  const files = sourceFiles(src).filter((f) => relative(src, f).includes('/'));
  test.each(files.map((f) => [relative(src, f)]))('%s imports only from layers to its right', (file) => {
    const layer = file.split('/')[0]!;
    expect(Object.keys(ALLOWED)).toContain(layer);
    const text = readFileSync(join(src, file), 'utf8');
    for (const spec of moduleSpecifiers(text)) {
      if (spec.startsWith('.')) {
        const target = relative(src, join(src, file, '..', spec)).split('/')[0]!;
        if (target === layer) continue;
        expect(ALLOWED[layer], `${file} imports ${spec}`).toContain(target);
      } else if (!spec.startsWith('node:')) {
        expect(PACKAGES[layer] ?? [], `${file} imports the package ${spec}`).toContain(spec);
      }
    }
  });

  test('no module imports itself through others: no import circles in src/ (static, dynamic and type-only imports alike)', () => {
    const all = sourceFiles(src);
    const edges = new Map<string, string[]>();
    for (const file of all) {
      const text = readFileSync(file, 'utf8');
      const targets = moduleSpecifiers(text)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => join(file, '..', spec).replace(/\.js$/, '.ts'));
      edges.set(
        file,
        targets.filter((t) => t.endsWith('.ts')),
      );
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const path: string[] = [];
    const visit = (file: string) => {
      state.set(file, 'open');
      path.push(file);
      for (const next of edges.get(file) ?? []) {
        if (state.get(next) === 'open') circles.push([...path.slice(path.indexOf(next)), next].map((f) => relative(src, f)).join(' -> '));
        else if (!state.has(next)) visit(next);
      }
      path.pop();
      state.set(file, 'done');
    };
    for (const file of all) if (!state.has(file)) visit(file);
    expect(circles).toEqual([]);
  });

  test("a workflow module imports another only through the pipeline's entry (pipeline/index.ts), a leaf helper, or a listed exception", () => {
    const workflows = join(src, 'workflows');
    const problems: string[] = [];
    const all = sourceFiles(workflows).map((f) => relative(workflows, f));
    for (const name of [...Object.keys(WORKFLOW_LEAVES), ...Object.keys(WORKFLOW_EXCEPTIONS).flatMap((e) => e.split(' -> '))]) {
      if (!all.includes(name)) problems.push(`${name} is listed in test/architecture.test.ts but is no module of src/workflows/`);
    }
    for (const from of all) {
      const text = readFileSync(join(workflows, from), 'utf8');
      for (const spec of moduleSpecifiers(text).filter((x) => x.startsWith('.'))) {
        const to = relative(workflows, join(workflows, from, '..', spec)).replace(/\.js$/, '.ts');
        if (to.startsWith('..')) continue;
        const inPipeline = (f: string) => f.startsWith('pipeline/');
        if (inPipeline(from) && inPipeline(to)) continue;
        // Anyone may import a leaf; only a module that is no leaf may import the pipeline's entry.
        if (to in WORKFLOW_LEAVES) continue;
        if (to === 'pipeline/index.ts' && !(from in WORKFLOW_LEAVES)) continue;
        if (`${from} -> ${to}` in WORKFLOW_EXCEPTIONS) continue;
        problems.push(
          `workflows/${from} imports workflows/${to}: ${inPipeline(to) ? 'import the pipeline through pipeline/index.ts' : from in WORKFLOW_LEAVES ? 'a leaf helper imports leaves only' : 'go through pipeline/index.ts, or make it a leaf helper'}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  test('the scan sees every way a module names another: a planted upward import of each kind is found', () => {
    const planted = [
      "import { a } from '../cli/a.js';",
      "export * from '../cli/b.js';",
      "export { c } from '../cli/c.js';",
      "import '../cli/d.js';",
      "import type { E } from '../cli/e.js';",
      "const f = await import('../cli/f.js');",
      "const g = require('../cli/g.js');",
      "const h = createRequire(import.meta.url)('../cli/h.js');",
      "new Worker(new URL('../cli/i.js', import.meta.url));",
    ].join('\n');
    expect(moduleSpecifiers(planted)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((x) => `../cli/${x}.js`));
  });

  test("docs/architecture.md: the picture names every room, and its table of rooms is the allow-list's", () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'architecture.md'), 'utf8');
    const picture = doc.slice(doc.indexOf('```text'), doc.indexOf('```', doc.indexOf('```text') + 7));
    const rooms = readdirSync(src, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(Object.keys(ALLOWED).sort()).toEqual(rooms.sort());
    const inPicture = [
      'cli',
      'workflows',
      'engine',
      'audit',
      'report',
      'rules',
      'service-client',
      'zip',
      'server',
      'strongname',
      'metadata',
      'authenticode',
      'pe',
      'binary',
      'core',
    ];
    for (const room of inPicture) expect(picture, `the picture of docs/architecture.md leaves out ${room}/`).toContain(`${room}/`);
    // record/ and runtime/ sit beside the layers: the text under the picture says where.
    for (const room of rooms.filter((r) => !inPicture.includes(r))) expect(doc.replace(picture, '')).toContain(`\`${room}/\``);
    const table = [
      '| room | may import |',
      '| --- | --- |',
      ...Object.entries(ALLOWED).map(([room, to]) => `| \`${room}/\` | ${to.length ? to.map((t) => `\`${t}/\``).join(', ') : 'nothing of ours'} |`),
    ].join('\n');
    const between = doc.slice(doc.indexOf('<!-- rooms:begin -->') + '<!-- rooms:begin -->'.length, doc.indexOf('<!-- rooms:end -->')).trim();
    expect(between).toBe(table);
  });

  test('index.ts exports the library, not the CLI', () => {
    const index = readFileSync(join(src, 'index.ts'), 'utf8');
    expect(index).not.toMatch(/from '\.\/cli\//);
  });

  test('docs/errors.md has one row per error code and no other', () => {
    const doc = readFileSync(join(repoRoot, 'docs', 'errors.md'), 'utf8');
    const documented = [...doc.matchAll(/^\| <a id="[^"]+"><\/a>`(SG_ERR_[A-Z0-9_]+)`/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ErrorCodes).sort());
  });
});

describe('rule documentation', () => {
  test("docs/rules.md has a section per rule of the one registry (the check's and the audit's) and ids are unique", async () => {
    const { auditRules, rules } = await import('../src/rules/index.js');
    const all = [...rules, ...auditRules];
    const doc = readFileSync(join(repoRoot, 'docs', 'rules.md'), 'utf8');
    const sections = [...doc.matchAll(/^## (SG\d{3})$/gm)].map((m) => m[1]);
    expect(sections).toEqual(all.map((r) => r.id));
    expect(new Set(all.map((r) => r.name)).size).toBe(all.length);
    for (const r of all) expect(r.name).toMatch(/^[a-z]+(-[a-z]+)*$/);
    // One module per rule, named by its id and name; each section says the rule's name and severity.
    const modules = readdirSync(join(src, 'rules')).filter((f) => /^sg\d{3}-/.test(f));
    expect(modules.sort()).toEqual(all.map((r) => `${r.id.toLowerCase()}-${r.name}.ts`).sort());
    for (const r of auditRules) expect(doc).toContain(`**${r.name}** · severity: ${r.severity}`);
  });
});
