// Every build of the NuGet packages has a version of its own (scripts/build-nuget.js): NuGet keeps a version it has
// restored once and never reads the package again, so a rebuilt package under the same version would be stale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
// @ts-expect-error: a plain script of the repository, without types
import { packageVersionOf } from '../../scripts/build-nuget.js';

const version = packageVersionOf as (o: { release?: boolean; now?: number; root?: string }) => string;
const dir = mkdtempSync(join(tmpdir(), 'signgate-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: dir, encoding: 'utf8' }).trim();

test('outside a git checkout: a local pre-release of its own time; --release: the plain version', () => {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '1.2.3' }));
  expect(version({ root: dir, now: 1700000000 })).toBe('1.2.3-local.1700000000');
  expect(version({ root: dir, release: true })).toBe('1.2.3');
});

test('in a checkout: one version per commit, ordered by the commit count; a changed work tree is a version of its own', () => {
  git('init', '-q');
  git('add', 'package.json');
  git('commit', '-q', '-m', 'one');
  const first = version({ root: dir, now: 1 });
  expect(first).toBe(`1.2.3-dev.1.g${git('rev-parse', '--short=10', 'HEAD')}`);
  writeFileSync(join(dir, 'Program.cs'), '// new');
  const dirty = version({ root: dir, now: 2 });
  expect(dirty).toBe(`${first}.dirty.2`);
  git('add', 'Program.cs');
  git('commit', '-q', '-m', 'two');
  const second = version({ root: dir, now: 3 });
  expect(second).toBe(`1.2.3-dev.2.g${git('rev-parse', '--short=10', 'HEAD')}`);
  expect(second).not.toBe(first);
  expect(version({ root: dir, release: true })).toBe('1.2.3');
});

test("the executables say the packages' version: the one-file script that build-nuget.js builds them from prints it for --version", async () => {
  // @ts-expect-error: a plain script of the repository, without types
  const { bundle } = (await import('../../scripts/build-sea.js')) as { bundle: (out: string, cold: string, version?: string) => Promise<void> };
  const out = join(dir, 'sea');
  await bundle(join(out, 'signgate.cjs'), join(out, 'cold.cjs'), '0.1.0-dev.611.ge5fa2bdff2');
  expect(execFileSync(process.execPath, [join(out, 'signgate.cjs'), '--version'], { encoding: 'utf8' })).toBe('0.1.0-dev.611.ge5fa2bdff2\n');
}, 120_000);
