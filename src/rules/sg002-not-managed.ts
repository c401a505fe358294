// SG002 not-managed: a file named for upload that is a bare netmodule (no assembly lists it). Native code named
// explicitly is not a finding: it needs no strong name, and is listed as not required (as found in a folder).
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG002',
  name: 'not-managed',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'error',
  summary: 'A file named for signing is a netmodule that no named assembly lists, not a .NET assembly with a manifest.',
  hint: 'Only .NET assemblies with a manifest can be strong-named; name the assembly that lists the netmodule (or its folder) instead.',
  check: ({ facts }) => {
    // Files found in folders or by globs are classified instead; native code needs nothing, named or found
    // (native helpers are common and not uploaded): it is "not required", no failure.
    if (!facts.input.explicit || facts.readError || facts.native) return [];
    // A netmodule named beside the assembly that lists it is part of that assembly's upload.
    if (facts.role.kind === 'module') return [];
    if (facts.module && !facts.module.hasManifest) {
      return [
        {
          message: `the file is a netmodule (${facts.module.moduleName}) without an assembly manifest`,
          hint: 'Upload the assembly that lists the netmodule, built with al or the compiler.',
        },
      ];
    }
    return [];
  },
});
