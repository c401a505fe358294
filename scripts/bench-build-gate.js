// `npm run bench` (build gate section), or on its own:
//   node scripts/bench-build-gate.js [--pairs N] [--before <another checkout, built>] [--no-compiler-server]
// What the build gate costs a build: a net8.0 class library that imports msbuild/Signgate.targets from this checkout
// with SigngateCheck=true (the npm route: SigngateCli is this checkout's bin/signgate.js, no NuGet package built),
// beside the same library without the import, each in its own folder of one temporary folder. After one restore and
// a first build of each, two rows, each a warm-up round and then N rounds in which every side builds once, the order
// turning from round to round:
//   no-op       `dotnet build --no-restore` with nothing changed: SigngateCheck is skipped by its Inputs/Outputs
//   edit        the same after a one-line edit of Addin.cs (a string literal: the assembly changes, the check runs)
// The figure of each side is the median wall time of its builds; the ratio is with / without (target <= 1.05x).
// Then, in builds of the gated side that are not timed: the log at -v:n says the no-op build skipped SigngateCheck,
// and MSBuild's performance summary gives the time of the gate's targets inside a build.
// --before adds a third side, gated by another checkout's targets and bin/signgate.js (an earlier commit, built).
// The builds run as a developer's do: MSBuild's node reuse and the C# compiler server on (their defaults: variables of
// this machine that turn them off are left out of the builds' environment); they serve both sides alike, and the
// servers end on their own when idle. --no-compiler-server runs every compile in a csc process of its own instead
// (UseSharedCompilation=false, as some CI machines have it). NODE_OPTIONS and NODE_EXTRA_CA_CERTS are left out too, as
// in the start-up rows: they would add the same work to every start of Node.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('..', import.meta.url));
const TARGET = 1.05;

/** The library's project file; `checkout`: the checkout whose targets and bin/signgate.js gate it (none: no gate). */
function projectFile(checkout) {
  const props = checkout
    ? `
    <SigngateCheck>true</SigngateCheck>
    <SigngateVendor>Contoso</SigngateVendor>
    <SigngateKey>12345_public.snk</SigngateKey>
    <SigngateCli>${join(checkout, 'bin', 'signgate.js')}</SigngateCli>`
    : '';
  const gate = checkout ? `\n  <Import Project="${join(checkout, 'msbuild', 'Signgate.targets')}" />` : '';
  return `<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFramework>net8.0</TargetFramework>
    <SignAssembly>true</SignAssembly>
    <DelaySign>true</DelaySign>
    <AssemblyOriginatorKeyFile>12345_public.snk</AssemblyOriginatorKeyFile>${props}
  </PropertyGroup>
  <ItemGroup>
    <Reference Include="Contoso.AddinApi" HintPath="vendor/Contoso.AddinApi.dll" Private="false" />
  </ItemGroup>${gate}
</Project>
`;
}

/** The add-in's source; `edit` is in the one line the edit row changes. */
const source = (edit) => `[assembly: Contoso.ContosoSignedAssembly(true)]
namespace Library
{
    public class Addin : Contoso.AddinBase
    {
        public override string Name => "library ${edit}";
    }
}
`;

