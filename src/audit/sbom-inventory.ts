// The release's bill of materials as evidence: every shipped file (the audit's files with their SHA-512 and
// references, and the files that are no assemblies with their hashes), the NuGet package that brought each (through
// the folders' `*.deps.json` and the packages' `.nuspec`), the dependencies between them and what is known to be
// missing from them, and the findings on the way (SG710-SG712). report/audit-sbom.ts writes it as CycloneDX.
import { compareFindings, type Finding } from '../core/diagnostic.js';
import { auditFinding, type AuditFile, type AuditReport } from './model.js';
import type { DepsFile, DepsLibrary, Nuspec } from './nuget.js';
import type { SbomFileEvidence, SbomReference } from './sbom-evidence.js';

/** A shipped file that is no assembly (a .pdb, a .deps.json, a configuration file): its hashes, read with the release. */
export interface OtherFileEvidence {
  /** As shown (relative to the working directory). */
  readonly path: string;
  /** Relative to the audited root, `/`-separated. */
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly sha512: string;
}

/** What the NuGet package folder holds of a package the release ships files of (read by the caller). */
export interface PackageEvidence {
  /** The `.nuspec`, or null when the package is not in the folder (or there is no folder). */
  readonly nuspec: Nuspec | null;
  /** SHA-512 (hex) of each of its assets the release ships, by asset path; an asset not in the folder is absent. */
  readonly assets: ReadonlyMap<string, string>;
  /** The package's `.nupkg.sha512` as hex, when the folder has it. */
  readonly nupkgSha512: string | null;
}

/** The package that brought a shipped file. */
export interface InventoryPackage {
  readonly id: string;
  readonly version: string;
  /** The deps.json that names it (relative to the release). */
  readonly depsFile: string;
  readonly asset: string;
  /** The .nupkg's SHA-512 (hex) from deps.json or the package folder; null when neither says. */
  readonly packageSha512: string | null;
  /** The `.nuspec`, or null when the package folder does not have the package. */
  readonly nuspec: Nuspec | null;
  /** Whether the shipped bytes are the package's: true, false (SG711), or null when the package's file is not at hand. */
  readonly samebytes: boolean | null;
}

export type InventoryKind = 'assembly' | 'native' | 'unreadable' | 'file';

/** One shipped file, as the SBOM lists it. */
export interface InventoryFile {
  /** Unique in the SBOM: `file:` and the name relative to the release. */
  readonly bomRef: string;
  readonly name: string;
  readonly path: string;
  /** The file's name without its folder. */
  readonly fileName: string;
  readonly size: number;
  readonly sha256: string;
  readonly sha512: string;
  readonly kind: InventoryKind;
  /** The audit's evidence of the file (identity, strong name, Authenticode, job, record entry); null for other files. */
  readonly audit: AuditFile | null;
  readonly fileVersion: string | null;
  readonly informationalVersion: string | null;
  /** The file's modification time (ISO 8601), when the caller gave it: the version of a file that has none. */
  readonly modified: string | null;
  readonly package: InventoryPackage | null;
  /** The components it depends on (bom-refs, sorted). */
  readonly dependsOn: readonly string[];
  /** Its references that no shipped file satisfies (framework assemblies, the host's API): the graph is incomplete there. */
  readonly unresolved: readonly SbomReference[];
  /** The audit's findings of the file and the SBOM's own. */
  readonly findings: readonly Finding[];
}

export interface ReleaseInventory {
  readonly files: readonly InventoryFile[];
  readonly depsFiles: readonly string[];
  /** The SBOM's own findings (SG710-SG712), sorted. */
  readonly findings: readonly Finding[];
  /** The project a deps.json names (`type: project`), the add-in: its id, version and the file of its main assembly. */
  readonly project: { readonly id: string; readonly version: string; readonly bomRef: string | null } | null;
  /** Whether packages were looked up in a NuGet package folder (false: licences are unknown). */
  readonly packageFolder: boolean;
}

