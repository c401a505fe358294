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

export const ReportFormats = ['text', 'json', 'sarif', 'junit', 'msbuild', 'github'] as const;
export type ReportFormat = (typeof ReportFormats)[number];

export function formatReport(format: ReportFormat, result: CheckResult, options: { color: ChalkInstance }): string {
  switch (format) {
    case 'text':
      return formatTerminal(result, options);
    case 'json':
      return formatJson(result);
    case 'sarif':
      return formatSarif(result);
    case 'junit':
      return formatJunit(result);
    case 'msbuild':
      return formatMsbuild(result);
    case 'github':
      return formatGithub(result);
  }
}

/**
 * formatReport's text, the same to the character, in pieces: the text report a line at a time and the JSON report a
 * file at a time, so that the report of a large set is written without ever being one string; the other formats
 * whole, as one piece.
 */
export function formatReportPieces(format: ReportFormat, result: CheckResult, options: { color: ChalkInstance }): Iterable<string> {
  switch (format) {
    case 'text':
      return formatTerminalPieces(result, options);
    case 'json':
      return formatJsonPieces(result);
    default:
      return [formatReport(format, result, options)];
  }
}
