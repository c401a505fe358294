// Audit as JSON (schemas/audit.schema.json). `generatedAt` is the only part that depends on the clock.
import { VERSION } from '../runtime/version.js';
import type { AuditReport } from '../audit/model.js';
import { jsonPieces } from './json-pieces.js';

export function formatAuditJson(report: AuditReport, generatedAt: string | null): string {
  return `${JSON.stringify({ tool: { name: 'signgate', version: VERSION }, generatedAt, ...report }, null, 2)}\n`;
}

/** formatAuditJson's text, the same to the character, in pieces (an element of `files` or `findings` at a time). */
export function* formatAuditJsonPieces(report: AuditReport, generatedAt: string | null): Generator<string> {
  yield* jsonPieces({ tool: { name: 'signgate', version: VERSION }, generatedAt, ...report });
  yield '\n';
}
