// The signing service's record in an audit (`--record`) in words, shared by the HTML and Markdown audits.
import type { AuditFile, AuditRecordSource, AuditReport, AuditSignature } from '../audit/model.js';
import { countOf } from './terminal.js';

/** One entry in a sentence: when, which job, for whom, with which key. */
export function describeSignature(s: AuditSignature): string {
  const who = `${s.user}${s.tokenId ? ` (token ${s.tokenId})` : ''}`;
  return `entry ${s.seq}: signed ${s.time} in job ${s.job} of ${s.organization} for ${who}, as ${s.file}, option ${s.optionId} with key ${s.keyToken} (${s.keyLocation})`;
}

/** What a file's row says of the record: its entry, none, or nothing when no record was given. */
export function signatureText(f: AuditFile, record: AuditRecordSource | null | undefined): string | undefined {
  if (!record) return undefined;
  if (f.signature) return describeSignature(f.signature);
  return f.needsSigning ? `no entry in ${record.file}` : 'none needed: the file is not signed by the service';
}

/** The report's sentence about the record, or undefined without one. */
export function recordNote(report: AuditReport): string | undefined {
  const r = report.signatureRecord;
  if (!r) return undefined;
  const matched = report.files.filter((f) => f.signature).length;
  return `Signature record ${r.file}: ${countOf(r.entries, 'entry', 'entries')}, chain verified up to entry ${r.lastSeq} (hash ${r.lastHash}); ${matched} of the ${countOf(report.files.length, 'file')} ${matched === 1 ? 'is' : 'are'} the bytes an entry returned.`;
}
