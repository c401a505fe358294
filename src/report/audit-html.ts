// Audit as one self-contained HTML file: no network, no external assets. A summary chart, a sortable and
// filterable table that fits the page from phone to desktop (columns by priority, a details view per row),
// the evidence the report rests on, light and dark colour schemes, and a printable layout.
import { recordNote, signatureText } from './audit-signature.js';
import { loadDetails, loadSummaryText, loadsUnderText } from './audit-load.js';
import { VERSION } from '../runtime/version.js';
import { describeAuthenticodeVerdict } from '../authenticode/verdict.js';
import type { AuditFile, AuditReport } from '../audit/model.js';
import { escapeXml as esc } from './junit.js';
import { countOf } from './terminal.js';

// Column priorities: 1 always shown, 2 from 720 px, 3 from 1000 px, 4 from 1180 px. Every value of a hidden
// column is in the row's details view, so nothing is out of reach on a phone.
const CSS = `
:root { --bg:#ffffff; --fg:#1b1f24; --muted:#59636e; --line:#d5dae0; --head:#f3f5f7; --ok:#1a7f37; --fail:#cf222e; --skip:#636c76; --bar:#0969da; --warn:#9a6700; --more:#f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --bg:#0d1117; --fg:#e6edf3; --muted:#9198a1; --line:#30363d; --head:#161b22; --ok:#3fb950; --fail:#f85149; --skip:#8b949e; --bar:#4493f8; --warn:#d29922; --more:#111820; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1440px; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px; }
p { margin: 6px 0; }
.muted, .generated { color: var(--muted); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(120px, 1fr)); gap: 8px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; }
.card b { display: block; font-size: 22px; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(280px, 1fr)); gap: 8px 32px; }
.chart { margin: 0; }
.chart figcaption { font-weight: 600; margin-bottom: 4px; }
.bar { display: grid; grid-template-columns: minmax(90px, 9em) 1fr; gap: 8px; align-items: center; font-size: 13px; margin: 3px 0; }
.bar span.track { display: flex; align-items: center; gap: 6px; }
.bar i { display: block; height: 14px; border-radius: 3px; min-width: 2px; }
.controls { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; align-items: center; }
.controls input, .controls select { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.controls input { flex: 1 1 220px; min-width: 0; }
.table-wrap { border: 1px solid var(--line); border-radius: 8px; overflow-x: auto; }
/* The Outcome column, the one a release manager reads, stays in view when a wide row makes the table scroll. */
#files thead th:last-child, #files tr.file > td:last-child { position: sticky; right: 0; background: var(--bg); box-shadow: -1px 0 0 var(--line); }
#files thead th:last-child { background: var(--head); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 6px 6px; border-bottom: 1px solid var(--line); overflow-wrap: break-word; }
th { background: var(--head); font-weight: 600; }
th.toggle { width: 2.2em; }
th.sortable { padding: 0; cursor: pointer; user-select: none; }
button.sort { display: block; width: 100%; margin: 0; padding: 6px; border: 0; border-radius: 0; background: none; color: inherit; font: inherit; text-align: left; overflow-wrap: inherit; cursor: pointer; }
th[aria-sort="ascending"] .arrow::after { content: " ▲"; } th[aria-sort="descending"] .arrow::after { content: " ▼"; }
:focus-visible { outline: 2px solid var(--bar); outline-offset: 2px; }
button.sort:focus-visible { outline-offset: -3px; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
td.nowrap { white-space: nowrap; }
button.more { font: inherit; font-size: 14px; line-height: 1; padding: 4px 6px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); cursor: pointer; }
button.more[aria-expanded="true"] { background: var(--head); }
tr.more > td { background: var(--more); }
tr.more dl { display: grid; grid-template-columns: minmax(8em, max-content) 1fr; gap: 4px 12px; margin: 4px 0; }
tr.more dt { color: var(--muted); } tr.more dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }
tr.more ul { margin: 4px 0; padding-left: 18px; }
.outcome-ok { color: var(--ok); font-weight: 600; } .outcome-fail { color: var(--fail); font-weight: 600; } .outcome-not-required { color: var(--skip); }
code { font-family: ui-monospace, SFMono-Regular, Consolas, monospace; font-size: 12px; }
dd code, li code { overflow-wrap: anywhere; }
.sev-error, .regression { color: var(--fail); font-weight: 600; } .sev-warning { color: var(--warn); font-weight: 600; }
.p2, .p3, .p4 { display: none; }
@media (min-width: 720px) { .p2 { display: table-cell; } }
@media (min-width: 1000px) { .p3 { display: table-cell; } }
@media (min-width: 1180px) { .p4 { display: table-cell; } }
@media (max-width: 640px) { body { padding: 12px; } h1 { font-size: 19px; } .card b { font-size: 19px; } }
@media print { .controls, button.more { display: none; } tr.more { display: table-row !important; } .p2, .p3, .p4 { display: table-cell; } body { padding: 0; max-width: none; } }
`;

