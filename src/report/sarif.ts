// SARIF 2.1.0 for code-scanning uploads: one rules[] entry per registered rule, binary locations as byte regions.
import type { Finding, Severity } from '../core/diagnostic.js';
import { VERSION } from '../core/version.js';
import { ruleDocsUrl, rules } from '../rules/index.js';
import type { CheckResult } from '../rules/runner.js';

const LEVEL: Record<Severity, 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', note: 'note' };

function result(f: Finding, ruleIndex: number) {
  return {
    ruleId: f.ruleId,
    ruleIndex,
    level: LEVEL[f.severity],
    message: { text: `${f.message}. ${f.hint}` },
    ...(f.file
      ? {
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: encodeURI(f.file), uriBaseId: '%SRCROOT%' },
                ...(f.location ? { region: { byteOffset: f.location.fileOffset, ...(f.location.length !== undefined ? { byteLength: f.location.length } : {}) } } : {}),
              },
            },
          ],
        }
      : {}),
    ...(f.data ? { properties: { data: f.data } } : {}),
  };
}

export function formatSarif(check: CheckResult): string {
  const index = new Map(rules.map((r, i) => [r.id, i]));
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'signgate',
            version: VERSION,
            informationUri: 'https://github.com/signgate/signgate',
            rules: rules.map((r) => ({
              id: r.id,
              name: r.name,
              shortDescription: { text: r.summary },
              help: { text: r.hint },
              helpUri: ruleDocsUrl(r.id),
              defaultConfiguration: { level: LEVEL[r.defaultSeverity] },
            })),
          },
        },
        originalUriBaseIds: { '%SRCROOT%': { description: { text: 'The working directory signgate ran in.' } } },
        artifacts: check.files.map((f) => ({ location: { uri: encodeURI(f.path), uriBaseId: '%SRCROOT%' }, length: f.size })),
        results: check.findings.map((f) => result(f, index.get(f.ruleId as (typeof rules)[number]['id']) ?? 0)),
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
