// Names compared as NTFS compares them (simple uppercase per UTF-16 unit, trailing dots and spaces dropped),
// and the pre-flight duplicate rule that uses the same comparison as the service.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { describe, expect, test } from 'vitest';
import { sameWindowsPath, windowsNameProblem, windowsPathKey, windowsSegmentKey } from '../../src/core/windows-names.js';
import { checkPaths, ruleNames } from '../helpers/check.js';
import { fixturePath } from '../helpers/fixtures.js';

describe('windowsSegmentKey / sameWindowsPath', () => {
  test.each([
    ['σ.dll', 'ς.dll', 'final and medial sigma both upcase to Σ'],
    ['Σ.dll', 'ς.dll', 'capital sigma'],
    ['a.DLL', 'A.dll', 'ASCII case'],
    ['ÄÖÜ.dll', 'äöü.dll', 'Latin-1 letters'],
    ['Ǆ.dll', 'ǆ.dll', 'title-case digraph upcases to one unit'],
    ['a.dll.', 'a.dll', 'a trailing dot is dropped by Win32'],
    ['a.dll . .', 'a.dll', 'trailing dots and spaces, mixed'],
    ['Addins\\Foo.dll', 'addins/FOO.DLL', 'backslash and slash separate alike'],
    ['dir. \\x.dll', 'DIR/x.dll', 'trailing dots and spaces in a folder segment'],
  ])('%s and %s are the same file (%s)', (a, b) => {
    expect(sameWindowsPath(a, b)).toBe(true);
  });

  test.each([
    ['ß.dll', 'SS.dll', 'ß upcases to two units, so it stays ß'],
    ['ﬀ.dll', 'FF.dll', 'a ligature upcases to two units'],
    ['\u00e9.dll', 'e\u0301.dll', 'NTFS does not normalize: composed and decomposed é differ'],
    ['𐐨.dll', '𐐀.dll', 'outside the BMP: each surrogate half on its own, no mapping'],
    ['a .dll', 'a.dll', 'inner spaces stay'],
    ['.dll', 'dll', 'a leading dot stays'],
    ['a/b.dll', 'a\\c.dll', 'different files in one folder'],
  ])('%s and %s are different files (%s)', (a, b) => {
    expect(sameWindowsPath(a, b)).toBe(false);
  });

  test('keys join segments with / whatever the separator; uppercase only where one unit results', () => {
    expect(windowsPathKey('Addins\\Sub/ς.dll')).toBe('ADDINS/SUB/Σ.DLL');
    expect(windowsSegmentKey('straße')).toBe('STRAßE');
    expect(windowsSegmentKey('...')).toBe('');
    // path.win32 agrees that these are one folder level apart, which the key keeps.
    expect(windowsPathKey(win32.join('a', 'b', 'c.dll'))).toBe('A/B/C.DLL');
  });
});

describe('SG502 duplicate-name compares as Windows does', () => {
  function tree(files: string[]): string {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-names-'));
    for (const name of files) {
      mkdirSync(join(dir, name, '..'), { recursive: true });
      copyFileSync(fixturePath('findings/passing/FindingAddin.dll'), join(dir, name));
    }
    return dir;
  }

  test('σ.dll and ς.dll in one upload collide', async () => {
    const result = await checkPaths([tree(['σ.dll', 'ς.dll'])]);
    expect(ruleNames(result)).toEqual(['duplicate-name']);
  });

  test('ß.dll and SS.dll do not', async () => {
    const result = await checkPaths([tree(['ß.dll', 'SS.dll'])]);
    expect(ruleNames(result)).not.toContain('duplicate-name');
  });
});

describe('windowsNameProblem: names a result package may not write on Windows', () => {
  test.each([
    ['', 'empty'],
    ['.', '"."'],
    ['sub/./x.dll', '"."'],
    ['a/../b.dll', '".."'],
    ['/abs.dll', 'absolute'],
    ['C:evil.dll', 'drive letter'],
    ['a:b.dll', 'drive letter'],
    ['sub/x|y.dll', 'character'],
    ['CON.dll', 'reserved'],
    ['sub/lpt1', 'reserved'],
    ['x.dll.', 'dot or space'],
    ['x.dll ', 'dot or space'],
    [`${'a'.repeat(256)}.dll`, 'longer than 255'],
  ])('%j: %s', (name, words) => {
    expect(windowsNameProblem(name)).toContain(words);
  });

  test.each([['SampleAddin.dll'], ['de\\SampleAddin.resources.dll'], ['Addins/σ.dll']])('%j is fine', (name) => {
    expect(windowsNameProblem(name)).toBeUndefined();
    // and path.win32 keeps it inside the destination
    expect(win32.relative('C:\\dest', win32.join('C:\\dest', name)).startsWith('..')).toBe(false);
  });
});
