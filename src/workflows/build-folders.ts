// The folders a build wrote: which assembly files each holds, and where its `*.deps.json` says the build resolved
// the dependencies that are not there (a .NET class library copies no NuGet package to bin/). SG401 and `fix` say
// so when an assembly names a library without a strong name whose file is not beside it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { shownFolder } from '../core/shown-paths.js';
import type { InputFolder, ResolvedDependency } from '../rules/types.js';

/** Where NuGet keeps packages: NUGET_PACKAGES, else ~/.nuget/packages. */
function packageFolder(env: NodeJS.ProcessEnv): string {
  return env.NUGET_PACKAGES || join(homedir(), '.nuget', 'packages');
}

/** A path below the home folder as `~/…`, others as they are, with `/`. */
function homeRelative(path: string): string {
  const rel = relative(homedir(), path);
  const shown = rel && !rel.startsWith('..') && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel) ? `~/${rel}` : path;
  return shown.split(sep).join('/');
}

type DepsTarget = Record<string, { readonly runtime?: Record<string, unknown> }>;
interface DepsFile {
  readonly targets?: Record<string, DepsTarget>;
  readonly libraries?: Record<string, { readonly type?: string; readonly path?: string }>;
}

/**
 * The runtime assemblies a `*.deps.json` lists, by simple name (lower case), with the library that brings each and
 * the file in the NuGet package folder when it is there. A file that cannot be read or parsed gives nothing: it only
 * sharpens a message.
 */
function depsAssemblies(folder: string, depsFile: string, env: NodeJS.ProcessEnv): Map<string, ResolvedDependency> {
  const found = new Map<string, ResolvedDependency>();
  let deps: DepsFile;
  try {
    deps = JSON.parse(readFileSync(join(folder, depsFile), 'utf8').replace(/^\uFEFF/, '')) as DepsFile;
  } catch {
    return found;
  }
  for (const target of Object.values(deps.targets ?? {})) {
    for (const [library, entry] of Object.entries(target ?? {})) {
      const info = deps.libraries?.[library];
      for (const asset of Object.keys(entry?.runtime ?? {})) {
        const file = asset.split('/').pop()!;
        if (!/\.(dll|exe)$/i.test(file)) continue;
        const name = file.replace(/\.(dll|exe)$/i, '');
        if (found.has(name.toLowerCase())) continue;
        const cachedPath = info?.type === 'package' && info.path ? join(packageFolder(env), ...info.path.split('/'), ...asset.split('/')) : undefined;
        const cached = cachedPath && existsSync(cachedPath) ? homeRelative(cachedPath) : undefined;
        found.set(name.toLowerCase(), { name, depsFile, library, type: info?.type ?? 'unknown', asset, ...(cached ? { cached } : {}) });
      }
    }
  }
  return found;
}

/**
 * For each folder that holds one of `files` (absolute paths, each with the path it is shown by): the assembly files
 * in it, and the dependencies its `*.deps.json` files name whose file is not there. A folder that cannot be listed
 * is left out.
 */
export function buildFolders(
  files: readonly { readonly absolutePath: string; readonly displayPath: string }[],
  env: NodeJS.ProcessEnv = process.env,
): InputFolder[] {
  const folders = new Map<string, string>();
  for (const f of files) if (!folders.has(dirname(f.absolutePath))) folders.set(dirname(f.absolutePath), shownFolder(f.displayPath));
  const out: InputFolder[] = [];
  for (const [absolute, folder] of folders) {
    let names: string[];
    try {
      names = readdirSync(absolute);
    } catch {
      continue;
    }
    const assemblies = new Set(names.filter((n) => /\.(dll|exe)$/i.test(n)).map((n) => n.replace(/\.(dll|exe)$/i, '').toLowerCase()));
    const resolved = new Map<string, ResolvedDependency>();
    for (const depsFile of names.filter((n) => /\.deps\.json$/i.test(n)).sort()) {
      for (const [name, dependency] of depsAssemblies(absolute, depsFile, env)) {
        if (!assemblies.has(name) && !resolved.has(name)) resolved.set(name, dependency);
      }
    }
    out.push({ folder, assemblies: [...assemblies].sort(), resolved: [...resolved.values()] });
  }
  return out;
}
