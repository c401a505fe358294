// SG708 publisher-changed: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG708',
  name: 'publisher-changed',
  severity: 'warning',
  summary: "A file's Authenticode publisher (the signer certificate's subject) differs from the previous release, or its signature is gone.",
  hint: 'Check that the new publisher certificate is yours and intended; Windows and SmartScreen show the new name to users.',
});
