// Text report for a terminal: findings grouped by file with rule, message and fix, then a summary and
// the documentation link of each rule that reported something.
import type { ChalkInstance } from 'chalk';
import type { Finding, Severity } from '../core/diagnostic.js';
import { ruleDocsUrl } from '../rules/index.js';
import type { CheckResult } from '../rules/rule-runner.js';

/** `1 file`, `2 files`, `0 errors`. */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

type Paint = (text: string) => string;

/** `3 errors, 1 warning, 0 notes`: the summary's findings, for the one-line summaries of the build formats. */
export function findingCounts(check: CheckResult): string {
  const s = check.summary;
  return `${countOf(s.errors, 'error')}, ${countOf(s.warnings, 'warning')}, ${countOf(s.notes, 'note')}`;
}

/** True when the check says there is nothing to sign (SG504): then nothing is uploaded either. */
function nothingToSign(check: CheckResult): boolean {
  return check.findings.some((f) => f.ruleId === 'SG504');
}

/**
 * What the files come to for signing: `7 need signing (6 pass, 1 fail)`. When nothing is to be signed (SG504: no file
 * uses the vendor API), the files that only carry an option's key are said to be that, not work to sign: they go
 * with an add-in, and there is none (a mistyped --vendor makes the add-in one of them).
 */
export function signingCounts(check: CheckResult, paint: { pass: Paint; fail: Paint } = { pass: (s) => s, fail: (s) => s }): string {
  const s = check.summary;
  const fail = s.failed ? paint.fail(`${s.failed} fail`) : '0 fail';
  if (s.needsSigning > 0 && nothingToSign(check)) {
    const carry = `${s.needsSigning} carr${s.needsSigning === 1 ? 'ies' : 'y'} an option's key${s.failed ? ` (${fail})` : ''}`;
    return `${carry}, but no file uses the vendor API (${check.settings.vendorApi.join(', ')}), so nothing is signed (SG504)`;
  }
  return `${s.needsSigning} need${s.needsSigning === 1 ? 's' : ''} signing (${paint.pass(`${s.passed} pass`)}, ${fail})`;
}

export interface TerminalOptions {
  readonly color: ChalkInstance;
}

export function formatTerminal(check: CheckResult, options: TerminalOptions): string {
  return `${[...terminalLines(check, options)].join('\n')}\n`;
}

/** formatTerminal's text, the same to the character, a line at a time (each piece a line and its end). */
export function* formatTerminalPieces(check: CheckResult, options: TerminalOptions): Generator<string> {
  for (const line of terminalLines(check, options)) yield `${line}\n`;
}

/** The lines of the text report, without their ends. */
function* terminalLines(check: CheckResult, { color: c }: TerminalOptions): Generator<string> {
  const sev: Record<Severity, (s: string) => string> = { error: c.red, warning: c.yellow, note: c.cyan };
  const finding = (f: Finding) => [
    `    ${sev[f.severity](f.severity.padEnd(7))} ${c.bold(`${f.ruleId} ${f.rule}`)}  ${f.message}`,
    `            ${c.dim(`fix: ${f.hint}`)}`,
  ];
  for (const f of check.files) {
    const mark = f.outcome === 'pass' ? c.green('pass') : f.outcome === 'fail' ? c.red('FAIL') : c.dim('skip');
    yield `${mark} ${c.bold(f.path)}  ${c.dim(f.reason)}`;
    for (const x of f.findings) yield* finding(x);
  }
  if (check.uploadSet.findings.length) {
    yield '';
    yield c.bold('upload set');
    for (const x of check.uploadSet.findings) yield* finding(x);
  }
  const s = check.summary;
  const mb = (check.uploadSet.totalBytes / 1e6).toFixed(1);
  const errors = countOf(s.errors, 'error');
  const warnings = countOf(s.warnings, 'warning');
  yield '';
  yield `${countOf(s.files, 'file')}: ${signingCounts(check, { pass: c.green, fail: c.red })}, ${s.notRequired} not required; ` +
    (nothingToSign(check) ? 'upload: none' : `upload: ${countOf(s.upload, 'file')}, ${mb} MB of ${(check.uploadSet.maxUploadBytes / 1e6).toFixed(0)} MB`);
  yield `${s.errors ? c.red(errors) : errors}, ${s.warnings ? c.yellow(warnings) : warnings}, ${countOf(s.notes, 'note')}${check.settings.online ? '' : ' (offline: licenses not checked)'}`;
  const reported = [...new Map(check.findings.map((f) => [f.ruleId, f.rule])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (reported.length) {
    yield '';
    yield c.dim('rule documentation:');
    for (const [id, name] of reported) yield c.dim(`  ${id} ${name}  ${ruleDocsUrl(id)}`);
  }
}
