// The sub-layers of src/server point one way: http -> identity | jobs -> storage -> base.
//   http/      what a client meets: the fastify app, its routes, and what puts a node together (node-stores.ts);
//              it may import every layer below it.
//   identity/  who is calling (tokens, OpenID Connect, rate limits) and jobs/ (the signing worker, its pool, the
//              PostgreSQL queue worker) sit side by side: each may import storage/ and base, neither the other, and
//              neither http/.
//   storage/   where bytes and records live (the job stores and their interface, the signature record, PostgreSQL,
//              object storage): it imports none of the layers above, only base.
//   base       the files directly in src/server/ (the configuration, the service log, the heap settings, RFC 9457
//              problems): below every sub-layer, so that any may read them; they import only each other.
// Type-only and dynamic imports count alike. Imports from outside src/server (core, record, ...) are
// test/architecture.test.ts's business.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { repoRoot } from './helpers/fixtures.js';
import { moduleSpecifiers } from './helpers/imports.js';

const server = join(repoRoot, 'src', 'server');

type Floor = 'http' | 'identity' | 'jobs' | 'storage' | 'base';

/** What each floor may import inside src/server, besides itself. */
const MAY_IMPORT: Record<Floor, readonly Floor[]> = {
  http: ['identity', 'jobs', 'storage', 'base'],
  identity: ['storage', 'base'],
  jobs: ['storage', 'base'],
  storage: ['base'],
  base: [],
};

/** The files directly in src/server/ and why each is at the bottom: a new one must be given a floor here. */
const BASE_FILES: Record<string, string> = {
  'server-config.ts': 'server.json as read: every layer reads the configuration (with the rate limits it sets)',
  'service-log.ts': "the service's JSON log lines and their levels",
  'problem.ts': 'HttpProblem and RFC 9457 problem bodies: http/ answers them, identity/ refuses requests with them',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** The floor of a file given relative to src/server, or undefined for a file or folder no floor was decided for. */
function floorOf(file: string): Floor | undefined {
  const [first, ...rest] = file.split('/');
  if (rest.length === 0) return BASE_FILES[first!] === undefined ? undefined : 'base';
  return (['http', 'identity', 'jobs', 'storage'] as const).find((f) => f === first);
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
  test('every file of src/server has a floor: http/, identity/, jobs/, storage/, or base (listed)', () => {
    expect(files.filter((f) => floorOf(f) === undefined)).toEqual([]);
    for (const name of Object.keys(BASE_FILES)) expect(files, `${name} is listed as base but is no file of src/server/`).toContain(name);
  });

  test('imports point down: http -> identity | jobs -> storage -> base (each bad import named)', () => {
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

  test('the rule itself: upward and sideways imports are refused', () => {
    expect(MAY_IMPORT.storage).not.toContain('jobs');
    expect(MAY_IMPORT.storage).not.toContain('identity');
    expect(MAY_IMPORT.identity).not.toContain('http');
    expect(MAY_IMPORT.identity).not.toContain('jobs');
    expect(MAY_IMPORT.jobs).not.toContain('http');
    expect(MAY_IMPORT.jobs).not.toContain('identity');
    expect(floorOf('http/error-response.ts')).toBe('http');
    expect(floorOf('storage/postgres/pg-store.ts')).toBe('storage');
    expect(floorOf('problem.ts')).toBe('base');
    expect(floorOf('new-file.ts')).toBeUndefined();
  });
});
