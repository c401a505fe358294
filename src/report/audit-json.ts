// Audit as JSON (schemas/audit.schema.json). `generatedAt` is the only part that depends on the clock.
import { VERSION } from '../core/version.js';
import type { AuditReport } from '../audit/model.js';

export function formatAuditJson(report: AuditReport, generatedAt: string | null): string {
  return `${JSON.stringify({ tool: { name: 'signgate', version: VERSION }, generatedAt, ...report }, null, 2)}\n`;
}
