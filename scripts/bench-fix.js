// `npm run bench` (fix section), or on its own:
//   node scripts/bench-fix.js [--runs N] [--sets small,corpus,large,mixed] [--before <another build's bin/signgate.js>]
// `signgate fix` beside two peers that strong-name a set of assemblies in one .NET process each: tools/fix-peers/cecil
// (Mono.Cecil, as StrongNamer and Brutal.Dev's StrongNameSigner do it) and tools/fix-peers/dnlib (dnlib's module
// writer). Each tool runs as a whole process over the same inputs, its start included, and writes below a fresh
// output folder; the ratio is signgate's wall time over the faster peer's (target <= 1.0x). The sets:
//   small    the SDK fixture's add-in and its unsigned dependency (2 files): start-up dominates
//   corpus   the NuGet corpus's assemblies without a strong name (as test/corpus/nuget-fix.test.ts finds them), with
//            the small set's two files
//   large    the two largest strong-named (or public-signed) assemblies of the .NET SDK's folder (>= 15 MB): nothing
//            to change
//   mixed    large and corpus together
// The peers copy a file that needs no change into the output folder; signgate --out writes only changed files.
// --before times another build of signgate too (a checkout of an earlier commit, built), alternating with this one.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readModule } from '../dist/strongname/well-formed.js';
import { classifyStrongName } from '../dist/strongname/strong-name.js';
import { unfixableReason } from '../dist/strongname/strong-name-writer.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const runs = Number(opt('--runs', '3'));
const wanted = opt('--sets', 'small,corpus,large,mixed').split(',');
const before = opt('--before', undefined);
const key = join(repo, 'fixtures', 'test-keys', 'other_keypair.snk');

/** The state an assembly's headers give, or null for a file that is not a fixable assembly. */
function stateOf(path) {
  try {
    const module = readModule(new Uint8Array(readFileSync(path)));
    return unfixableReason(module) ? null : classifyStrongName(module, { verify: false }).state;
  } catch {
    return null;
  }
}

function listDlls(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) listDlls(p, out);
    else if (e.isFile() && /\.dll$/i.test(e.name)) out.push(p);
  }
  return out;
}

function sets() {
  const small = ['UnsignedLib.dll', 'WrongTurn.UnsignedReference.dll'].map((f) => join(repo, 'fixtures', 'sdk', 'bin', 'wrong-turns', 'UnsignedReference', f));
  const nugetList = join(process.env.SIGNGATE_NUGET_CORPUS ?? join(homedir(), '.cache', 'signgate', 'nuget-corpus'), 'assemblies.txt');
  const corpus = existsSync(nugetList)
    ? [
        ...readFileSync(nugetList, 'utf8')
          .split('\n')
          .filter(Boolean)
          .filter((f) => stateOf(f) === 'unsigned'),
        ...small,
      ]
    : null;
  let large;
  try {
    const dotnetRoot = dirname(realpathSync(execFileSync('which', ['dotnet'], { encoding: 'utf8' }).trim()));
    const seen = new Set();
    large = listDlls(dotnetRoot)
      .map((f) => ({ f, size: statSync(f).size }))
      .filter((x) => x.size >= 15_000_000)
      .sort((a, b) => b.size - a.size)
      .filter((x) => !seen.has(basename(x.f).toLowerCase()) && seen.add(basename(x.f).toLowerCase()) && ![null, 'unsigned'].includes(stateOf(x.f)))
      .slice(0, 2)
      .map((x) => x.f);
    if (large.length < 2) large = null;
  } catch {
    large = null;
  }
  return { small, corpus, large, mixed: large && corpus ? [...large, ...corpus] : null };
}

function buildPeer(name) {
  const dir = join(repo, 'tools', 'fix-peers', name);
  execFileSync('dotnet', ['build', dir, '-c', 'Release', '--nologo', '-v', 'q'], { stdio: 'ignore', env: { ...process.env, MSBUILDDISABLENODEREUSE: '1' } });
  return join(dir, 'bin', 'Release', `fix-peer-${name}.dll`);
}

/** GNU time, where there is one, gives each process's CPU seconds (user + system, its threads included). */
const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

