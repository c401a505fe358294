// SG703 manifest-extra-file: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG703',
  name: 'manifest-extra-file',
  severity: 'error',
  summary: 'A file in the release is not in the release manifest.',
  hint: 'Remove the file from the release, or add it to the manifest.',
});
