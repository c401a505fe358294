// The check reports in pieces (formatReportPieces), as the command line writes them: the same text, character for
// character, as formatReport makes whole, and printed in parts that each end a line, an empty text as an empty line.
import { Chalk } from 'chalk';
import { describe, expect, test } from 'vitest';
import { printPieces } from '../../src/cli/commands/check-command.js';
import type { Io } from '../../src/cli/output.js';
import { formatReport, formatReportPieces, ReportFormats } from '../../src/report/index.js';
import { checkPaths } from '../helpers/check.js';

const plain = new Chalk({ level: 0 });
const colored = new Chalk({ level: 1 });

function printed(pieces: Iterable<string>): { parts: string[]; text: string } {
  const parts: string[] = [];
  const io: Io = { out: (t) => parts.push(t.endsWith('\n') ? t : `${t}\n`), err: () => {}, color: plain };
  printPieces(io, pieces);
  return { parts, text: parts.join('') };
}

describe('check reports in pieces', () => {
  test("every format: the pieces make formatReport's text; text and JSON come a line or a file at a time", async () => {
    const result = await checkPaths(
      ['fixtures/addin', 'fixtures/findings/wrong-key', 'fixtures/findings/passing'],
      {},
      { severities: { 'loads-under-no-license': 'note' } },
    );
    for (const format of ReportFormats) {
      for (const color of [plain, colored]) {
        const pieces = [...formatReportPieces(format, result, { color })];
        expect(pieces.join(''), format).toBe(formatReport(format, result, { color }));
        if (format === 'text' || format === 'json') expect(pieces.length, format).toBeGreaterThan(result.files.length);
      }
    }
  });

  test('printed as io.out prints the whole text: parts of about 64 KB, each ending a line', async () => {
    const result = await checkPaths(['fixtures']);
    const whole = formatReport('json', result, { color: plain });
    expect(whole.length).toBeGreaterThan(65536);
    const { parts, text } = printed(formatReportPieces('json', result, { color: plain }));
    expect(text).toBe(whole);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.endsWith('\n')).toBe(true);
      expect(part.length).toBeLessThan(2 * 65536);
    }
    // As io.out: an empty text is an empty line; a text without a last line end gets one.
    expect(printed([]).text).toBe('\n');
    expect(printed(['a\nb']).text).toBe('a\nb\n');
  });
});
