// SG710 deps-file-missing: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG710',
  name: 'deps-file-missing',
  severity: 'warning',
  summary: 'A `*.deps.json` of the release names a file (of a package or the project) that the release does not hold (`--sbom`).',
  hint: 'Ship the whole publish output (`dotnet publish`), or publish again: the deps.json and the files beside it come from different builds.',
});
