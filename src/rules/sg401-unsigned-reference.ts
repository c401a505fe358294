// SG401 unsigned-reference: a strong-named assembly cannot load a reference that has no public key token.
import { formatVersion } from '../metadata/module-metadata.js';
import { TableId } from '../metadata/schema.js';
import { defineRule } from './types.js';

/** The folder of a shown path (`/`-separated), quoted for a shell when it needs to be. */
export function folderArgument(shownPath: string): string {
  const slash = shownPath.lastIndexOf('/');
  const folder = slash < 0 ? '.' : slash === 0 ? '/' : shownPath.slice(0, slash);
  return /^[\w./:\\-]+$/.test(folder) ? folder : `"${folder}"`;
}

export default defineRule({
  id: 'SG401',
  name: 'unsigned-reference',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly references an assembly that is not strong-named; on .NET Framework a strong-named assembly cannot load it.',
  hint: 'Strong-name the referenced library and point this assembly at it with signgate fix (your own key pair, from sn -k), or use a strong-named build of the library.',
  check: ({ facts }) => {
    if (!facts.module) return [];
    const folder = folderArgument(facts.input.path);
    return facts.module.assemblyReferences
      .filter((r) => r.publicKeyOrToken.length === 0)
      .map((r) => ({
        message: `references ${r.name}, Version=${formatVersion(r.version)}, which has no public key token`,
        location: facts.module!.rowLocation(TableId.AssemblyRef, r.rid),
        data: { reference: r.name },
        hint: `Strong-name ${r.name} and point this assembly at it: signgate fix ${folder} --key your-key.snk --in-place (your-key.snk: a key pair of your own, from sn -k; the add-in stays delay-signed). Or use a strong-named build of ${r.name}.`,
      }));
  },
});
