// Text report for a terminal: findings grouped by file with rule, message and fix, then a summary.
import type { ChalkInstance } from 'chalk';
import type { Finding, Severity } from '../core/diagnostic.js';
import type { CheckResult } from '../rules/runner.js';

export interface TerminalOptions {
  readonly color: ChalkInstance;
}

export function formatTerminal(check: CheckResult, { color: c }: TerminalOptions): string {
  const sev: Record<Severity, (s: string) => string> = { error: c.red, warning: c.yellow, note: c.cyan };
  const finding = (f: Finding) => [`    ${sev[f.severity](f.severity.padEnd(7))} ${c.bold(`${f.ruleId} ${f.rule}`)}  ${f.message}`, `            ${c.dim(`fix: ${f.hint}`)}`];
  const lines: string[] = [];
  for (const f of check.files) {
    const mark = f.outcome === 'pass' ? c.green('pass') : f.outcome === 'fail' ? c.red('FAIL') : c.dim('skip');
    lines.push(`${mark} ${c.bold(f.path)}  ${c.dim(f.reason)}`);
    for (const x of f.findings) lines.push(...finding(x));
  }
  if (check.uploadSet.findings.length) {
    lines.push('', c.bold('upload set'));
    for (const x of check.uploadSet.findings) lines.push(...finding(x));
  }
  const s = check.summary;
  const mb = (check.uploadSet.totalBytes / 1e6).toFixed(1);
  lines.push(
    '',
    `${s.files} files: ${s.needsSigning} need signing (${c.green(`${s.passed} pass`)}, ${s.failed ? c.red(`${s.failed} fail`) : '0 fail'}), ${s.notRequired} not required; ` +
      `upload: ${s.upload} files, ${mb} MB of ${(check.uploadSet.maxUploadBytes / 1e6).toFixed(0)} MB`,
    `${s.errors ? c.red(`${s.errors} errors`) : '0 errors'}, ${s.warnings ? c.yellow(`${s.warnings} warnings`) : '0 warnings'}, ${s.notes} notes${check.settings.online ? '' : ' (offline: licenses not checked)'}`,
  );
  return `${lines.join('\n')}\n`;
}
