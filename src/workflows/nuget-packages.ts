// The NuGet package folder as the bill of materials reads it: for each package a release's `*.deps.json` names, its
// `.nuspec`, its `.nupkg.sha512` and the SHA-512 of each of its files the release ships (to tell a shipped file
// that differs from the package's). A package that is not in the folder, or a folder that is not there, gives what
// deps.json alone says: the SBOM then says the licence is unknown.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../core/errors.js';
import { digestFile } from './files.js';
import { parseNuspec, type DepsFile } from '../audit/nuget.js';
import { packageKey, type PackageEvidence } from '../audit/sbom-inventory.js';

/**
 * The package folder: `given` (which must exist), else NUGET_PACKAGES, else ~/.nuget/packages; null when neither of
 * the last two exists.
 * @throws UsageError when `given` is not a folder
 */
export function nugetPackageFolder(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  if (given !== undefined) {
    if (!statSafe(given)?.isDirectory())
      throw new UsageError(
        `--nuget-packages ${given} is not a folder`,
        'Name the NuGet package folder the build restored into (NUGET_PACKAGES, or ~/.nuget/packages), or leave the option out.',
      );
    return given;
  }
  const folder = env.NUGET_PACKAGES || join(homedir(), '.nuget', 'packages');
  return statSafe(folder)?.isDirectory() ? folder : null;
}

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** What `folder` holds of every package the deps.json files name, by packageKey (see PackageEvidence). */
export function readPackages(deps: readonly DepsFile[], folder: string): Map<string, PackageEvidence> {
  const out = new Map<string, PackageEvidence>();
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (const d of deps) {
    for (const library of d.libraries) {
      const key = packageKey(library.id, library.version);
      if (library.type !== 'package' || out.has(key)) continue;
      const dir = join(folder, ...(library.path ?? `${library.id}/${library.version}`).toLowerCase().split('/'));
      const id = library.id.toLowerCase();
      const nuspecText = readText(join(dir, `${id}.nuspec`));
      const sha = readText(join(dir, `${id}.${library.version.toLowerCase()}.nupkg.sha512`))?.trim();
      const assets = new Map<string, string>();
      for (const f of library.files) {
        const file = join(dir, ...f.asset.split('/'));
        if (!existsSync(file)) continue;
        try {
          assets.set(f.asset, digestFile(file, file, buffer).sha512);
        } catch {
          // A package file that cannot be read is one not at hand: the comparison says unknown.
        }
      }
      out.set(key, {
        nuspec: nuspecText === null ? null : parseNuspec(nuspecText),
        assets,
        nupkgSha512: sha && /^[A-Za-z0-9+/=]+$/.test(sha) ? Buffer.from(sha, 'base64').toString('hex') : null,
      });
    }
  }
  return out;
}
