// SG401 unsigned-reference: a strong-named assembly cannot load a reference that has no public key token.
import { folderArgument, shownFolder } from '../core/shown-paths.js';
import { formatVersion } from '../metadata/module-metadata.js';
import { TableId } from '../metadata/schema.js';
import { defineRule, type ResolvedDependency } from './types.js';

/** Where the build found a dependency that is not in the folder: the NuGet cache's file, or what deps.json names. */
export function resolvedFrom(d: ResolvedDependency | undefined): string {
  if (!d) return "the project's assets (obj/project.assets.json in an SDK project) say where the build found it";
  const which =
    d.type === 'package'
      ? `the NuGet package ${d.library.replace('/', ' ')}`
      : d.type === 'project'
        ? `the project ${d.library.split('/')[0]}`
        : `${d.library} (${d.type})`;
  return d.cached
    ? `the build resolved it from ${d.cached} (${which}, as ${d.depsFile} says)`
    : `the build resolved it from ${which} (${d.asset}), as ${d.depsFile} says`;
}

/** How to get a dependency that is not in `folder` there, then `then` (what to run once it is). */
export function copyLocalHint(name: string, folder: string, d: ResolvedDependency | undefined, then: string): string {
  const how =
    d?.type === 'project'
      ? 'take <Private>false</Private> off its ProjectReference and build again'
      : d
        ? 'set <CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies> in the project' +
          ' (a .NET class library copies no NuGet package to its output) and build again'
        : 'in an SDK project set <CopyLocalLockFileAssemblies>true</CopyLocalLockFileAssemblies>, on a Reference set Copy Local, and build again';
  return (
    `signgate fix strong-names only the files it is given. Get ${name}.dll into ${folder}: ${how}` +
    `${d?.cached ? `, or copy ${d.cached} there` : ''}; then ${then}. ` +
    'Or let the build strong-name it before the compiler runs: <SigngateFixReferences>true</SigngateFixReferences> with ' +
    `<SigngateFixKey>your-key.snk</SigngateFixKey> (docs/msbuild.md). Or use a strong-named build of ${name}.`
  );
}

export default defineRule({
  id: 'SG401',
  name: 'unsigned-reference',
  scope: 'file',
  defaultSeverity: 'error',
  summary: 'The assembly references an assembly that is not strong-named; on .NET Framework a strong-named assembly cannot load it.',
  hint: 'Strong-name the referenced library and point this assembly at it with signgate fix (your own key pair, from sn -k), or use a strong-named build of the library.',
  check: ({ facts, settings }) => {
    if (!facts.module) return [];
    const folder = folderArgument(facts.input.path);
    const fixCommand = `signgate fix ${folder} --key your-key.snk --in-place`;
    // Known when the workflow listed the folder: a library that is not there is not one fix can strong-name.
    const here = settings.inputFolders?.find((f) => f.folder === shownFolder(facts.input.path));
    return facts.module.assemblyReferences
      .filter((r) => r.publicKeyOrToken.length === 0)
      .map((r) => {
        const found = `references ${r.name}, Version=${formatVersion(r.version)}, which has no public key token`;
        const location = facts.module!.rowLocation(TableId.AssemblyRef, r.rid);
        if (!here || here.assemblies.includes(r.name.toLowerCase())) {
          return {
            message: found,
            location,
            data: { reference: r.name },
            hint:
              `Strong-name ${r.name} and point this assembly at it: ${fixCommand} (your-key.snk: a key pair of your own, from sn -k;` +
              ` the add-in stays delay-signed). Or use a strong-named build of ${r.name}.`,
          };
        }
        const resolved = here.resolved.find((d) => d.name.toLowerCase() === r.name.toLowerCase());
        return {
          message: `${found}, and ${r.name}.dll is not in ${shownFolder(facts.input.path)}: ${resolvedFrom(resolved)}`,
          location,
          data: { reference: r.name, missing: true, ...(resolved ? { resolvedFrom: resolved.cached ?? resolved.library } : {}) },
          hint: copyLocalHint(r.name, folder, resolved, `${fixCommand} (your-key.snk: a key pair of your own, from sn -k)`),
        };
      });
  },
});
