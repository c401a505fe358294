// SG709 not-in-signature-record: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG709',
  name: 'not-in-signature-record',
  severity: 'error',
  summary: "A file signed with the organization's key has no entry in the signing service's record (`--record`).",
  hint: 'Find out where the file was signed: the service records every file it signs, so a file signed elsewhere means the key was used outside the service. If another service (or an older record) signed it, pass that record.',
});
