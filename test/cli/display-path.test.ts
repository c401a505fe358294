// displayPath answers paths outside the working folder without path.relative on POSIX; the answer must be the one
// path.relative gives, for every shape of path.
import { basename, isAbsolute, relative, sep } from 'node:path';
import { describe, expect, test } from 'vitest';
import { displayPath } from '../../src/workflows/input-paths.js';

/** What displayPath answered before its shortcut: path.relative, then absolute for anything outside. */
function reference(absolutePath: string, cwd: string): string {
  const rel = relative(cwd, absolutePath);
  const shown = rel === '' ? basename(absolutePath) : rel.startsWith('..') || isAbsolute(rel) ? absolutePath : rel;
  return shown.split(sep).join('/');
}

describe.skipIf(sep !== '/')('displayPath', () => {
  const folders = ['/work/repo', '/work/repo/', '/', '/work/./repo', '/work/x/../repo', '/home/u/.cache'];
  const paths = [
    '/work/repo/bin/a.dll',
    '/work/repo',
    '/work/repository/a.dll',
    '/work/repo/../other/a.dll',
    '/work/x/../repo/a.dll',
    '/work/repo/./a.dll',
    '/work//repo/a.dll',
    '/usr/lib/mono/4.5/mscorlib.dll',
    '/home/u/.cache/signgate/a.dll',
    '/home/u/.cache',
    '/work/repo/.hidden/a.dll',
    '/a.dll',
    '/work/repo/bin/',
  ];
  test.each(folders.flatMap((cwd) => paths.map((p) => [p, cwd] as const)))('%s from %s', (path, cwd) => {
    expect(displayPath(path, cwd)).toBe(reference(path, cwd));
  });
});