/** The environment of the builds: this one, with the build servers as a developer has them and no Node options. */
function buildEnvironment(compilerServer) {
  const env = { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1', DOTNET_NOLOGO: '1' };
  for (const name of ['MSBUILDDISABLENODEREUSE', 'UseSharedCompilation', 'DOTNET_CLI_USE_MSBUILD_SERVER', 'NODE_OPTIONS', 'NODE_EXTRA_CA_CERTS'])
    delete env[name];
  if (!compilerServer) env.UseSharedCompilation = 'false';
  return env;
}

/** The gate's targets' time in one build, from MSBuild's performance summary: all of them, and their Exec tasks. */
function gateTargetsMs(output) {
  const targets = [...output.matchAll(/^\s*(\d+) ms\s+_?Signgate\w*\s+\d+ calls/gm)];
  const exec = /^\s*(\d+) ms\s+Exec\s+\d+ calls/m.exec(output);
  return { total: targets.reduce((n, m) => n + Number(m[1]), 0), exec: exec ? Number(exec[1]) : 0 };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

export function benchBuildGate({ pairs = 11, before, compilerServer = true } = {}) {
  const env = buildEnvironment(compilerServer);
  const root = mkdtempSync(join(tmpdir(), 'signgate-bench-gate-'));
  const gates = { without: null, with: repo, ...(before ? { before: resolve(before) } : {}) };
  const sides = Object.keys(gates);
  const dir = (side) => join(root, side);
  const build = (side, ...args) => {
    const start = process.hrtime.bigint();
    const r = spawnSync('dotnet', ['build', '--no-restore', '-nologo', ...args], { cwd: dir(side), env, encoding: 'utf8', maxBuffer: 1 << 26 });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.status !== 0) throw new Error(`dotnet build (${side}) exited with ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`);
    return { seconds, output: r.stdout };
  };
  let edits = 0;
  const edit = () => {
    edits++;
    for (const side of sides) writeFileSync(join(dir(side), 'Addin.cs'), source(edits));
  };
  const checked = (output) => output.includes('signgate check, 1 files');
  try {
    if (before && !existsSync(join(gates.before, 'msbuild', 'Signgate.targets'))) throw new Error(`--before ${before}: no msbuild/Signgate.targets there`);
    for (const side of sides) {
      mkdirSync(join(dir(side), 'vendor'), { recursive: true });
      writeFileSync(join(dir(side), 'Library.csproj'), projectFile(gates[side]));
      writeFileSync(join(dir(side), 'Addin.cs'), source(0));
      copyFileSync(join(repo, 'fixtures', 'vendor', 'Contoso.AddinApi.dll'), join(dir(side), 'vendor', 'Contoso.AddinApi.dll'));
      copyFileSync(join(repo, 'fixtures', 'test-keys', '12345_public.snk'), join(dir(side), '12345_public.snk'));
      execFileSync('dotnet', ['restore', '-nologo', '-v', 'q'], { cwd: dir(side), env, stdio: 'ignore' });
      build(side);
    }
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    console.log(`the build gate: skipped (${String(error.message).split('\n')[0]}; the .NET SDK with the net8.0 targeting pack is needed)`);
    return;
  }
  try {
    const load = loadavg()[0];
    const rows = [
      { name: 'no-op build', prepare: () => {}, checks: false },
      { name: 'build after a one-line edit', prepare: edit, checks: true },
    ];
    for (const row of rows) {
      row.times = Object.fromEntries(sides.map((side) => [side, []]));
      for (let round = -1; round < pairs; round++) {
        // The edit is made once for every side, before the round: each side builds from the same state of its folder.
        row.prepare();
        const turn = (round + 1) % sides.length;
        for (const side of [...sides.slice(turn), ...sides.slice(0, turn)]) {
          const r = build(side);
          if (gates[side] && checked(r.output) !== row.checks)
            throw new Error(`the ${row.name} (${side}) ${row.checks ? 'did not run' : 'ran'} the check:\n${r.output}`);
          if (round >= 0) row.times[side].push(r.seconds);
        }
      }
    }
    // Builds of the gated side, not timed: the log at normal verbosity says that the no-op build skipped the check
    // by MSBuild's own incrementality; MSBuild's performance summary gives the gate's targets' time inside a build.
    const noop = build('with', '-v:n', '-clp:PerformanceSummary');
    rows[0].skipped = /Skipping target "SigngateCheck" because all output files are up-to-date/.test(noop.output);
    rows[0].inside = [gateTargetsMs(noop.output)];
    rows[1].inside = [0, 1, 2].map(() => {
      edit();
      return gateTargetsMs(build('with', '-clp:PerformanceSummary').output);
    });
    console.log(
      'the build gate (SigngateCheck=true through msbuild/Signgate.targets and bin/signgate.js of this checkout) beside the same net8.0 library without it',
    );
    console.log(
      `  dotnet build --no-restore, median of ${pairs} rounds after a warm-up round, the sides' order turning; node reuse ${compilerServer ? 'and the compiler server on' : 'on, the compiler server off'}; load average ${load.toFixed(1)} to ${loadavg()[0].toFixed(1)}`,
    );
    for (const row of rows) {
      const without = median(row.times.without);
      const ratio = (side) => median(row.times[side]) / without;
      const paired = (side) => median(row.times[side].map((t, i) => t / row.times.without[i]));
      const figure = (side) =>
        `${median(row.times[side]).toFixed(3)} s = ${ratio(side).toFixed(3)}x (median of the rounds' ratios ${paired(side).toFixed(3)}x)`;
      console.log(
        `  ${row.name.padEnd(28)} without ${without.toFixed(3)} s  with ${figure('with')}  target <= ${TARGET}x: ${ratio('with') <= TARGET ? 'met' : 'missed'}`,
      );
      if (before) console.log(`  ${''.padEnd(28)} with the gate of ${before}: ${figure('before')}`);
      const inside = `the gate's targets inside the build ${median(row.inside.map((t) => t.total))} ms, Exec ${median(row.inside.map((t) => t.exec))} ms (MSBuild's performance summary${row.inside.length > 1 ? `, median of ${row.inside.length} builds` : ''})`;
      const note = row.checks
        ? 'the check ran in each'
        : `SigngateCheck ${row.skipped ? 'skipped by its inputs and outputs (-v:n)' : 'NOT reported skipped at -v:n'}`;
      console.log(`  ${''.padEnd(28)} ${note}; ${inside}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const args = process.argv.slice(2);
  const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  benchBuildGate({
    pairs: opt('--pairs') ? Number(opt('--pairs')) : undefined,
    before: opt('--before'),
    compilerServer: !args.includes('--no-compiler-server'),
  });
}
