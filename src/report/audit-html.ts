// Audit as one self-contained HTML file: no network, no external assets. A summary chart, a sortable and
// filterable table, per-file details, light and dark colour schemes, and a printable layout.
import type { AuditFile, AuditReport } from '../rules/audit.js';
import { escapeXml as esc } from './junit.js';

const CSS = `
:root { --bg:#ffffff; --fg:#1b1f24; --muted:#5b6470; --line:#d5dae0; --head:#f3f5f7; --ok:#1a7f37; --fail:#cf222e; --skip:#8c959f; --bar:#0969da; --warn:#9a6700; }
@media (prefers-color-scheme: dark) { :root { --bg:#0d1117; --fg:#e6edf3; --muted:#9198a1; --line:#30363d; --head:#161b22; --ok:#3fb950; --fail:#f85149; --skip:#6e7681; --bar:#4493f8; --warn:#d29922; } }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--fg); }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; } h3 { font-size: 14px; margin: 0; display: inline; }
.muted, .generated { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 120px; }
.card b { display: block; font-size: 22px; }
.charts { display: flex; flex-wrap: wrap; gap: 24px; }
.chart { flex: 1 1 320px; max-width: 520px; }
.chart svg { width: 100%; height: auto; }
.chart text { fill: var(--fg); font-size: 12px; }
.controls { display: flex; flex-wrap: wrap; gap: 8px; margin: 8px 0; }
.controls input, .controls select { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
.controls input { flex: 1 1 240px; }
.table-wrap { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { background: var(--head); cursor: pointer; user-select: none; position: sticky; top: 0; }
th[aria-sort="ascending"]::after { content: " ▲"; } th[aria-sort="descending"]::after { content: " ▼"; }
td.path { white-space: normal; overflow-wrap: anywhere; min-width: 180px; }
.outcome-ok { color: var(--ok); font-weight: 600; } .outcome-fail { color: var(--fail); font-weight: 600; } .outcome-not-required { color: var(--skip); }
code { font-family: ui-monospace, SFMono-Regular, Consolas, monospace; font-size: 12px; word-break: break-all; }
details { border: 1px solid var(--line); border-radius: 8px; padding: 8px 12px; margin: 6px 0; }
details ul { margin: 6px 0; padding-left: 20px; }
.sev-error { color: var(--fail); } .sev-warning { color: var(--warn); }
@media (max-width: 640px) { body { padding: 12px; } .card { min-width: 0; flex: 1 1 40%; } }
@media print { .controls { display: none; } details { break-inside: avoid; } details > *:not(summary) { display: block !important; } th { position: static; } body { padding: 0; } }
`;

const SCRIPT = `
(function () {
  var table = document.getElementById('files');
  var body = table.tBodies[0];
  var filter = document.getElementById('filter');
  var outcome = document.getElementById('outcome');
  var count = document.getElementById('shown');
  function apply() {
    var q = filter.value.trim().toLowerCase();
    var o = outcome.value;
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var ok = (!q || row.textContent.toLowerCase().indexOf(q) >= 0) && (!o || row.getAttribute('data-outcome') === o);
      row.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + body.rows.length + ' files shown';
  }
  filter.addEventListener('input', apply);
  outcome.addEventListener('change', apply);
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
    th.addEventListener('click', function () {
      var dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (c) { c.removeAttribute('aria-sort'); });
      th.setAttribute('aria-sort', dir);
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[index].getAttribute('data-sort') || a.cells[index].textContent;
        var y = b.cells[index].getAttribute('data-sort') || b.cells[index].textContent;
        var n = x.localeCompare(y, undefined, { numeric: true });
        return dir === 'ascending' ? n : -n;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
  apply();
})();
`;

function barChart(title: string, entries: [string, number][], colours: Record<string, string>): string {
  const max = Math.max(1, ...entries.map(([, v]) => v));
  const rowH = 26;
  const h = entries.length * rowH + 30;
  const bars = entries
    .map(([label, value], i) => {
      const y = 24 + i * rowH;
      const w = Math.round((value / max) * 260);
      return `<text x="0" y="${y + 13}">${esc(label)}</text><rect x="150" y="${y}" width="${Math.max(w, 2)}" height="18" rx="3" fill="${colours[label] ?? 'var(--bar)'}"><title>${esc(label)}: ${value}</title></rect><text x="${158 + w}" y="${y + 13}">${value}</text>`;
    })
    .join('');
  return `<figure class="chart"><svg viewBox="0 0 480 ${h}" role="img" aria-label="${esc(title)}"><text x="0" y="14" font-weight="600">${esc(title)}</text>${bars}</svg></figure>`;
}

