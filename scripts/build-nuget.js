// Builds the NuGet packages: Signgate.Build (nuget/Signgate.Build: msbuild/Signgate.targets and the executables,
// for the build) and Signgate.Tool (nuget/Signgate.Tool: the .NET tool `signgate`). First the one-file executables
// for win-x64 and linux-x64 (scripts/build-sea.js), then `dotnet pack` of each project with them inside.
//
//   npm run build && node scripts/build-nuget.js [--out out/nuget] [--version 0.1.0] [--node-version 24.21.0]
//
// Prints the paths of the .nupkg files. The version defaults to package.json's.
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSea, DEFAULT_NODE_VERSION } from './build-sea.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Builds the packages into `out` and returns the .nupkg paths (Signgate.Build, Signgate.Tool). */
export async function buildNuget({ out = join(repoRoot, 'out', 'nuget'), version, nodeVersion = DEFAULT_NODE_VERSION } = {}) {
  const packageVersion = version ?? JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;
  const sea = join(out, 'sea');
  await buildSea({ out: sea, nodeVersion, targets: ['win-x64', 'linux-x64'] });
  const written = [];
  for (const id of ['Signgate.Build', 'Signgate.Tool']) {
    execFileSync(
      'dotnet',
      ['pack', join(repoRoot, 'nuget', id, `${id}.csproj`), '-c', 'Release', '-o', out, '-nologo', '--disable-build-servers', `-p:PackageVersion=${packageVersion}`, `-p:SigngateSeaDir=${sea}`, `-p:BaseIntermediateOutputPath=${join(out, 'obj', id)}/`, `-p:BaseOutputPath=${join(out, 'bin', id)}/`],
      { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' } },
    );
    const nupkg = join(out, `${id}.${packageVersion}.nupkg`);
    console.log(`wrote ${nupkg} (${statSync(nupkg).size} bytes)`);
    written.push(nupkg);
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, version: { type: 'string' }, 'node-version': { type: 'string' } } });
  await buildNuget({ out: values.out ? resolve(values.out) : undefined, version: values.version, nodeVersion: values['node-version'] });
}
