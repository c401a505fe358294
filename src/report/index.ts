// Reporters by format name; each returns a string and the CLI decides where it goes.
import type { ChalkInstance } from 'chalk';
import type { CheckResult } from '../rules/runner.js';
import { formatGithub } from './github.js';
import { formatJson } from './json.js';
import { formatJunit } from './junit.js';
import { formatMsbuild } from './msbuild.js';
import { formatSarif } from './sarif.js';
import { formatTerminal } from './terminal.js';

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
