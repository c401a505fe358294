// What Authenticode verification costs per signed file: readAuthenticode over every file of a list (default the
// NuGet corpus, `npm run corpus:nuget`), in one process as `inspect` does it (so what is cached across files counts),
// after the files are read and their PE headers parsed. Each run is a fresh process; prints the median of the runs,
// in wall time and in the process's CPU time (steadier on a shared machine), beside the target of issue 46.
// Usage: node scripts/bench-authenticode.js [--list FILE] [--runs 5] [--trust-store PEM]   (needs `npm run build`)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const list = option('--list', join(homedir(), '.cache/signgate/nuget-corpus/assemblies.txt'));
const trustStore = option('--trust-store', undefined);
/** Issue 46: Authenticode verification at most this many milliseconds per signed file. */
const TARGET_MS_PER_SIGNED_FILE = 0.5;

if (args.includes('--one-run')) {
  const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;
  const { parsePeImage } = await import(dist('pe/pe-image.js'));
  const { readAuthenticode, parseTrustStore } = await import(dist('authenticode/authenticode.js'));
  const lib = await import(dist('authenticode/libraries.js'));
  lib.asn1js();
  lib.pkijs(); // loading the libraries is paid once per process, not per file
  const options = trustStore ? { trustStore: parseTrustStore(readFileSync(trustStore, 'utf8'), trustStore) } : {};
  const images = [];
  for (const path of readFileSync(list, 'utf8').split('\n').filter(Boolean)) {
    try {
      images.push(parsePeImage(readFileSync(path)));
    } catch {
      // not a PE image: inspect reads no Authenticode there either
    }
  }
  let signed = 0;
  let signedMs = 0;
  let allMs = 0;
  const cpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const cpuStart = cpuMs();
  for (const image of images) {
    const start = process.hrtime.bigint();
    const info = readAuthenticode(image, options);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    allMs += ms;
    if (info.state !== 'absent') {
      signed++;
      signedMs += ms;
    }
  }
  // CPU time of the whole loop (files without a table cost next to nothing: they stop at data directory 4).
  const allCpuMs = cpuMs() - cpuStart;
  process.stdout.write(JSON.stringify({ files: images.length, signed, signedMs, allMs, allCpuMs }));
  process.exit(0);
}

const runs = Number(option('--runs', '5'));
const self = fileURLToPath(import.meta.url);
const results = Array.from({ length: runs }, () => {
  const child = spawnSync(process.execPath, [self, '--one-run', ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (child.status !== 0) throw new Error(`bench run failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const { files, signed } = results[0];
const signedMs = median(results.map((r) => r.signedMs));
console.log(`${files} PE files, ${signed} with a certificate table${trustStore ? `, trust store ${trustStore}` : ''}; median of ${runs} runs`);
const perFile = signedMs / signed;
const cpuPerFile = median(results.map((r) => r.allCpuMs)) / signed;
const verdict = (ms) =>
  `${(ms / TARGET_MS_PER_SIGNED_FILE).toFixed(2)}x the target of ${TARGET_MS_PER_SIGNED_FILE} ms: ${ms <= TARGET_MS_PER_SIGNED_FILE ? 'met' : 'missed'}`;
console.log(
  `readAuthenticode, signed files: ${(signedMs / 1000).toFixed(3)} s = ${perFile.toFixed(3)} ms per signed file (runs: ${results.map((r) => (r.signedMs / signed).toFixed(3)).join(', ')} ms) = ${verdict(perFile)}`,
);
console.log(
  `  CPU time, all files / signed:  ${cpuPerFile.toFixed(3)} ms per signed file (runs: ${results.map((r) => (r.allCpuMs / signed).toFixed(3)).join(', ')} ms) = ${verdict(cpuPerFile)}`,
);
console.log(`readAuthenticode, all files:    ${(median(results.map((r) => r.allMs)) / 1000).toFixed(3)} s`);