const SCRIPT = `
(function () {
  var table = document.getElementById('files');
  var body = table.tBodies[0];
  var filter = document.getElementById('filter');
  var outcome = document.getElementById('outcome');
  var count = document.getElementById('shown');
  function fileRows() { return Array.prototype.filter.call(body.rows, function (r) { return r.classList.contains('file'); }); }
  function moreOf(row) { return document.getElementById(row.getAttribute('data-more')); }
  function apply() {
    var q = filter.value.trim().toLowerCase();
    var o = outcome.value;
    var rows = fileRows();
    var shown = 0;
    rows.forEach(function (row) {
      var more = moreOf(row);
      var text = (row.textContent + ' ' + more.textContent).toLowerCase();
      var ok = (!q || text.indexOf(q) >= 0) && (!o || row.getAttribute('data-outcome') === o);
      row.hidden = !ok;
      more.hidden = !ok || row.querySelector('button.more').getAttribute('aria-expanded') !== 'true';
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + (rows.length === 1 ? ' file' : ' files') + ' shown';
  }
  filter.addEventListener('input', apply);
  outcome.addEventListener('change', apply);
  body.addEventListener('click', function (event) {
    var button = event.target.closest('button.more');
    if (!button) return;
    var open = button.getAttribute('aria-expanded') !== 'true';
    button.setAttribute('aria-expanded', String(open));
    document.getElementById(button.getAttribute('aria-controls')).hidden = !open;
  });
  // Each sortable header holds a button (Enter and Space press it); a click anywhere in the header sorts too.
  // aria-sort is on the sorted column only, as in the WAI-ARIA sortable table pattern.
  var heads = table.tHead.rows[0].cells;
  table.tHead.addEventListener('click', function (event) {
    var th = event.target.closest('th.sortable');
    if (!th) return;
    var index = th.cellIndex;
    var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
    Array.prototype.forEach.call(heads, function (c) { c.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir);
    var rows = fileRows();
    rows.sort(function (a, b) {
      var x = a.cells[index].getAttribute('data-sort') || a.cells[index].textContent;
      var y = b.cells[index].getAttribute('data-sort') || b.cells[index].textContent;
      var n = x.localeCompare(y, undefined, { numeric: true });
      return dir === 'ascending' ? n : -n;
    });
    rows.forEach(function (r) { body.appendChild(r); body.appendChild(moreOf(r)); });
  });
  apply();
})();
`;

/**
 * A path that may wrap after a separator (`/`, `\\`) or after a dot before a letter (`MyAddin.<wbr>Helpers`), never
 * inside a name or a version (`net8.0` stays whole).
 */
export function breakablePath(path: string): string {
  return esc(path).replace(/([/\\](?=[^/\\])|\.(?=[A-Za-z]))/g, '$1<wbr>');
}

function barChart(title: string, entries: [string, number][], colours: Record<string, string>): string {
  const max = Math.max(1, ...entries.map(([, v]) => v));
  const bars = entries
    .map(
      ([label, value]) =>
        `<div class="bar"><span>${esc(label)}</span><span class="track"><i style="width:${Math.round((value / max) * 80)}%;background:${colours[label] ?? 'var(--bar)'}"></i>${value}</span></div>`,
    )
    .join('');
  return `<figure class="chart" aria-label="${esc(title)}"><figcaption>${esc(title)}</figcaption>${bars}</figure>`;
}

interface Column {
  readonly label: string;
  readonly priority: 1 | 2 | 3 | 4;
  /** The cell's HTML, and the value shown in the details view. */
  readonly cell: (f: AuditFile, report: AuditReport) => string;
  readonly sort?: (f: AuditFile) => string;
  readonly nowrap?: boolean;
}

