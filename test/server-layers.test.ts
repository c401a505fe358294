// The sub-layers of src/server point one way: http -> identity | jobs | record -> ports <- backends, with domain
// at the bottom of them all (and base below domain):
//   http/      what a client meets: the fastify app, its routes, and what puts a node together (node-stores.ts,
//              the one file that opens a backend, through backends/index.ts); it may import every layer below it.
//   identity/  who is calling (OpenID Connect, rate limits), jobs/ (the signing worker, its pool, the worker on a
//              shared queue, key waits, retention) and record/ (the record as a Merkle log, its checkpoints) sit side by
//              side: each may import ports, domain and base, none the others, none http/ and none backends/.
//   ports.ts   the interfaces of what is kept (job store, shared queue, tokens, signature record, record tree,
//              Backend): it imports domain and base only.
//   backends/  the implementations, a folder each (data-dir, postgres, s3), and index.ts, the one place a backend is
//              chosen: they import ports, domain and base, never the layers that use them. A backend folder imports no
//              other backend folder, but for postgres's job files in S3 (backends/s3).
//   domain/    the records and decisions every layer shares (a job and its files, tokens, leases, the signing decision).
//   base       the files directly in src/server/ (the configuration, the service log, RFC 9457 problems, file helpers):
//              below every sub-layer, so that any may read them; they import only each other.
// Type-only and dynamic imports count alike. Imports from outside src/server (core, record, ...) are
// test/architecture.test.ts's business.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot } from './helpers/fixtures.js';
import { moduleSpecifiers } from './helpers/imports.js';

const server = join(repoRoot, 'src', 'server');

type Floor = 'http' | 'identity' | 'jobs' | 'record' | 'ports' | 'backends' | 'domain' | 'base';

/** What each floor may import inside src/server, besides itself. */
const MAY_IMPORT: Record<Floor, readonly Floor[]> = {
  http: ['identity', 'jobs', 'record', 'backends', 'ports', 'domain', 'base'],
  identity: ['ports', 'domain', 'base'],
  jobs: ['ports', 'domain', 'base'],
  record: ['ports', 'domain', 'base'],
  backends: ['ports', 'domain', 'base'],
  ports: ['domain', 'base'],
  domain: ['base'],
  base: [],
};

/** The one file above backends/ that may import it, and what of it. */
const BACKEND_USER = { file: 'http/node-stores.ts', imports: 'backends/index.ts' };
/** The backend folders a backend folder may import besides its own: postgres keeps job files in S3. */
const BACKEND_PARTS: Record<string, readonly string[]> = { postgres: ['s3'] };

