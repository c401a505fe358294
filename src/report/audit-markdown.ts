// Audit as Markdown: a summary, a table of every file, the findings and the changes since the previous release.
import type { AuditReport } from '../rules/audit.js';

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');

export function formatAuditMarkdown(report: AuditReport, generatedAt: string | null): string {
  const s = report.summary;
  const lines = [
    '# Release audit: strong names and vendor signing',
    '',
    ...(generatedAt ? [`Generated ${generatedAt}`, ''] : []),
    `Vendor **${report.settings.vendor}**; expected keys: ${report.settings.keys.map((k) => `${k.token}${k.optionId !== null ? ` (option ${k.optionId})` : ''}`).join(', ')}.`,
    '',
    `**${s.files} files**: ${s.byOutcome.ok} ok, ${s.byOutcome.fail} fail, ${s.byOutcome['not-required']} not required; ${s.errors} errors, ${s.warnings} warnings.`,
    '',
    'By strong-name state: ' + Object.entries(s.byState).map(([k, v]) => `${k} ${v}`).join(', ') + '.',
    '',
    '| File | Assembly | Version | Token | State | Expected key | Option | Vendor attribute | Needs signing | Job | Outcome |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.files.map((f) =>
      `| ${cell(f.path)} | ${cell(f.assembly?.name ?? '')} | ${f.assembly?.version ?? ''} | ${f.assembly?.publicKeyToken ?? ''} | ${f.strongName?.state ?? 'unreadable'} | ${f.strongName?.signedWithExpectedKey ? 'yes' : 'no'} | ${f.strongName?.optionId ?? ''} | ${f.vendorAttribute} | ${f.needsSigning ? 'yes' : 'no'} | ${f.job ? `${f.job.jobId} (${f.job.date})` : ''} | ${f.outcome} |`,
    ),
    '',
    '## Files',
    '',
    ...report.files.flatMap((f) => [`### ${f.path}`, '', `- SHA-256: \`${f.sha256}\`, ${f.size} bytes`, `- ${cell(f.reason)}`, ...f.findings.map((x) => `- **${x.severity}** ${x.ruleId} ${x.rule}: ${cell(x.message)}`), '']),
    '## Findings',
    '',
    ...(report.findings.length ? report.findings.map((x) => `- **${x.severity}** ${x.ruleId} ${x.rule}${x.file ? ` (${x.file})` : ''}: ${cell(x.message)}`) : ['None.']),
    '',
  ];
  if (report.manifest) lines.push('## Manifest', '', `Missing: ${report.manifest.missing.join(', ') || 'none'}. Extra: ${report.manifest.extra.join(', ') || 'none'}.`, '');
  if (report.changes) {
    const c = report.changes;
    lines.push('## Changes since the previous release', '');
    for (const [label, list] of [['Added', c.added], ['Removed', c.removed], ['Re-signed', c.resigned], ['Key changed', c.keyChanged], ['Identity changed', c.identityChanged]] as const) {
      lines.push(`- ${label}: ${list.length ? list.join(', ') : 'none'}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
