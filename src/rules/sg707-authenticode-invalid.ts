// SG707 authenticode-invalid: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG707',
  name: 'authenticode-invalid',
  severity: 'error',
  summary: 'A shipped file carries an Authenticode signature that does not verify (or cannot be read).',
  hint: 'Sign with signtool after the strong-name signing by the service, and ship that file; a file changed after Authenticode signing shows as tampered on Windows.',
});
