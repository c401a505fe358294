// SG712 deps-json-unreadable: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG712',
  name: 'deps-json-unreadable',
  severity: 'warning',
  summary: 'A `*.deps.json` of the release cannot be read as one, so the packages it names are not in the SBOM (`--sbom`).',
  hint: 'Publish again; a deps.json is JSON with a "targets" object (written by the .NET SDK).',
});