export interface InventoryInputs {
  readonly report: AuditReport;
  readonly evidence: ReadonlyMap<string, SbomFileEvidence>;
  readonly others: readonly OtherFileEvidence[];
  /** Each `*.deps.json` among the shipped files, parsed, or the reason it could not be. */
  readonly deps: readonly (DepsFile | { readonly name: string; readonly path: string; readonly error: string })[];
  /** By `<id>/<version>` in lower case; absent without a package folder. */
  readonly packages: ReadonlyMap<string, PackageEvidence> | null;
  /** Modification times (ISO 8601) by display path, of the files that have no version of their own. */
  readonly modified?: ReadonlyMap<string, string>;
}

export const packageKey = (id: string, version: string) => `${id}/${version}`.toLowerCase();
const lower = (s: string) => s.toLowerCase();
const baseName = (name: string) => name.slice(name.lastIndexOf('/') + 1);
const cultureOf = (c: string) => (c === '' || lower(c) === 'neutral' ? '' : lower(c));

/** Whether an assembly of this identity satisfies the reference: name, culture and public key token. */
function satisfies(r: SbomReference, f: AuditFile): boolean {
  const a = f.assembly;
  return !!a && lower(a.name) === lower(r.name) && cultureOf(a.culture) === cultureOf(r.culture) && (a.publicKeyToken ?? null) === (r.publicKeyToken ?? null);
}

