// Where a worker pool starts to pay for `inspect --json` and `verify`: whole processes over the first N files
// of a corpus (default /usr/lib/mono), with --threads 0 and with one thread per core, median of 5 each.
// Usage: node scripts/bench-scan-threshold.js [--corpus DIR]
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
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
console.log(`files  command          --threads 0  --threads ${cores}   ratio`);
for (const n of [50, 100, 200, 400, 800, files.length]) {
  for (const command of [['inspect', '--json'], ['verify']]) {
    const some = files.slice(0, n);
    const inThread = time([...command, '--threads', '0', ...some]);
    const pooled = time([...command, '--threads', String(cores), ...some]);
    console.log(`${String(n).padStart(5)}  ${command.join(' ').padEnd(15)} ${inThread.toFixed(3).padStart(10)} s ${pooled.toFixed(3).padStart(10)} s  ${(pooled / inThread).toFixed(2)}x`);
  }
}
