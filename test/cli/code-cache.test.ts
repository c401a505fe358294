// bin/signgate.js compiles the bundled command line (dist/cli-bundle/cli.cjs) with V8's code cache of an earlier
// run of the same command, kept in <tmp>/signgate-compile-cache-<uid>/ under the bundle's content hash: the cache is
// written once, used as it is afterwards (not written again), replaced when V8 refuses it, and not used in a
// folder that others may write to. The output never depends on it.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';

const temporary = mkdtempSync(join(tmpdir(), 'signgate-code-cache-'));
afterAll(() => rmSync(temporary, { recursive: true, force: true }));

describe.runIf(process.getuid)('the code cache of the bundled command line', () => {
  const checkArgs = ['check', fixturePath('addin'), '--vendor', 'Contoso', '--key', fixturePath('test-keys/12345_public.snk'), '--json'];
  const content = /^\/\/ signgate bundle ([0-9a-f]{64})\n/.exec(readFileSync(join(repoRoot, 'dist', 'cli-bundle', 'cli.cjs'), 'utf8'))?.[1];

  test('written by the first run of a command, used as it is by the next, replaced when it is not a code cache', () => {
    expect(content, 'dist/cli-bundle/cli.cjs starts with its content hash (npm run build)').toBeDefined();
    const env = { TMPDIR: join(temporary, 'own') };
    const dir = join(env.TMPDIR, `signgate-compile-cache-${process.getuid!()}`);
    const cache = join(dir, `${content!.slice(0, 32)}-check-${process.version}-${process.arch}.bin`);
    const first = runCli(checkArgs, { env });
    expect(first.status, first.stderr).toBe(0);
    expect(readdirSync(dir)).toEqual([cache.slice(dir.length + 1)]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const written = statSync(cache);
    const second = runCli(checkArgs, { env });
    expect(second.stdout).toBe(first.stdout);
    // Accepted by V8: the file is the same one (a refused cache would be replaced through a rename).
    expect(statSync(cache).ino).toBe(written.ino);
    expect(statSync(cache).mtimeMs).toBe(written.mtimeMs);

    writeFileSync(cache, 'not a code cache');
    const third = runCli(checkArgs, { env });
    expect(third.stdout).toBe(first.stdout);
    expect(readFileSync(cache, 'utf8')).not.toBe('not a code cache');
    expect(statSync(cache).size).toBeGreaterThan(10_000);
  });

  test('a glob (loaded from node_modules on demand) works from a cached compile', () => {
    const env = { TMPDIR: join(temporary, 'glob') };
    const args = ['verify', '--json', 'fixtures/assemblies/signed-*.dll'];
    const runs = [runCli(args, { env }), runCli(args, { env })];
    for (const r of runs) expect(r.stderr).toBe('');
    expect(runs[1]!.stdout).toBe(runs[0]!.stdout);
    expect((JSON.parse(runs[1]!.stdout) as unknown[]).length).toBeGreaterThan(0);
  });

  test('a cache folder that others may write to is not used', () => {
    const env = { TMPDIR: join(temporary, 'shared') };
    const dir = join(env.TMPDIR, `signgate-compile-cache-${process.getuid!()}`);
    const first = runCli(checkArgs, { env });
    expect(readdirSync(dir)).toHaveLength(1);
    rmSync(join(dir, readdirSync(dir)[0]!));
    chmodSync(dir, 0o777);
    const second = runCli(checkArgs, { env });
    expect(second.stdout).toBe(first.stdout);
    expect(readdirSync(dir)).toEqual([]);
  });
});