/** The release's inventory from the audit's report and evidence, the other files, the deps.json files and the package folder. */
export function buildInventory(inputs: InventoryInputs): ReleaseInventory {
  const { report, evidence } = inputs;
  const findings: Finding[] = [];
  const shipped = new Map<string, { name: string; path: string }>();
  for (const f of report.files) shipped.set(lower(f.name), f);
  for (const f of inputs.others) shipped.set(lower(f.name), f);

  // Which package brought each shipped file, by name relative to the release.
  const byFile = new Map<string, InventoryPackage>();
  const libraryFiles = new Map<string, string[]>();
  const depsByLibrary = new Map<string, { deps: DepsFile; library: DepsLibrary }>();
  let project: ReleaseInventory['project'] = null;
  const depsFiles: string[] = [];
  for (const d of inputs.deps) {
    depsFiles.push(d.name);
    if ('error' in d) {
      findings.push(auditFinding('SG712', `${d.path} cannot be read as a .deps.json (${d.error}); the packages it names are not in the SBOM`, d.path));
      continue;
    }
    for (const library of d.libraries) {
      const key = packageKey(library.id, library.version);
      depsByLibrary.set(key, { deps: d, library });
      const names: string[] = [];
      if (library.type === 'project' && !project) project = { id: library.id, version: library.version, bomRef: null };
      for (const file of library.files) {
        const present = shipped.get(lower(file.shipped));
        if (!present) {
          findings.push(
            auditFinding(
              'SG710',
              `${d.name} names ${file.shipped} (${library.type} ${library.id} ${library.version}, ${file.asset}), which the release does not hold`,
              d.name,
            ),
          );
          continue;
        }
        names.push(lower(file.shipped));
        if (library.type !== 'package') {
          if (library.type === 'project' && project && lower(project.id) === lower(library.id) && !project.bomRef && /\.(dll|exe)$/i.test(file.shipped))
            project = { ...project, bomRef: `file:${present.name}` };
          continue;
        }
        const pkg = inputs.packages?.get(key);
        byFile.set(lower(file.shipped), {
          id: library.id,
          version: library.version,
          depsFile: d.name,
          asset: file.asset,
          packageSha512: library.packageSha512 ?? pkg?.nupkgSha512 ?? null,
          nuspec: pkg?.nuspec ?? null,
          samebytes: null,
        });
      }
      libraryFiles.set(key, names);
    }
  }

  // Indexes, so that a release of thousands of files is put together in time linear in its references.
  const byName = new Map<string, AuditFile[]>();
  for (const f of report.files) {
    if (!f.assembly) continue;
    const key = lower(f.assembly.name);
    const list = byName.get(key);
    if (list) list.push(f);
    else byName.set(key, [f]);
  }
  const libraryOf = new Map<string, { deps: DepsFile; library: DepsLibrary }>();
  for (const [key, l] of depsByLibrary) for (const n of libraryFiles.get(key) ?? []) if (!libraryOf.has(n)) libraryOf.set(n, l);
  const refOf = (name: string) => `file:${shipped.get(lower(name))?.name ?? name}`;
  const files: InventoryFile[] = [];
  const add = (base: { name: string; path: string; size: number; sha256: string }, sha512: string, audit: AuditFile | null, e: SbomFileEvidence | null) => {
    let pkg = byFile.get(lower(base.name)) ?? null;
    const fileFindings: Finding[] = [...(audit?.findings ?? [])];
    if (pkg) {
      const packaged = inputs.packages?.get(packageKey(pkg.id, pkg.version))?.assets.get(pkg.asset);
      if (packaged !== undefined) {
        pkg = { ...pkg, samebytes: packaged === sha512 };
        if (packaged !== sha512) {
          const f = auditFinding(
            'SG711',
            `${base.path} differs from ${pkg.asset} of the package ${pkg.id} ${pkg.version} that ${pkg.depsFile} says brought it (SHA-512 ${sha512.slice(0, 16)}…, the package's ${packaged.slice(0, 16)}…)`,
            base.path,
          );
          fileFindings.push(f);
          findings.push(f);
        }
      }
    }
    // Dependencies: the references each shipped assembly satisfies, its satellites, and the packages deps.json says it needs.
    const dependsOn = new Set<string>();
    const unresolved: SbomReference[] = [];
    for (const r of e?.references ?? []) {
      const candidates = (byName.get(lower(r.name)) ?? []).filter((a) => a.name !== base.name && satisfies(r, a));
      const best = candidates.find((a) => a.assembly!.version === r.version) ?? candidates[0];
      if (best) dependsOn.add(`file:${best.name}`);
      else unresolved.push(r);
    }
    if (audit?.assembly && !audit.assembly.name.endsWith('.resources')) {
      for (const a of byName.get(`${lower(audit.assembly.name)}.resources`) ?? []) if (cultureOf(a.assembly!.culture) !== '') dependsOn.add(`file:${a.name}`);
    }
    const library = libraryOf.get(lower(base.name));
    // A satellite holds resources only: what its library needs, it does not.
    if (library && /\.(dll|exe)$/i.test(base.name) && !/\.resources\.dll$/i.test(base.name)) {
      for (const id of library.library.dependencies) {
        const dep = library.deps.libraries.find((l) => lower(l.id) === lower(id));
        for (const n of dep ? (libraryFiles.get(packageKey(dep.id, dep.version)) ?? []) : [])
          if (/\.(dll|exe)$/i.test(n) && !/\.resources\.dll$/i.test(n)) dependsOn.add(refOf(n));
      }
    }
    dependsOn.delete(`file:${base.name}`);
    const kind: InventoryKind = audit ? kindOf(audit) : 'file';
    files.push({
      bomRef: `file:${base.name}`,
      name: base.name,
      path: base.path,
      fileName: baseName(base.name),
      size: base.size,
      sha256: base.sha256,
      sha512,
      kind,
      audit,
      fileVersion: e?.fileVersion ?? null,
      informationalVersion: e?.informationalVersion ?? null,
      modified: inputs.modified?.get(base.path) ?? null,
      package: pkg,
      dependsOn: [...dependsOn].sort(),
      unresolved,
      findings: fileFindings.sort(compareFindings),
    });
  };
  for (const f of report.files) {
    const e = evidence.get(f.path);
    add(f, e?.sha512 ?? '', f, e ?? null);
  }
  for (const o of inputs.others) add(o, o.sha512, null, null);
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { files, depsFiles: depsFiles.sort(), findings: findings.sort(compareFindings), project, packageFolder: inputs.packages !== null };
}

/** A file the audit read: an assembly, a native PE image, or a file that cannot be read as either. */
function kindOf(f: AuditFile): InventoryKind {
  return f.assembly ? 'assembly' : f.role !== 'unreadable' && f.authenticode ? 'native' : 'unreadable';
}
