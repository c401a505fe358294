// JUnit XML for CI test tabs: one test case per file (failures are error findings) and one for the upload set.
import type { Finding } from '../core/diagnostic.js';
import type { CheckResult } from '../rules/rule-runner.js';

/** Escapes text and attribute values, and drops characters XML 1.0 cannot carry. */
export function escapeXml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const line = (f: Finding) => `${f.ruleId} ${f.rule} (${f.severity}): ${f.message}\n  fix: ${f.hint}`;

function testCase(name: string, findings: readonly Finding[], skipped?: string): string {
  const errors = findings.filter((f) => f.severity === 'error');
  const others = findings.filter((f) => f.severity !== 'error');
  const parts: string[] = [];
  if (skipped && errors.length === 0) parts.push(`      <skipped message="${escapeXml(skipped)}"/>`);
  for (const f of errors)
    parts.push(`      <failure message="${escapeXml(`${f.ruleId} ${f.rule}: ${f.message}`)}" type="${escapeXml(f.ruleId)}">${escapeXml(line(f))}</failure>`);
  if (others.length) parts.push(`      <system-out>${escapeXml(others.map(line).join('\n'))}</system-out>`);
  const open = `    <testcase classname="signgate.check" name="${escapeXml(name)}"`;
  return parts.length ? `${open}>\n${parts.join('\n')}\n    </testcase>` : `${open}/>`;
}

export function formatJunit(check: CheckResult): string {
  const cases = [
    ...check.files.map((f) => testCase(f.path, f.findings, f.outcome === 'not-required' ? f.reason : undefined)),
    testCase('upload set', check.uploadSet.findings),
  ];
  const failures = check.files.filter((f) => f.outcome === 'fail').length + (check.uploadSet.findings.some((f) => f.severity === 'error') ? 1 : 0);
  const skipped = check.files.filter((f) => f.outcome === 'not-required').length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="signgate" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
    `  <testsuite name="signgate check" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