/** Wall and CPU seconds of one whole process writing below a fresh folder (removed after). */
function timeOne(command, argv) {
  const out = mkdtempSync(join(tmpdir(), 'signgate-bench-fix-'));
  try {
    const [file, args] = gnuTime ? [gnuTime, ['-f', 'cpu=%U+%S', command, ...argv(out)]] : [command, argv(out)];
    const start = process.hrtime.bigint();
    const r = spawnSync(file, args, { stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.error || r.status === null) throw r.error ?? new Error(`${command} was killed by ${r.signal}`);
    const cpu = /cpu=([\d.]+)\+([\d.]+)/.exec(r.stderr.toString());
    return { seconds, cpu: cpu ? Number(cpu[1]) + Number(cpu[2]) : null, status: r.status };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export function benchFix() {
  let peers;
  try {
    peers = { cecil: buildPeer('cecil'), dnlib: buildPeer('dnlib') };
  } catch {
    console.log('fix beside Mono.Cecil and dnlib: skipped (the .NET SDK and NuGet are needed to build tools/fix-peers)');
    return;
  }
  const bin = join(repo, 'bin', 'signgate.js');
  const all = sets();
  console.log(`fix beside Mono.Cecil and dnlib (whole processes, median of ${runs}, alternating; load average ${loadavg()[0].toFixed(1)})`);
  console.log(
    `${'set'.padEnd(8)} ${'files'.padStart(5)} ${'MB'.padStart(6)} ${'signgate'.padStart(9)} ${'Cecil'.padStart(8)} ${'dnlib'.padStart(8)} ${'ratio'.padStart(7)}  target`,
  );
  for (const name of wanted) {
    const files = all[name];
    if (!files) {
      const why = {
        small: 'the SDK fixtures are missing',
        large: 'no two strong-named assemblies >= 15 MB under the .NET SDK',
        corpus: 'the NuGet corpus is not restored: npm run corpus:nuget',
      };
      console.log(`${name.padEnd(8)} not available (${name === 'mixed' ? `${why.large}, or ${why.corpus}` : why[name]})`);
      continue;
    }
    const runsOf = { signgate: [], cecil: [], dnlib: [], before: [] };
    for (let i = 0; i < runs; i++) {
      runsOf.signgate.push(timeOne(process.execPath, (out) => [bin, 'fix', '--key', key, '--out', out, ...files]));
      if (before) runsOf.before.push(timeOne(process.execPath, (out) => [before, 'fix', '--key', key, '--out', out, ...files]));
      runsOf.cecil.push(timeOne('dotnet', (out) => [peers.cecil, key, out, ...files]));
      runsOf.dnlib.push(timeOne('dotnet', (out) => [peers.dnlib, key, out, ...files]));
    }
    const times = Object.fromEntries(Object.entries(runsOf).map(([k, rs]) => [k, rs.map((r) => r.seconds)]));
    const cpuOf = (k) => (runsOf[k].length && runsOf[k].every((r) => r.cpu !== null) ? median(runsOf[k].map((r) => r.cpu)) : null);
    const [ours, cecil, dnlib] = [times.signgate, times.cecil, times.dnlib].map(median);
    const mb = files.reduce((n, f) => n + statSync(f).size, 0) / 1e6;
    const ratio = ours / Math.min(cecil, dnlib);
    console.log(
      `${name.padEnd(8)} ${String(files.length).padStart(5)} ${mb.toFixed(1).padStart(6)} ${ours.toFixed(3).padStart(8)}s ${cecil.toFixed(3).padStart(7)}s ${dnlib.toFixed(3).padStart(7)}s ${ratio.toFixed(2).padStart(6)}x  <= 1.0x ${ratio <= 1 ? 'met' : 'missed'}` +
        (before ? `  (before: ${median(times.before).toFixed(3)} s = ${(median(times.before) / Math.min(cecil, dnlib)).toFixed(2)}x)` : ''),
    );
    if (gnuTime) {
      const cpu = (k) => (cpuOf(k) === null ? '   n/a' : `${cpuOf(k).toFixed(2)}s`);
      console.log(
        `${''.padEnd(8)} CPU (user+system): signgate ${cpu('signgate')}${before ? `, before ${cpu('before')}` : ''}, Cecil ${cpu('cecil')}, dnlib ${cpu('dnlib')}`,
      );
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) benchFix();
