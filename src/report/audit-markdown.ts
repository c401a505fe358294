// Audit as Markdown: a summary, a table of every file, the findings and the changes since the previous release.
import type { AuditReport } from '../audit/model.js';
import { describeAuthenticodeVerdict } from '../authenticode/verdict.js';
import { loadDetails, loadSummaryText, loadsUnderText } from './audit-load.js';
import { recordNote, signatureText } from './audit-signature.js';
import { countOf } from './terminal.js';

/**
 * Text as written, also where Markdown is rendered: what would start an HTML tag (`<i`, `</`, `<!`) or an entity
 * (`&amp;`, `&#38;`) gets a backslash (a file name may hold either), and so does a table cell's `|`.
 */
const text = (t: string) => t.replace(/<(?=[A-Za-z/!?])/g, '\\<').replace(/&(?=#?\w+;)/g, '\\&');
const cell = (t: string) => text(t).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
/** `delay-signed 6, signed 2`, or `none` for a release without files. */
const counts = (byName: Readonly<Record<string, number>>) =>
  Object.entries(byName)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

export function formatAuditMarkdown(report: AuditReport, generatedAt: string | null): string {
  const s = report.summary;
  const lines = [
    '# Release audit: strong names and vendor signing',
    '',
    ...(generatedAt ? [`Generated ${generatedAt}`, ''] : []),
    `Vendor **${report.settings.vendor}**; the organization's keys: ${report.settings.keys.map((k) => `${k.token}${k.optionId !== null ? ` (option ${k.optionId})` : ''}`).join(', ')}.`,
    '',
    `**${countOf(s.files, 'file')}**: ${s.byOutcome.ok} ok, ${s.byOutcome.fail} fail, ${s.byOutcome['not-required']} not required; ${countOf(s.errors, 'error')}, ${countOf(s.warnings, 'warning')}.`,
    '',
    `By strong-name state: ${counts(s.byState)}.`,
    '',
    ...(s.byAuthenticode ? [`By Authenticode signature: ${counts(s.byAuthenticode)}.`, ''] : []),
    ...(s.load ? [loadSummaryText(s.load), ''] : []),
    `Jobs come from the job ledger that \`signgate sign\` writes on the machine that signed (${report.jobSource.ledger ?? 'the signgate cache folder'})${report.jobSource.found ? '' : '; the machine that made this report has none, so no job is recorded'}.`,
    '',
    ...(recordNote(report) ? [recordNote(report)!, ''] : []),
    '| File | Assembly | Version | Token | Strong name | Authenticode | Option | Vendor attribute | Loads under | Needs signing | Job | Outcome |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.files.map(
      (f) =>
        `| ${cell(f.path)} | ${cell(f.assembly?.name ?? '')} | ${f.assembly?.version ?? ''} | ${f.assembly?.publicKeyToken ?? ''} | ${cell(f.verdict)} | ${f.authenticode ? cell(f.authenticode.state === 'valid' ? `valid: ${f.authenticode.publisher ?? ''}` : f.authenticode.state) : ''} | ${f.strongName?.optionId ?? ''} | ${f.vendorAttribute} | ${loadsUnderText(f.load)} | ${f.needsSigning ? 'yes' : 'no'} | ${f.job ? `${f.job.jobId} (${f.job.date})` : f.signature ? `${f.signature.job} (${f.signature.time}, record)` : f.needsSigning ? 'not recorded' : 'none needed'} | ${f.outcome} |`,
    ),
    '',
    '## Files',
    '',
    ...report.files.flatMap((f) => [
      `### ${text(f.path)}`,
      '',
      `- SHA-256: \`${f.sha256}\`, ${countOf(f.size, 'byte')}`,
      `- Strong name: ${f.strongName ? `${f.strongName.state}, signature ${f.strongName.signatureValid === null ? 'not present' : f.strongName.signatureValid ? 'valid' : 'invalid'}` : 'unreadable'}`,
      ...(f.authenticode ? [`- Authenticode: ${cell(describeAuthenticodeVerdict(f.authenticode))}`] : []),
      ...(signatureText(f, report.signatureRecord) ? [`- Signature record: ${cell(signatureText(f, report.signatureRecord)!)}`] : []),
      `- ${cell(f.reason)}`,
      ...loadDetails(f.load).map(([k, v]) => `- ${k}: ${cell(v)}`),
      ...f.findings.map((x) => `- **${x.severity}** ${x.ruleId} ${x.rule}: ${cell(x.message)}`),
      '',
    ]),
    '## Findings',
    '',
    ...(report.findings.length
      ? report.findings.map((x) => `- **${x.severity}** ${x.ruleId} ${x.rule}${x.file ? ` (${text(x.file)})` : ''}: ${cell(x.message)}`)
      : ['None.']),
    '',
  ];
  if (report.manifest)
    lines.push(
      '## Manifest',
      '',
      `Missing: ${report.manifest.missing.map(text).join(', ') || 'none'}. Extra: ${report.manifest.extra.map(text).join(', ') || 'none'}.`,
      '',
    );
  if (report.changes) {
    const c = report.changes;
    lines.push('## Changes since the previous release', '');
    const groups = [
      ['Added', c.added],
      ['Removed', c.removed],
      ['Lost their signature', c.signatureLost],
      ['Newly signed', c.newlySigned],
      ['Re-signed (same identity and key, new bytes)', c.resigned],
      ['Key changed', c.keyChanged],
      ['Identity changed', c.identityChanged],
      ['Vendor attribute changed', c.vendorAttributeChanged],
      ['Option changed', c.optionChanged],
      ['Authenticode publisher changed', c.publisherChanged ?? []],
    ] as const;
    for (const [label, list] of groups) lines.push(`- ${label}: ${list.length ? list.map(text).join(', ') : 'none'}`);
    if (c.files.length) lines.push('', ...c.files.map((x) => `- ${x.regression ? '**regression** ' : ''}${text(x.name)}: ${cell(x.summary)}`));
    lines.push('');
  }
  const st = report.settings;
  lines.push(
    '## Inputs',
    '',
    `- Vendor ${st.vendor}, vendor API ${st.vendorApi.join(', ')}, attribute namespace ${st.vendorNamespace}`,
    ...st.keys.map((k) => `- Key ${k.source}: token ${k.token}${k.optionId !== null ? `, option ${k.optionId}` : ''}`),
    '- Re-check a stored JSON report: `signgate audit --verify-report audit.json <release folder>`',
    '',
  );
  return lines.join('\n');
}
