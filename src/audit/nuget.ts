// NuGet as the bill of materials reads it: a folder's `*.deps.json` (which library brought each runtime, resource
// and native file, its package hash and its dependencies) and a package's `.nuspec` (authors, licence, URLs), both
// as text the caller read. Matching the shipped files to the packages that brought them, and the findings where a
// deps.json names a file that is not shipped or a shipped file differs from the package's.

/** A library of a `*.deps.json`: a NuGet package, the project itself, or a reference. */
export interface DepsLibrary {
  /** The package id as deps.json spells it. */
  readonly id: string;
  readonly version: string;
  /** `package`, `project`, `reference` (deps.json's own words). */
  readonly type: string;
  /** deps.json's `sha512-<base64>` of the .nupkg, as hex; null when not given. */
  readonly packageSha512: string | null;
  /** Its folder below the NuGet package folder (`newtonsoft.json/13.0.3`), or null. */
  readonly path: string | null;
  /** The libraries it depends on, by id. */
  readonly dependencies: readonly string[];
  /** Its files as shipped beside the deps.json (`/`-separated, relative to its folder), each with its asset path in the package. */
  readonly files: readonly { readonly shipped: string; readonly asset: string }[];
}

/** A `*.deps.json`: where it is (`/`-separated, relative to the release) and its libraries. */
export interface DepsFile {
  readonly name: string;
  readonly libraries: readonly DepsLibrary[];
}

interface RawDeps {
  readonly runtimeTarget?: { readonly name?: string };
  readonly targets?: Record<string, Record<string, RawTargetEntry | undefined> | undefined>;
  readonly libraries?: Record<string, { readonly type?: string; readonly path?: string; readonly sha512?: string } | undefined>;
}
interface RawTargetEntry {
  readonly dependencies?: Record<string, string>;
  readonly runtime?: Record<string, unknown>;
  readonly resources?: Record<string, { readonly locale?: string } | undefined>;
  readonly native?: Record<string, unknown>;
  readonly runtimeTargets?: Record<string, unknown>;
}

/** `sha512-<base64>` as hex, or null. */
function packageHash(value: string | undefined): string | null {
  const m = /^sha512-([A-Za-z0-9+/=]+)$/.exec(value ?? '');
  return m ? Buffer.from(m[1]!, 'base64').toString('hex') : null;
}

const baseName = (asset: string) => asset.split('/').pop()!;

/**
 * The libraries of a `*.deps.json` named `name` (relative to the release, `/`), from its text.
 * @throws SyntaxError when the text is not JSON; Error when it is JSON but no deps.json (no `targets`)
 */
export function parseDepsJson(name: string, text: string): DepsFile {
  const raw = JSON.parse(text.replace(/^\uFEFF/, '')) as RawDeps;
  if (!raw || typeof raw !== 'object' || typeof raw.targets !== 'object' || raw.targets === null) throw new Error('it has no "targets": not a .deps.json');
  // The runtime target the build wrote for (the first, when none is named); a RID-specific one adds its assets.
  const targetName = raw.runtimeTarget?.name ?? Object.keys(raw.targets)[0];
  const target = (targetName && raw.targets[targetName]) || {};
  const folder = name.includes('/') ? name.slice(0, name.lastIndexOf('/') + 1) : '';
  const libraries: DepsLibrary[] = [];
  for (const [key, entry] of Object.entries(target)) {
    const slash = key.indexOf('/');
    if (slash < 0 || !entry) continue;
    const info = raw.libraries?.[key];
    const files: { shipped: string; asset: string }[] = [];
    for (const asset of Object.keys(entry.runtime ?? {})) files.push({ shipped: folder + baseName(asset), asset });
    for (const asset of Object.keys(entry.native ?? {})) files.push({ shipped: folder + baseName(asset), asset });
    for (const [asset, r] of Object.entries(entry.resources ?? {})) {
      files.push({ shipped: `${folder}${r?.locale ? `${r.locale}/` : ''}${baseName(asset)}`, asset });
    }
    // RID-specific assets of a portable app are shipped under their own path (runtimes/<rid>/...).
    for (const asset of Object.keys(entry.runtimeTargets ?? {})) files.push({ shipped: folder + asset, asset });
    libraries.push({
      id: key.slice(0, slash),
      version: key.slice(slash + 1),
      type: info?.type ?? 'unknown',
      packageSha512: packageHash(info?.sha512),
      path: info?.path ?? null,
      dependencies: Object.keys(entry.dependencies ?? {}),
      files: files.filter((f) => !f.asset.endsWith('/_._')),
    });
  }
  return { name, libraries };
}

/** What a package's `.nuspec` says of it. */
export interface Nuspec {
  readonly id: string | null;
  readonly version: string | null;
  readonly authors: string | null;
  /** The `<license type="expression">`, or null. */
  readonly licenseExpression: string | null;
  /** The `<license type="file">` path in the package, or null. */
  readonly licenseFile: string | null;
  /** The deprecated `<licenseUrl>`, or null. */
  readonly licenseUrl: string | null;
  readonly projectUrl: string | null;
  readonly repositoryUrl: string | null;
  readonly repositoryCommit: string | null;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function xmlText(s: string): string {
  return s
    .replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(\w+));/g, (all, hex: string, dec: string, name: string) =>
      hex ? String.fromCodePoint(parseInt(hex, 16)) : dec ? String.fromCodePoint(Number(dec)) : (ENTITIES[name] ?? all),
    )
    .trim();
}

/** The `<metadata>` of a `.nuspec` (any namespace version): its elements read as text, its `<repository>` and `<license>` attributes. */
export function parseNuspec(text: string): Nuspec {
  const metadata = /<metadata\b[^>]*>([\s\S]*?)<\/metadata>/.exec(text)?.[1] ?? '';
  const element = (tag: string): { attributes: string; text: string } | null => {
    const m = new RegExp(`<${tag}\\b([^>]*?)(?:/>|>([\\s\\S]*?)</${tag}>)`).exec(metadata);
    return m ? { attributes: m[1] ?? '', text: xmlText(m[2] ?? '') } : null;
  };
  const attribute = (attributes: string, name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(attributes);
    return m ? xmlText(m[2] ?? m[3] ?? '') : null;
  };
  const value = (tag: string) => element(tag)?.text || null;
  const license = element('license');
  const type = license ? attribute(license.attributes, 'type') : null;
  const repository = element('repository');
  return {
    id: value('id'),
    version: value('version'),
    authors: value('authors'),
    licenseExpression: type === 'expression' ? license!.text || null : null,
    licenseFile: type === 'file' ? license!.text || null : null,
    licenseUrl: value('licenseUrl'),
    projectUrl: value('projectUrl'),
    repositoryUrl: repository ? attribute(repository.attributes, 'url') : null,
    repositoryCommit: repository ? attribute(repository.attributes, 'commit') : null,
  };
}

/** The purl of a NuGet package (the id in lower case is NuGet's own comparison; the purl spec keeps the case as given). */
export function nugetPurl(id: string, version: string): string {
  return `pkg:nuget/${encodeURIComponent(id)}@${encodeURIComponent(version)}`;
}

/** Where nuget.org serves the package: the URI of its deployable form. */
export function nugetPackageUrl(id: string, version: string): string {
  return `https://www.nuget.org/api/v2/package/${encodeURIComponent(id)}/${encodeURIComponent(version)}`;
}
