// Reporters by format name; each returns a string (the text and JSON reports also in pieces) and the CLI decides
// where it goes.
import type { ChalkInstance } from 'chalk';
import type { CheckResult } from '../rules/rule-runner.js';
import { formatGithub } from './github.js';
import { formatJson, formatJsonPieces } from './json.js';
import { formatJunit } from './junit.js';
import { formatMsbuild } from './msbuild.js';
import { formatSarif } from './sarif.js';
import { formatTerminal, formatTerminalPieces } from './terminal.js';

/** What one report format makes of a check: the whole text, and the same text in pieces when it has its own. */
interface Reporter {
  readonly whole: (result: CheckResult, options: { color: ChalkInstance }) => string;
  readonly pieces?: (result: CheckResult, options: { color: ChalkInstance }) => Iterable<string>;
}

/**
 * The reporters by format name: the one list of check's formats. `--format`'s choices (and so `--help`), the
 * config schema's `format` enum and the library's ReportFormats all come from it (test/report/formats.test.ts).
 */
const REPORTERS = {
  text: { whole: formatTerminal, pieces: formatTerminalPieces },
  json: { whole: (r) => formatJson(r), pieces: (r) => formatJsonPieces(r) },
  sarif: { whole: (r) => formatSarif(r) },
  junit: { whole: (r) => formatJunit(r) },
  msbuild: { whole: (r) => formatMsbuild(r) },
  github: { whole: (r) => formatGithub(r) },
} as const satisfies Record<string, Reporter>;

export type ReportFormat = keyof typeof REPORTERS;
/** Check's report formats, in the order `--help` lists them. */
export const ReportFormats = Object.keys(REPORTERS) as readonly ReportFormat[] as readonly [ReportFormat, ...ReportFormat[]];

/** The report of `result` in `format`, whole. */
export function formatReport(format: ReportFormat, result: CheckResult, options: { color: ChalkInstance }): string {
  return REPORTERS[format].whole(result, options);
}

/**
 * formatReport's text, the same to the character, in pieces: the text report a line at a time and the JSON report a
 * file at a time, so that the report of a large set is written without ever being one string; the other formats
 * whole, as one piece.
 */
export function formatReportPieces(format: ReportFormat, result: CheckResult, options: { color: ChalkInstance }): Iterable<string> {
  const reporter: Reporter = REPORTERS[format];
  return reporter.pieces ? reporter.pieces(result, options) : [reporter.whole(result, options)];
}