function jobCell(f: AuditFile): string {
  if (!f.job && f.signature)
    return `<code>${esc(f.signature.job.slice(0, 8))}</code> ${esc(f.signature.time.slice(0, 10))} <span class="muted">(record)</span>`;
  return f.job
    ? `<code>${esc(f.job.jobId.slice(0, 8))}</code> ${esc(f.job.date.slice(0, 10))}`
    : f.needsSigning
      ? '<span class="muted">not recorded</span>'
      : '<span class="muted">none needed</span>';
}

function authenticodeCell(f: AuditFile): string {
  const a = f.authenticode;
  if (!a) return '<span class="muted">not a PE image</span>';
  if (a.state === 'absent') return '<span class="muted">absent</span>';
  return `<span class="${a.state === 'valid' ? 'outcome-ok' : 'outcome-fail'}">${esc(a.state)}</span>${a.publisher ? ` ${esc(a.publisher)}` : ''}`;
}

const COLUMNS: readonly Column[] = [
  { label: 'File', priority: 1, cell: (f) => breakablePath(f.path), sort: (f) => f.path },
  { label: 'Assembly', priority: 2, cell: (f) => breakablePath(f.assembly?.name ?? '') },
  { label: 'Version', priority: 3, cell: (f) => esc(f.assembly?.version ?? ''), nowrap: true },
  {
    label: 'Token',
    priority: 4,
    cell: (f) => (f.assembly?.publicKeyToken ? `<code>${esc(f.assembly.publicKeyToken)}</code>` : '<span class="muted">none</span>'),
  },
  { label: 'Strong name', priority: 2, cell: (f) => esc(f.verdict), sort: (f) => f.strongName?.state ?? 'unreadable' },
  { label: 'Authenticode', priority: 3, cell: authenticodeCell, sort: (f) => f.authenticode?.state ?? 'unreadable' },
  { label: 'Option', priority: 3, cell: (f) => (f.strongName?.optionId != null ? String(f.strongName.optionId) : '<span class="muted">none</span>') },
  { label: 'Vendor attribute', priority: 3, cell: (f) => esc(f.vendorAttribute) },
  { label: 'Needs signing', priority: 4, cell: (f) => (f.needsSigning ? 'yes' : 'no') },
  { label: 'Job', priority: 3, cell: jobCell },
  { label: 'Loads under', priority: 3, cell: (f) => esc(loadsUnderText(f.load)), sort: (f) => f.load?.loadsUnder ?? '' },
  { label: 'Outcome', priority: 1, cell: (f) => `<span class="outcome-${f.outcome}">${f.outcome}</span>`, nowrap: true },
];

/**
 * A column's header: a button that sorts by it. The report lists files by path, so the File column starts out
 * sorted ascending.
 */
function header(c: Column): string {
  const cls = ['sortable', c.priority > 1 ? `p${c.priority}` : ''].filter(Boolean).join(' ');
  return `<th class="${cls}"${c.label === 'File' ? ' aria-sort="ascending"' : ''}><button type="button" class="sort">${esc(c.label)}<span class="arrow" aria-hidden="true"></span></button></th>`;
}

function row(f: AuditFile, index: number, report: AuditReport): string {
  const cells = COLUMNS.map((c) => {
    const cls = [c.priority > 1 ? `p${c.priority}` : '', c.nowrap ? 'nowrap' : ''].filter(Boolean).join(' ');
    const sort = c.sort ? ` data-sort="${esc(c.sort(f))}"` : '';
    return `<td${cls ? ` class="${cls}"` : ''}${sort}>${c.cell(f, report)}</td>`;
  });
  return `<tr class="file" data-outcome="${f.outcome}" data-more="more-${index}"><td><button class="more" type="button" aria-expanded="false" aria-controls="more-${index}" aria-label="Details of ${esc(f.path)}">▸</button></td>${cells.join('')}</tr>
<tr class="more" id="more-${index}" hidden><td colspan="${COLUMNS.length + 1}">${details(f, report)}</td></tr>`;
}

