// SG702 manifest-missing-file: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG702',
  name: 'manifest-missing-file',
  severity: 'error',
  summary: 'A file the release manifest lists is not in the release.',
  hint: 'Add the file to the release, or remove it from the manifest.',
});