function row(f: AuditFile, index: number): string {
  const sn = f.strongName;
  return `<tr data-outcome="${f.outcome}">
<td class="path"><a href="#file-${index}">${esc(f.path)}</a></td><td>${esc(f.assembly?.name ?? '')}</td><td data-sort="${esc(f.assembly?.version ?? '')}">${esc(f.assembly?.version ?? '')}</td>
<td><code>${esc(f.assembly?.publicKeyToken ?? '')}</code></td><td>${esc(sn?.state ?? 'unreadable')}</td><td>${sn?.signedWithExpectedKey ? 'yes' : 'no'}</td><td>${sn?.optionId ?? ''}</td>
<td>${esc(f.vendorAttribute)}</td><td>${f.needsSigning ? 'yes' : 'no'}</td><td>${f.job ? `<code>${esc(f.job.jobId.slice(0, 8))}</code> ${esc(f.job.date.slice(0, 10))}` : ''}</td>
<td class="outcome-${f.outcome}">${f.outcome}</td></tr>`;
}

function details(f: AuditFile, index: number): string {
  const items = [
    `SHA-256 <code>${f.sha256}</code>, ${f.size} bytes`,
    esc(f.reason),
    f.strongName ? `strong name: ${esc(f.strongName.state)}${f.strongName.keyBits ? `, ${f.strongName.keyBits}-bit ${esc(f.strongName.hashAlgorithm ?? '')}` : ''}` : 'not a readable .NET assembly',
    f.job ? `signed by job <code>${esc(f.job.jobId)}</code> on ${esc(f.job.date)} (${esc(f.job.baseUrl)})` : 'no signing job recorded in the local ledger',
    ...f.findings.map((x) => `<span class="sev-${x.severity}">${x.severity}</span> ${esc(x.ruleId)} ${esc(x.rule)}: ${esc(x.message)}`),
  ];
  return `<details id="file-${index}"><summary><h3>${esc(f.path)}</h3> <span class="outcome-${f.outcome}">${f.outcome}</span></summary><ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul></details>`;
}

export function formatAuditHtml(report: AuditReport, generatedAt: string | null): string {
  const s = report.summary;
  const stateColours: Record<string, string> = { signed: 'var(--ok)', 'delay-signed': 'var(--warn)', 'invalid-signature': 'var(--fail)', 'public-signed': 'var(--fail)', unsigned: 'var(--skip)' };
  const outcomeColours: Record<string, string> = { ok: 'var(--ok)', fail: 'var(--fail)', 'not-required': 'var(--skip)' };
  const keys = report.settings.keys.map((k) => `<code>${esc(k.token)}</code>${k.optionId !== null ? ` (option ${k.optionId})` : ''}`).join(', ');
  const changes = report.changes
    ? `<h2>Changes since the previous release</h2><ul>${(
        [
          ['Added', report.changes.added],
          ['Removed', report.changes.removed],
          ['Re-signed', report.changes.resigned],
          ['Key changed', report.changes.keyChanged],
          ['Identity changed', report.changes.identityChanged],
        ] as const
      )
        .map(([label, list]) => `<li>${label}: ${list.length ? list.map(esc).join(', ') : 'none'}</li>`)
        .join('')}</ul>`
    : '';
  const manifest = report.manifest ? `<h2>Release manifest</h2><p>Missing: ${report.manifest.missing.map(esc).join(', ') || 'none'}. Extra: ${report.manifest.extra.map(esc).join(', ') || 'none'}.</p>` : '';
  const findings = report.findings.length
    ? `<ul>${report.findings.map((x) => `<li><span class="sev-${x.severity}">${x.severity}</span> ${esc(x.ruleId)} ${esc(x.rule)}${x.file ? ` <code>${esc(x.file)}</code>` : ''}: ${esc(x.message)}</li>`).join('')}</ul>`
    : '<p>None.</p>';
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
<p class="muted">Vendor <b>${esc(report.settings.vendor)}</b>; expected keys: ${keys}.</p>
</header>
<section class="cards">
<div class="card">Files<b>${s.files}</b></div><div class="card">OK<b class="outcome-ok">${s.byOutcome.ok}</b></div>
<div class="card">Fail<b class="outcome-fail">${s.byOutcome.fail}</b></div><div class="card">Not required<b>${s.byOutcome['not-required']}</b></div>
<div class="card">Errors<b>${s.errors}</b></div><div class="card">Warnings<b>${s.warnings}</b></div>
</section>
<section class="charts">
${barChart('By strong-name state', Object.entries(s.byState), stateColours)}
${barChart('By outcome', Object.entries(s.byOutcome), outcomeColours)}
</section>
<h2>Files</h2>
<div class="controls"><input id="filter" type="search" placeholder="Filter by any text (name, token, state…)" aria-label="Filter files">
<select id="outcome" aria-label="Outcome"><option value="">All outcomes</option><option value="ok">ok</option><option value="fail">fail</option><option value="not-required">not required</option></select>
<span id="shown" class="muted"></span></div>
<div class="table-wrap"><table id="files">
<thead><tr><th>File</th><th>Assembly</th><th>Version</th><th>Token</th><th>State</th><th>Expected key</th><th>Option</th><th>Vendor attribute</th><th>Needs signing</th><th>Job</th><th>Outcome</th></tr></thead>
<tbody>
${report.files.map(row).join('\n')}
</tbody></table></div>
<h2>Findings</h2>
${findings}
${manifest}
${changes}
<h2>File details</h2>
${report.files.map(details).join('\n')}
<script>${SCRIPT}</script>
</body>
</html>
`;
}
