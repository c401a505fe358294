// Where a worker pool starts to pay for `inspect --json` and `verify`: whole processes over the first N files
// of a corpus (default /usr/lib/mono), with --threads 0 and with one thread per core, median of 5 each.
// Usage: node scripts/bench-scan-threshold.js [--corpus DIR] [--mode check]
// --mode check: the same for `check --format json` and `audit --format json` over folders holding the first N files
// (links to them), with the made-up vendor Mono whose API is Mono.Security (so that most files need signing and every
// rule runs); --threads 0 and --threads 2 run back to back, and each run reports its CPU (user + system, worker
// threads included) as it exits. Prints the medians and the median of the pairwise ratios.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const corpus = args.includes('--corpus') ? args[args.indexOf('--corpus') + 1] : '/usr/lib/mono';
const bin = fileURLToPath(new URL('../bin/signgate.js', import.meta.url));
const list = (dir, out = []) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) list(p, out);
    else if (e.isFile() && /\.(dll|exe)$/i.test(e.name)) out.push(p);
  }
  return out;
};
const files = list(corpus).sort();
const time = (argv) => {
  const runs = Array.from({ length: 5 }, () => {
    const start = process.hrtime.bigint();
    try {
      execFileSync(process.execPath, [bin, ...argv], { stdio: 'ignore' });
    } catch (error) {
      if (error.status === null) throw error; // exit 1 or 3 (unsigned or unreadable files) is a result, not a failure
    }
    return Number(process.hrtime.bigint() - start) / 1e9;
  }).sort((a, b) => a - b);
  return runs[2];
};
const cores = availableParallelism();
if (args.includes('--mode') && args[args.indexOf('--mode') + 1] === 'check') {
  checkThreshold();
  process.exit(0);
}
console.log(`files  command          --threads 0  --threads ${cores}   ratio`);
for (const n of [50, 100, 200, 400, 800, files.length]) {
  for (const command of [['inspect', '--json'], ['verify']]) {
    const some = files.slice(0, n);
    const inThread = time([...command, '--threads', '0', ...some]);
    const pooled = time([...command, '--threads', String(cores), ...some]);
    console.log(
      `${String(n).padStart(5)}  ${command.join(' ').padEnd(15)} ${inThread.toFixed(3).padStart(10)} s ${pooled.toFixed(3).padStart(10)} s  ${(pooled / inThread).toFixed(2)}x`,
    );
  }
}

/** `check` and `audit` per set size: wall and CPU seconds with --threads 0 and 2, back to back. */
function checkThreshold() {
  const key = fileURLToPath(new URL('../fixtures/test-keys/12345_public.snk', import.meta.url));
  const settings = ['--vendor', 'Mono', '--vendor-api', 'Mono.Security', '--key', key, '--format', 'json'];
  // The process reports its own CPU (worker threads included) as it exits.
  const cpuProbe = [
    '--import',
    `data:text/javascript,process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\ncpu='+(u.userCPUTime+u.systemCPUTime)/1e6)})`,
  ];
  const run = (argv) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [...cpuProbe, bin, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0 && r.status !== 1) throw new Error(`${argv[0]} exited with ${r.status}: ${r.stderr}`);
    return { wall: Number(process.hrtime.bigint() - start) / 1e9, cpu: Number(/cpu=([\d.]+)/.exec(r.stderr.toString())[1]) };
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`${files.length} files in ${corpus}; --threads 0 and --threads 2 back to back, median of 5 pairs`);
  console.log('files  command  wall t0   wall t2  ratio   cpu t0    cpu t2  ratio');
  for (const n of [100, 200, 400, 800, 1600, files.length]) {
    const folder = mkdtempSync(join(tmpdir(), 'signgate-threshold-'));
    try {
      for (const f of files.slice(0, n)) {
        const at = join(folder, relative(corpus, f));
        mkdirSync(dirname(at), { recursive: true });
        symlinkSync(f, at);
      }
      for (const command of [['check'], ['audit', '--no-timestamp']]) {
        const pairs = Array.from({ length: 5 }, () => [
          run([...command, folder, ...settings, '--threads', '0']),
          run([...command, folder, ...settings, '--threads', '2']),
        ]);
        const [w0, w2, c0, c2] = [
          median(pairs.map((p) => p[0].wall)),
          median(pairs.map((p) => p[1].wall)),
          median(pairs.map((p) => p[0].cpu)),
          median(pairs.map((p) => p[1].cpu)),
        ];
        const wallRatio = median(pairs.map((p) => p[1].wall / p[0].wall));
        const cpuRatio = median(pairs.map((p) => p[1].cpu / p[0].cpu));
        console.log(
          `${String(n).padStart(5)}  ${command[0].padEnd(7)} ${w0.toFixed(3).padStart(7)} s ${w2.toFixed(3).padStart(7)} s ${wallRatio.toFixed(2).padStart(5)}x ${c0.toFixed(3).padStart(7)} s ${c2.toFixed(3).padStart(7)} s ${cpuRatio.toFixed(2).padStart(5)}x`,
        );
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }
}