function details(f: AuditFile, report: AuditReport): string {
  const sn = f.strongName;
  const ledger = report.jobSource.ledger ?? 'the local job ledger';
  const job = f.job
    ? `job <code>${esc(f.job.jobId)}</code> on ${esc(f.job.date)} (${esc(f.job.baseUrl)})`
    : f.needsSigning
      ? `not recorded: jobs come from the job ledger (${esc(ledger)}) that <code>signgate sign</code> writes on the machine that signed; ${report.jobSource.found ? 'no job there returned a file with this SHA-256' : 'the machine that made this report has none'}`
      : 'none needed: the file is not signed by the service';
  const items: [string, string][] = [
    ...COLUMNS.filter((c) => c.label !== 'Job').map((c): [string, string] => [c.label, c.cell(f, report)]),
    ['Job', job],
    ...(signatureText(f, report.signatureRecord) ? [['Signature record', esc(signatureText(f, report.signatureRecord)!)] as [string, string]] : []),
    ['SHA-256', `<code>${f.sha256}</code>`],
    ['Size', countOf(f.size, 'byte')],
    ['State', sn ? `${esc(sn.state)}${sn.keyBits ? `, ${sn.keyBits}-bit key, ${esc(sn.hashAlgorithm ?? '')}` : ''}` : 'not a readable .NET assembly'],
    ['Signature check', sn ? (sn.signatureValid === null ? 'nothing to check: no signature' : sn.signatureValid ? 'valid' : 'invalid') : 'not applicable'],
    ['Key', sn ? (sn.key === 'expected' ? "the organization's" : sn.key === 'other' ? 'another key' : 'none') : 'none'],
    ...(f.authenticode && f.authenticode.state !== 'absent'
      ? [['Authenticode check', esc(describeAuthenticodeVerdict(f.authenticode))] as [string, string]]
      : []),
    ['Why', esc(f.reason)],
    ...loadDetails(f.load).map(([k, v]): [string, string] => [k, esc(v)]),
  ];
  const findings = f.findings.length
    ? `<ul>${f.findings.map((x) => `<li><span class="sev-${x.severity}">${x.severity}</span> ${esc(x.ruleId)} ${esc(x.rule)}: ${esc(x.message)}</li>`).join('')}</ul>`
    : 'none';
  items.push(['Findings', findings]);
  return `<dl>${items.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function changesSection(report: AuditReport): string {
  const c = report.changes;
  if (!c) return '';
  const list = (names: readonly string[]) => (names.length ? names.map((n) => `<code>${breakablePath(n)}</code>`).join(', ') : 'none');
  const lines = [
    ['Added', c.added],
    ['Removed', c.removed],
    ['Lost their signature', c.signatureLost ?? []],
    ['Newly signed', c.newlySigned ?? []],
    ['Re-signed (same identity and key, new bytes)', c.resigned],
    ['Key changed', c.keyChanged],
    ['Identity changed', c.identityChanged],
    ['Vendor attribute changed', c.vendorAttributeChanged ?? []],
    ['Option changed', c.optionChanged ?? []],
    ['Authenticode publisher changed', c.publisherChanged ?? []],
  ] as const;
  const files = (c.files ?? [])
    .map((x) => `<li>${x.regression ? '<span class="regression">regression</span> ' : ''}<code>${breakablePath(x.name)}</code>: ${esc(x.summary)}</li>`)
    .join('');
  return `<h2>Changes since the previous release</h2><ul>${lines.map(([label, names]) => `<li>${label}: ${list(names)}</li>`).join('')}</ul>${files ? `<p>Per file:</p><ul>${files}</ul>` : ''}`;
}

function evidenceSection(report: AuditReport): string {
  const s = report.settings;
  const keys = s.keys
    .map((k) => `<li><code>${esc(k.source)}</code>: token <code>${esc(k.token)}</code>${k.optionId !== null ? `, option ${k.optionId}` : ''}</li>`)
    .join('');
  return `<h2>Inputs and evidence</h2>
<p>Made by signgate ${esc(VERSION)}, report format ${report.formatVersion}. Vendor <b>${esc(s.vendor)}</b>, vendor API ${s.vendorApi.map((p) => `<code>${esc(p)}</code>`).join(', ')}, attribute namespace <code>${esc(s.vendorNamespace)}</code>.</p>
<p>The organization's keys (the JSON report holds each public key in full):</p><ul>${keys}</ul>
<p>Re-check a stored JSON report against the release: <code>signgate audit --verify-report audit.json &lt;release folder&gt;</code>; with <code>--no-timestamp</code> the same inputs give the same bytes.</p>`;
}

export function formatAuditHtml(report: AuditReport, generatedAt: string | null): string {
  const s = report.summary;
  const stateColours: Record<string, string> = {
    signed: 'var(--ok)',
    'delay-signed': 'var(--warn)',
    'invalid-signature': 'var(--fail)',
    'public-signed': 'var(--fail)',
    unsigned: 'var(--skip)',
  };
  const outcomeColours: Record<string, string> = { ok: 'var(--ok)', fail: 'var(--fail)', 'not-required': 'var(--skip)' };
  const keys = report.settings.keys.map((k) => `<code>${esc(k.token)}</code>${k.optionId !== null ? ` (option ${k.optionId})` : ''}`).join(', ');
  const manifest = report.manifest
    ? `<h2>Release manifest</h2><p>Missing: ${report.manifest.missing.map(esc).join(', ') || 'none'}. Extra: ${report.manifest.extra.map(esc).join(', ') || 'none'}.</p>`
    : '';
  const findings = report.findings.length
    ? `<ul>${report.findings.map((x) => `<li><span class="sev-${x.severity}">${x.severity}</span> ${esc(x.ruleId)} ${esc(x.rule)}${x.file ? ` <code>${breakablePath(x.file)}</code>` : ''}: ${esc(x.message)}</li>`).join('')}</ul>`
    : '<p>None.</p>';
  const js = report.jobSource;
  const jobNote = `Jobs come from the job ledger that <code>signgate sign</code> writes on the machine that signed (${esc(js.ledger ?? 'the signgate cache folder')}), matched by the SHA-256 of the file the service returned.${
    js.found ? '' : ' The machine that made this report has no ledger, so no job is recorded: audit on the signing machine to fill the Job column.'
  }`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Release audit: strong names and vendor signing</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1>Release audit: strong names and vendor signing</h1>
${generatedAt ? `<p class="generated">Generated ${esc(generatedAt)}</p>` : ''}
<p class="muted">Vendor <b>${esc(report.settings.vendor)}</b>; the organization's keys: ${keys}.</p>
</header>
<main>
<section class="cards">
<div class="card">Files<b>${s.files}</b></div><div class="card">OK<b class="outcome-ok">${s.byOutcome.ok}</b></div>
<div class="card">Fail<b class="outcome-fail">${s.byOutcome.fail}</b></div><div class="card">Not required<b>${s.byOutcome['not-required']}</b></div>
<div class="card">Errors<b>${s.errors}</b></div><div class="card">Warnings<b>${s.warnings}</b></div>
</section>
<section class="charts">
${barChart('By strong-name state', Object.entries(s.byState), stateColours)}
${barChart('By outcome', Object.entries(s.byOutcome), outcomeColours)}
${s.byAuthenticode ? barChart('By Authenticode signature', Object.entries(s.byAuthenticode), { valid: 'var(--ok)', invalid: 'var(--fail)', unreadable: 'var(--fail)', absent: 'var(--skip)' }) : ''}
</section>
${s.load ? `<p id="load-summary">${esc(loadSummaryText(s.load))}</p>` : ''}
<h2 id="files-heading">Files</h2>
<p class="muted" id="job-source">${jobNote}</p>
${recordNote(report) ? `<p id="signature-record">${esc(recordNote(report)!)}</p>` : ''}
<div class="controls"><input id="filter" type="search" placeholder="Filter by any text (name, token, state…)" aria-label="Filter files">
<select id="outcome" aria-label="Outcome"><option value="">All outcomes</option><option value="ok">ok</option><option value="fail">fail</option><option value="not-required">not required</option></select>
<span id="shown" class="muted" aria-live="polite"></span></div>
<div class="table-wrap"><table id="files" aria-labelledby="files-heading">
<thead><tr><th class="toggle"><span class="visually-hidden">Details</span></th>${COLUMNS.map(header).join('')}</tr></thead>
<tbody>
${report.files.length ? report.files.map((f, i) => row(f, i, report)).join('\n') : `<tr><td colspan="${COLUMNS.length + 1}">No files: the release is empty.</td></tr>`}
</tbody></table></div>
<h2>Findings</h2>
${findings}
${manifest}
${changesSection(report)}
${evidenceSection(report)}
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
