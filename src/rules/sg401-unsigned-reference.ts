// SG401 unsigned-reference: a strong-named assembly cannot load a reference that has no public key token.
import { formatVersion } from '../metadata/module-metadata.js';
import { TableId } from '../metadata/schema.js';
import { defineRule } from './types.js';

export default defineRule({
  id: 'SG401',
  name: 'unsigned-reference',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly references an assembly that is not strong-named; on .NET Framework a strong-named assembly cannot load it.',
  hint: 'Use a strong-named build of the referenced library, or delay-sign your own library with the same key and upload it too.',
  check: ({ facts }) => {
    if (!facts.module) return [];
    return facts.module.assemblyReferences
      .filter((r) => r.publicKeyOrToken.length === 0)
      .map((r) => ({
        message: `references ${r.name}, Version=${formatVersion(r.version)}, which has no public key token`,
        location: facts.module!.rowLocation(TableId.AssemblyRef, r.rid),
        data: { reference: r.name },
      }));
  },
});
