// SG701 not-signed-for-release: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG701',
  name: 'not-signed-for-release',
  severity: 'error',
  summary: "A shipped assembly that needs signing is not validly signed with one of the organization's keys.",
  hint: 'Ship the files `signgate sign` returned and verified, not the delay-signed build output.',
});
