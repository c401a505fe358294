// GitHub Actions workflow commands: one `::error` / `::warning` / `::notice` annotation per finding, shown on
// the run's summary and, for files in the repository, beside the file ("Workflow commands for GitHub Actions").
import type { Finding, Severity } from '../core/diagnostic.js';
import { ruleDocsUrl } from '../rules/index.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { countOf, findingCounts, signingCounts } from './terminal.js';

const COMMAND: Record<Severity, string> = { error: 'error', warning: 'warning', note: 'notice' };

/** The runner's escaping for a command's message: %, CR and LF. */
const escapeData = (text: string) => text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');

/** Property values also escape the separators `:` and `,`. */
const escapeProperty = (text: string) => escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');

function annotation(f: Finding): string {
  const properties = [...(f.file === null ? [] : [`file=${escapeProperty(f.file)}`]), `title=${escapeProperty(`${f.ruleId} ${f.rule}`)}`];
  const message = `${f.message}\n${f.hint}\n${ruleDocsUrl(f.ruleId)}`;
  return `::${COMMAND[f.severity]} ${properties.join(',')}::${escapeData(message)}`;
}

export function formatGithub(result: CheckResult): string {
  const summary = `signgate check: ${countOf(result.summary.files, 'file')}, ${signingCounts(result)}; ${findingCounts(result)}`;
  return [...result.findings.map(annotation), summary, ''].join('\n');
}
