// Builds the NuGet packages: Signgate.Build (nuget/Signgate.Build: msbuild/Signgate.targets and the targets that
// restore the executable for the build machine), Signgate.Build.Runtime.win-x64 and Signgate.Build.Runtime.linux-x64
// (nuget/Signgate.Build.Runtime: one executable each, which Signgate.Build restores on a machine's first build) and
// Signgate.Tool (nuget/Signgate.Tool: the .NET tool `signgate`, both executables). First the one-file executables for
// win-x64 and linux-x64 (scripts/build-sea.js, or the folder --sea-dir names), then `dotnet pack` of each project.
//
//   npm run build && node scripts/build-nuget.js [--out out/nuget] [--release | --version 0.1.0] [--node-version 24.21.0] [--sea-dir dir]
//
// Prints the paths of the .nupkg files (Signgate.Build first); put them all in one package source. Every build has a version of its own, so that NuGet, which keeps a version it
// has once restored and never looks at it again, picks up a rebuilt package: package.json's version with a
// pre-release part from the checkout, `0.1.0-dev.<commits>.g<sha>` (`.dirty.<time>` added when the work tree has
// changes or new files; `-local.<time>` outside a git checkout). `--release` packs package.json's plain version.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildSea, DEFAULT_NODE_VERSION } from './build-sea.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The packages' version: package.json's (`release`), or that with a pre-release part that differs for every commit
 * and every changed work tree. `now` is the time for the `.dirty` and `-local` parts (seconds since 1970).
 */
export function packageVersionOf({ release = false, now = Math.floor(Date.now() / 1000), root = repoRoot } = {}) {
  const base = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  if (release) return base;
  const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const sha = git('rev-parse', '--short=10', 'HEAD');
  if (sha.status !== 0) return `${base}-local.${now}`;
  const commits = git('rev-list', '--count', 'HEAD').stdout.trim();
  const dirty = git('status', '--porcelain').stdout.trim() !== '';
  return `${base}-dev.${commits}.g${sha.stdout.trim()}${dirty ? `.dirty.${now}` : ''}`;
}

/** The runtimes Signgate.Build.Runtime is packed for (the build machines with an executable). */
export const RUNTIMES = ['linux-x64', 'win-x64'];

/**
 * Builds the packages into `out` and returns the .nupkg paths (Signgate.Build, Signgate.Build.Runtime.linux-x64,
 * Signgate.Build.Runtime.win-x64, Signgate.Tool). `seaDir`: a folder with both executables already built (else they
 * are built into `out`/sea).
 */
export async function buildNuget({ out = join(repoRoot, 'out', 'nuget'), version, release = false, nodeVersion = DEFAULT_NODE_VERSION, seaDir } = {}) {
  const packageVersion = version ?? packageVersionOf({ release });
  const sea = seaDir ?? join(out, 'sea');
  // The executables say the version of the packages they ship in (`--version`), not package.json's plain one.
  if (!seaDir) await buildSea({ out: sea, nodeVersion, targets: RUNTIMES, version: packageVersion });
  const written = [];
  const packs = [
    { id: 'Signgate.Build', project: 'Signgate.Build' },
    ...RUNTIMES.map((rid) => ({ id: `Signgate.Build.Runtime.${rid}`, project: 'Signgate.Build.Runtime', props: [`-p:SigngateRuntime=${rid}`] })),
    { id: 'Signgate.Tool', project: 'Signgate.Tool' },
  ];
  for (const { id, project, props = [] } of packs) {
    execFileSync(
      'dotnet',
      [
        'pack',
        join(repoRoot, 'nuget', project, `${project}.csproj`),
        '-c',
        'Release',
        '-o',
        out,
        '-nologo',
        '--disable-build-servers',
        `-p:PackageVersion=${packageVersion}`,
        `-p:SigngateSeaDir=${sea}`,
        `-p:BaseIntermediateOutputPath=${join(out, 'obj', id)}/`,
        `-p:BaseOutputPath=${join(out, 'bin', id)}/`,
        ...props,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' } },
    );
    const nupkg = join(out, `${id}.${packageVersion}.nupkg`);
    console.log(`wrote ${nupkg} (${statSync(nupkg).size} bytes)`);
    written.push(nupkg);
  }
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      version: { type: 'string' },
      release: { type: 'boolean' },
      'node-version': { type: 'string' },
      'sea-dir': { type: 'string' },
    },
  });
  if (values.release && values.version) {
    console.error("build-nuget: --release packs package.json's version; --version names another: give one of them");
    process.exit(2);
  }
  await buildNuget({
    out: values.out ? resolve(values.out) : undefined,
    version: values.version,
    release: values.release,
    nodeVersion: values['node-version'],
    seaDir: values['sea-dir'] ? resolve(values['sea-dir']) : undefined,
  });
}
