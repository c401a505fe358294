// The text report: counts in the right number, and one documentation link per rule that reported something.
import { Chalk } from 'chalk';
import { describe, expect, test } from 'vitest';
import { countOf, formatTerminal } from '../../src/report/terminal.js';
import { checkPaths } from '../helpers/check.js';

const plain = new Chalk({ level: 0 });

describe('text report', () => {
  test('countOf: one file, two files, zero errors', () => {
    expect([countOf(1, 'file'), countOf(2, 'file'), countOf(0, 'error'), countOf(1, 'assembly', 'assemblies')]).toEqual([
      '1 file',
      '2 files',
      '0 errors',
      '1 assembly',
    ]);
  });

  test('a single warning is "1 warning", and its rule page is linked once at the end', async () => {
    const text = formatTerminal(await checkPaths(['fixtures/addin'], {}, { severities: { 'loads-under-no-license': 'note' } }), { color: plain });
    // The notes, asked for: the six delay-signed files load under no license until the service signs them (SG801).
    expect(text).toContain('0 errors, 1 warning, 6 notes');
    expect(text).toMatch(
      /rule documentation:\n {2}SG501 vendor-assembly-included {2}https:\/\/github\.com\/signgate\/signgate\/blob\/main\/docs\/rules\.md#sg501\n {2}SG801 loads-under-no-license {2}https:\/\/github\.com\/signgate\/signgate\/blob\/main\/docs\/rules\.md#sg801\n$/,
    );
  });

  test('several findings of one rule give one link; no findings, no link section', async () => {
    const text = formatTerminal(
      await checkPaths(['fixtures/findings/wrong-key', 'fixtures/findings/wrong-key-hash-header'], {}, { severities: { 'loads-under-no-license': 'note' } }),
      { color: plain },
    );
    expect(text.match(/#sg205/g)).toHaveLength(1);
    expect(text).toMatch(/\n[2-9] errors, 0 warnings, 2 notes/);
    // No findings at all (the note SG801 off, as by default): no link section.
    expect(formatTerminal(await checkPaths(['fixtures/findings/passing']), { color: plain })).not.toContain('rule documentation');
  });
});
