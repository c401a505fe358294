// SG002 not-managed: a file named for upload that is native code or a bare netmodule.
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG002',
  name: 'not-managed',
  scope: 'file',
  allFiles: true,
  defaultSeverity: 'error',
  summary: 'A file named for signing is native code or a netmodule, not a .NET assembly with a manifest.',
  hint: 'Only .NET assemblies with a manifest can be strong-named; leave native DLLs and netmodules out of the upload.',
  check: ({ facts }) => {
    // Files found in folders or by globs are classified instead (native helpers are common and not uploaded).
    if (!facts.input.explicit || facts.readError) return [];
    if (facts.native) return [{ message: 'the file is native code (no CLI header), not a .NET assembly' }];
    // A netmodule named beside the assembly that lists it is part of that assembly's upload.
    if (facts.role.kind === 'module') return [];
    if (facts.module && !facts.module.hasManifest) {
      return [{ message: `the file is a netmodule (${facts.module.moduleName}) without an assembly manifest`, hint: 'Upload the assembly that lists the netmodule, built with al or the compiler.' }];
    }
    return [];
  },
});
