// SG705 vendor-attribute-lost: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG705',
  name: 'vendor-attribute-lost',
  severity: 'error',
  summary: 'A file that carried the vendor attribute in the previous release does not any more.',
  hint: 'Put the vendor attribute back into the assembly (AssemblyInfo or the project file) and sign again.',
});
