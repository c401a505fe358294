// bin/signgate.js compiles the bundled command line (dist/cli-bundle/cli.cjs) with V8's code cache of an earlier
// run of the same command, kept in <tmp>/signgate-compile-cache-<uid>/ under the bundle's content hash: the cache is
// written once, used as it is afterwards (not written again), replaced when V8 refuses it, and not used in a
// folder that others may write to. The output never depends on it.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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

    // The heap flags check sets for itself head the cache, so the next run compiles under them (V8 checks its flags).
    expect(readFileSync(cache).subarray(0, 80).toString('latin1')).toMatch(/^signgate-code-cache 1 --semi-space-growth-factor=1 --heap-growing-percent=\d+\n/);

    // A cache file naming any other V8 flag is not used (nor its flags set): it is made again.
    writeFileSync(
      cache,
      Buffer.concat([Buffer.from('signgate-code-cache 1 --allow-natives-syntax\n'), readFileSync(cache).subarray(readFileSync(cache).indexOf(10) + 1)]),
    );
    const refused = runCli(checkArgs, { env });
    expect(refused.stdout).toBe(first.stdout);
    expect(readFileSync(cache, 'latin1')).not.toContain('allow-natives-syntax');

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

describe('the bundle as bin/signgate.js reads it', () => {
  test('ASCII (read as latin1), its content line, then the function that the rest of it is', () => {
    const bytes = readFileSync(join(repoRoot, 'dist', 'cli-bundle', 'cli.cjs'));
    expect(
      bytes.findIndex((b) => b > 0x7f),
      'dist/cli-bundle/cli.cjs has a byte that is not ASCII',
    ).toBe(-1);
    expect(bytes.toString('latin1')).toMatch(
      /^\/\/ signgate bundle [0-9a-f]{64}\n\(function \(exports, require, module, __filename, __dirname\) \{[^]*\n\}\)$/,
    );
  });

  test('what is not ASCII is escaped where that keeps its value, and stops the build where it would not', async () => {
    const { asciiOnly } = (await import(pathToFileURL(join(repoRoot, 'scripts', 'bundle-cli.js')).href)) as { asciiOnly: (text: string) => string };
    const escaped = asciiOnly('const DEVICE = /^(COM[0-9\u00b9\u00b2\u00b3])$/i, s = "\u00e9\u{1f600}"; // \u2026\n');
    expect(escaped).toBe('const DEVICE = /^(COM[0-9\\u00b9\\u00b2\\u00b3])$/i, s = "\\u00e9\\ud83d\\ude00"; // \\u2026\n');
    // The same values once evaluated.
    const [fromEscaped, fromOriginal] = [escaped, 'const DEVICE = /^(COM[0-9\u00b9\u00b2\u00b3])$/i, s = "\u00e9\u{1f600}";'].map(
      (code) => new Function(`${code}; return [DEVICE.source, DEVICE.test('COM\u00b2'), s];`)() as unknown[],
    );
    expect(fromEscaped![1]).toBe(true);
    expect(fromEscaped!.slice(1)).toEqual(fromOriginal!.slice(1));
    expect(() => asciiOnly('const r = /\\\u00e9/;\n')).toThrow(/after a backslash/);
    expect(() => asciiOnly('const t = `\u00e9`;\n')).toThrow(/template literal/);
  });
});
