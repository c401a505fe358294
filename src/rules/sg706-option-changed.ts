// SG706 option-changed: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG706',
  name: 'option-changed',
  severity: 'warning',
  summary: 'A file is signed for another option than in the previous release.',
  hint: 'Check that the option change is intended; customers licensed for the old option cannot load the new file.',
});
