// JSON report (schemas/report.schema.json): deterministic, no clock, no absolute paths beyond what was given.
import type { Finding } from '../core/diagnostic.js';
import { VERSION } from '../runtime/version.js';
import { ruleDocsUrl } from '../rules/index.js';
import type { CheckResult } from '../rules/rule-runner.js';
import { jsonPieces } from './json-pieces.js';

const withDocs = (f: Finding) => ({ ...f, docsUrl: ruleDocsUrl(f.ruleId) });

export function toJsonReport(result: CheckResult): object {
  return {
    tool: { name: 'signgate', version: VERSION },
    settings: result.settings,
    summary: result.summary,
    files: result.files.map((f) => ({ ...f, findings: f.findings.map(withDocs) })),
    uploadSet: { ...result.uploadSet, findings: result.uploadSet.findings.map(withDocs) },
  };
}

export function formatJson(result: CheckResult): string {
  return `${JSON.stringify(toJsonReport(result), null, 2)}\n`;
}

/** formatJson's text, the same to the character, in pieces (an element of `files` at a time). */
export function* formatJsonPieces(result: CheckResult): Generator<string> {
  yield* jsonPieces(toJsonReport(result));
  yield '\n';
}
