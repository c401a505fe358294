// SG704 signature-lost: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG704',
  name: 'signature-lost',
  severity: 'error',
  summary: "A file that was signed with the organization's key in the previous release is not any more.",
  hint: 'Ship the file `signgate sign` returned for this release; the build output was probably copied over the signed file.',
});
