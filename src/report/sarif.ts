// SARIF 2.1.0 for code-scanning uploads: one rules[] entry per registered rule, binary locations as byte regions.
import type { Finding, Severity } from '../core/diagnostic.js';
import { VERSION } from '../runtime/version.js';
import { ruleDocsUrl, rules } from '../rules/index.js';
import type { CheckResult } from '../rules/rule-runner.js';

// The SARIF object model from @types/sarif (a devDependency): types only, erased from the emitted code, and
// kept out of this module's declarations (formatSarif returns a string), so users of the package never need it.
type Log = import('sarif').Log;
type Region = import('sarif').Region;
type Result = import('sarif').Result;

const LEVEL: Record<Severity, NonNullable<Result['level']>> = { error: 'error', warning: 'warning', note: 'note' };

/** Paths in the report are relative to the working directory; SARIF consumers resolve them against this base. */
const SRCROOT = '%SRCROOT%';

/**
 * The bytes a finding is about: its own location when the rule names one, else the whole file
 * (SARIF 3.30: a region should state where it ends; a byte region with no length would be a point).
 */
function regionOf(f: Finding, fileSizes: ReadonlyMap<string, number>): Region | undefined {
  if (f.location) return { byteOffset: f.location.fileOffset, byteLength: f.location.length ?? 0 };
  const size = f.file === null ? undefined : fileSizes.get(f.file);
  return size === undefined ? undefined : { byteOffset: 0, byteLength: size };
}

function result(f: Finding, ruleIndex: number, fileSizes: ReadonlyMap<string, number>): Result {
  const region = regionOf(f, fileSizes);
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
                artifactLocation: { uri: encodeURI(f.file), uriBaseId: SRCROOT },
                ...(region ? { region } : {}),
              },
            },
          ],
        }
      : {}),
    ...(f.data ? { properties: { data: f.data } } : {}),
  };
}

export function formatSarif(check: CheckResult): string {
  const index = new Map<string, number>(rules.map((r, i) => [r.id, i]));
  const fileSizes = new Map(check.files.map((f) => [f.path, f.size]));
  const log: Log = {
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
              defaultConfiguration: { level: LEVEL[r.defaultSeverity], enabled: (r as { enabledByDefault?: boolean }).enabledByDefault !== false },
            })),
          },
        },
        originalUriBaseIds: { [SRCROOT]: { description: { text: 'The working directory signgate ran in.' } } },
        artifacts: check.files.map((f) => ({ location: { uri: encodeURI(f.path), uriBaseId: SRCROOT }, length: f.size })),
        results: check.findings.map((f) => result(f, index.get(f.ruleId) ?? 0, fileSizes)),
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