/** The files directly in src/server/ and why each is at the bottom: a new one must be given a floor here. */
const BASE_FILES: Record<string, string> = {
  'server-config.ts': 'server.json as read: every layer reads the configuration (with the rate limits it sets)',
  'service-log.ts': "the service's JSON log lines and their levels",
  'problem.ts': 'HttpProblem and RFC 9457 problem bodies: http/ answers them, identity/ refuses requests with them',
  'fs-atomic.ts': 'writing files whole (a temporary file, then a rename) and private folders: every layer that writes files',
  'zip-file.ts': "a package written to a file: the signing worker's result and the archive routes'",
  'record-key.ts': "the record key's files (the PEM that signs checkpoints, its public key): the backends, record/ and the commands read them",
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The floor of a file given relative to src/server, or undefined for a file or folder no floor was decided for. */
function floorOf(file: string): Floor | undefined {
  const [first, ...rest] = file.split('/');
  if (rest.length === 0) return first === 'ports.ts' ? 'ports' : BASE_FILES[first!] === undefined ? undefined : 'base';
  return (['http', 'identity', 'jobs', 'record', 'backends', 'domain'] as const).find((f) => f === first);
}

/** Every relative import of a file (static, re-export, type-only, dynamic, require: test/helpers/imports.ts), as paths relative to src/server. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(server, file), 'utf8');
  return moduleSpecifiers(text)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(server, join(server, file, '..', spec)).replace(/\.js$/, '.ts'));
}

const files = sourceFiles(server).map((f) => relative(server, f));

describe('the sub-layers of src/server', () => {
  test('every file of src/server has a floor: http/, identity/, jobs/, record/, ports.ts, backends/, domain/, or base (listed)', () => {
    expect(files.filter((f) => floorOf(f) === undefined)).toEqual([]);
    for (const name of Object.keys(BASE_FILES)) expect(files, `${name} is listed as base but is no file of src/server/`).toContain(name);
  });

  test('imports point down: http -> identity | jobs | record -> ports <- backends, domain and base below (each bad import named)', () => {
    const bad: string[] = [];
    let across = 0;
    for (const file of files) {
      const from = floorOf(file)!;
      for (const target of importsOf(file)) {
        if (target.startsWith('..')) continue; // outside src/server
        const to = floorOf(target);
        if (to === from) continue;
        across++;
        if (to === undefined || !MAY_IMPORT[from].includes(to))
          bad.push(
            `src/server/${file} (${from}) imports src/server/${target} (${to ?? 'no floor'}); ${from} may import ${MAY_IMPORT[from].join(', ') || 'nothing of src/server but itself'}`,
          );
      }
    }
    expect(bad).toEqual([]);
    // The scan reads real imports: the layers do import one another, downwards.
    expect(across).toBeGreaterThan(50);
  });

  test('one backend is one folder and one line: only node-stores.ts opens backends/index.ts, which alone imports each folder', () => {
    const bad: string[] = [];
    const folders = new Set<string>();
    for (const file of files) {
      const [top, folder] = file.split('/');
      if (top === 'backends' && file.split('/').length > 2) folders.add(folder!);
      for (const target of importsOf(file)) {
        const [tTop, tFolder] = target.split('/');
        if (tTop !== 'backends') continue;
        if (top !== 'backends') {
          if (file !== BACKEND_USER.file || target !== BACKEND_USER.imports)
            bad.push(`src/server/${file} imports src/server/${target}: only ${BACKEND_USER.file} opens ${BACKEND_USER.imports}`);
          continue;
        }
        const inFolder = target.split('/').length > 2;
        if (file === 'backends/index.ts') {
          if (inFolder && target !== `backends/${tFolder}/index.ts`)
            bad.push(`src/server/${file} imports src/server/${target}: a backend is its folder's index.ts`);
          continue;
        }
        if (!inFolder) bad.push(`src/server/${file} imports src/server/${target}: a backend is chosen above it, not by another backend`);
        else if (tFolder !== folder && !(BACKEND_PARTS[folder!] ?? []).includes(tFolder!))
          bad.push(`src/server/${file} (backend ${folder}) imports src/server/${target} (backend ${tFolder})`);
      }
    }
    expect(bad).toEqual([]);
    // Each folder is a backend in the list of backends/index.ts, or a part another backend names (s3).
    const index = readFileSync(join(server, 'backends', 'index.ts'), 'utf8');
    const listed =
      /const BACKENDS: readonly Backend\[\] = \[([^\]]*)\]/
        .exec(index)?.[1]
        ?.split(',')
        .map((s) => s.trim()) ?? [];
    const parts = new Set(Object.values(BACKEND_PARTS).flat());
    expect(listed.length).toBeGreaterThanOrEqual(2);
    for (const folder of folders)
      if (!parts.has(folder)) expect(index, `backends/${folder} is a backend but not in BACKENDS`).toContain(`./${folder}/index.js`);
    expect([...folders].sort()).toEqual(['data-dir', 'postgres', 's3']);
  });

  test("the job folder's names are spelled once, in domain/job-folder.ts", () => {
    const names = ['uploads', 'result.zip', 'archive.json', 'archive-files', 'archive-result.zip'];
    const folder = readFileSync(join(server, 'domain', 'job-folder.ts'), 'utf8');
    const spelled: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(server, file), 'utf8');
      for (const name of names) {
        // A string literal (a name in a comment, between backquotes, is a name, not a spelling).
        const literal = new RegExp(`['"]${name.replace('.', '\\.')}/?['"]`);
        if (file !== 'domain/job-folder.ts' && literal.test(text)) spelled.push(`src/server/${file} spells '${name}': import it from domain/job-folder.ts`);
      }
    }
    expect(spelled).toEqual([]);
    for (const name of names) expect(folder).toContain(`'${name}'`);
  });

  test('the rule itself: upward and sideways imports are refused', () => {
    expect(MAY_IMPORT.backends).not.toContain('jobs');
    expect(MAY_IMPORT.backends).not.toContain('identity');
    expect(MAY_IMPORT.backends).not.toContain('record');
    expect(MAY_IMPORT.identity).not.toContain('http');
    expect(MAY_IMPORT.identity).not.toContain('jobs');
    expect(MAY_IMPORT.jobs).not.toContain('http');
    expect(MAY_IMPORT.jobs).not.toContain('identity');
    expect(MAY_IMPORT.jobs).not.toContain('backends');
    expect(MAY_IMPORT.ports).not.toContain('backends');
    expect(MAY_IMPORT.domain).toEqual(['base']);
    expect(floorOf('http/error-response.ts')).toBe('http');
    expect(floorOf('backends/postgres/pg-store.ts')).toBe('backends');
    expect(floorOf('ports.ts')).toBe('ports');
    expect(floorOf('problem.ts')).toBe('base');
    expect(floorOf('new-file.ts')).toBeUndefined();
  });
});
