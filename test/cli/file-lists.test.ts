// Long file lists bypass yargs' per-argument work and come back whole, in order, with every option still seen.
import { readdirSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { collapseFileLists } from '../../src/cli/file-lists.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { publicKeyToken } from '../../src/strongname/key-token.js';
import { verifyFile } from '../../src/workflows/scan-file.js';
import { fixture, fixturePath, runCli } from '../helpers/fixtures.js';

const names = (n: number, prefix = 'f') => Array.from({ length: n }, (_, i) => `${prefix}${i}.dll`);

describe('collapseFileLists', () => {
  test('a long run becomes one placeholder and comes back in its place', () => {
    const files = names(20);
    const lists = collapseFileLists(['inspect', '--json', 'first.dll', ...files, '--key-map', 'm.config', ...names(10, 'g')]);
    expect(lists.argv.length).toBeLessThan(10);
    expect(lists.argv.slice(0, 4)).toEqual(['inspect', '--json', 'first.dll', expect.stringContaining('\u0000')]);
    expect(lists.argv).toContain('--key-map');
    expect(lists.argv[lists.argv.indexOf('--key-map') + 1]).toBe('m.config'); // an option's value stays with it
    const args: Record<string, unknown> = { inputs: lists.argv.filter((a, i) => i > 0 && !a.startsWith('-') && a !== 'm.config') };
    lists.restore(args, 'inputs');
    expect(args.inputs).toEqual(['first.dll', ...files, ...names(10, 'g')]);
  });

  test('other commands, short runs and what follows -- are left to yargs', () => {
    const argv = ['check', ...names(30), '--key', 'a.snk', 'b.snk'];
    expect(collapseFileLists(argv).argv).toEqual(argv);
    const short = ['verify', ...names(3)];
    expect(collapseFileLists(short).argv).toEqual(short);
    const dashes = ['verify', '--', ...names(30)];
    expect(collapseFileLists(dashes).argv).toEqual(dashes);
  });
});

describe('the command line with many files', () => {
  const dir = 'assemblies';
  const files = readdirSync(fixturePath(dir))
    .filter((n) => /\.(dll|exe)$/.test(n))
    .map((n) => `fixtures/${dir}/${n}`);

  test('verify --json with a key between the files prints a record for every file, judged against that key', () => {
    expect(files.length).toBeGreaterThan(12);
    const half = Math.floor(files.length / 2);
    const r = runCli(['verify', ...files.slice(0, half), '--key', fixturePath('test-keys/12345_public.snk'), ...files.slice(half), '--json']);
    const printed = JSON.parse(r.stdout) as { path: string; valid: boolean; reason: string | null }[];
    expect(printed.map((p) => p.path)).toEqual([...files].sort());
    const keyToken = publicKeyToken(parseStrongNameKeyFile(fixture('test-keys/12345_public.snk')).publicKey.blob);
    for (const p of printed) {
      const own = verifyFile({ absolutePath: fixturePath(p.path.slice('fixtures/'.length)), displayPath: p.path });
      // --key was seen: a file signed with another key is not valid, whatever its own signature says.
      if (own.state === 'signed' && own.publicKeyToken !== keyToken) {
        expect(p.valid).toBe(false);
        expect(p.reason).toMatch(/not the expected key token/);
      } else {
        expect(p.valid).toBe(own.valid);
      }
    }
  });
});
