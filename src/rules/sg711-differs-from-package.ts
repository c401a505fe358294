// SG711 differs-from-package: a finding of the release audit (signgate audit), which decides where it applies (src/audit).
import { defineAuditRule } from './types.js';

export default defineAuditRule({
  id: 'SG711',
  name: 'differs-from-package',
  severity: 'error',
  summary: "A shipped file that a `*.deps.json` says came from a NuGet package differs from the package's file (`--sbom`).",
  hint: "Ship the package's file as restored, or, if the file was changed on purpose (fix, sign), ship it under its own identity and say so; the SBOM must not vouch for the package's bytes.",
});
