// The signature record of any size: what the service's RecordLog (src/server/record/record-checkpoint.ts) costs
// over a data directory's record of 10,000 entries (the anchor) and of 10,000,000, served from its stored tree.
// For each size the record is written once (a temporary folder, four entries a job); then, each in a process of
// its own: the first read, which stores the tree; a start on the stored tree (a new RecordLog, its first refresh),
// its checkpoint, and --proofs consistency proofs and job inclusion proofs (a job's entries found in the record by
// their sequence numbers, compared with the stored leaves). Prints each process's peak RSS (VmHWM) beside the
// targets of issue 62: RSS at most 150 MB, a proof under 10 ms, a start in seconds.
// Usage: node scripts/bench-record.js [--sizes 10000,10000000] [--proofs 200] [--keep]   (needs `npm run build`)
import { spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const dist = (p) => new URL(`../dist/${p}`, import.meta.url).href;
const TARGET_RSS_MB = 150;
const TARGET_PROOF_MS = 10;
/** Entries of a job: job j holds entries 4j + 1 to 4j + 4. */
const PER_JOB = 4;

const peakRssMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const sha = (s) => createHash('sha256').update(s).digest('hex');

async function openLog(dir) {
  const { FileSignatureRecord } = await import(dist('server/backends/data-dir/record-file.js'));
  const { RecordLog } = await import(dist('server/record/record-checkpoint.js'));
  const { recordPrivateKey, verifierOf } = await import(dist('record/checkpoint.js'));
  const privateKey = recordPrivateKey(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return new RecordLog(new FileSignatureRecord(dir), { privateKey, verifier: verifierOf(privateKey), path: 'bench key' });
}

const child = option('--child', undefined);
if (child) {
  const dir = option('--dir');
  const size = Number(option('--size'));
  const proofs = Number(option('--proofs', '200'));
  const started = performance.now();
  const log = await openLog(dir);
  await log.refresh();
  const startMs = performance.now() - started;
  if (log.size !== size) throw new Error(`the log read ${log.size} entries, not ${size}`);
  const out = { startMs };
  if (child === 'serve') {
    let t = performance.now();
    await log.checkpoint();
    out.checkpointMs = performance.now() - t;
    let seed = 12345;
    const random = (n) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const consistency = [];
    const inclusion = [];
    for (let i = 0; i < proofs; i++) {
      const from = 1 + random(size - 1);
      t = performance.now();
      await log.consistency(from, size);
      consistency.push(performance.now() - t);
      const job = random(Math.floor(size / PER_JOB));
      t = performance.now();
      const proof = await log.jobProof(
        `job-${job}`,
        Array.from({ length: PER_JOB }, (_, k) => job * PER_JOB + k + 1),
      );
      inclusion.push((performance.now() - t) / PER_JOB);
      if (proof?.entries.length !== PER_JOB) throw new Error(`job-${job} has ${proof?.entries.length} entries`);
    }
    const stats = (list) => {
      const sorted = [...list].sort((a, b) => a - b);
      return { median: sorted[Math.floor(sorted.length / 2)], max: sorted[sorted.length - 1] };
    };
    out.consistency = stats(consistency);
    out.inclusion = stats(inclusion);
  }
  out.rssMb = peakRssMb();
  console.log(JSON.stringify(out));
  process.exit(0);
}

/** Writes a data directory's record of `size` entries (appends of 20,000). */
async function writeRecord(dir, size) {
  const { FileSignatureRecord } = await import(dist('server/backends/data-dir/record-file.js'));
  const record = new FileSignatureRecord(dir);
  const BATCH = 20_000;
  for (let from = 1; from <= size; from += BATCH) {
    const events = [];
    for (let n = from; n < Math.min(from + BATCH, size + 1); n++)
      events.push({
        time: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
        organization: `org-${n % 50}`,
        user: `user-${n % 300}`,
        tokenId: sha(`token ${n % 300}`).slice(0, 16),
        job: `job-${Math.floor((n - 1) / PER_JOB)}`,
        file: `Addins/Contoso.Addin${n % 1000}.dll`,
        uploadedSha256: sha(`uploaded ${n}`),
        signedSha256: sha(`signed ${n}`),
        optionId: 12345,
        keyToken: '0123456789abcdef',
        keyLocation: 'keys/12345_keypair.snk',
      });
    await record.append(events);
  }
}

function run(kind, dir, size, proofs) {
  const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', kind, '--dir', dir, '--size', String(size), '--proofs', String(proofs)], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`bench-record ${kind} of ${size} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const sizes = option('--sizes', '10000,10000000').split(',').map(Number);
const proofs = Number(option('--proofs', '200'));
const ms = (v) => `${v.toFixed(2)} ms`;
const rows = [];
for (const size of sizes) {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-bench-record-'));
  try {
    let t = performance.now();
    await writeRecord(dir, size);
    const writeS = (performance.now() - t) / 1000;
    const bytes = statSync(join(dir, 'signature-record.jsonl')).size;
    const build = run('build', dir, size, proofs);
    const serve = run('serve', dir, size, proofs);
    const treeBytes = statSync(join(dir, 'signature-record.tree')).size;
    rows.push({ size, writeS, bytes, treeBytes, build, serve });
    console.log(
      `record of ${size} entries (${(bytes / 1e6).toFixed(0)} MB, tree ${(treeBytes / 1e6).toFixed(1)} MB; written in ${writeS.toFixed(1)} s):` +
        `\n  first read, storing the tree: ${(build.startMs / 1000).toFixed(2)} s, peak RSS ${build.rssMb.toFixed(0)} MB` +
        `\n  start on the stored tree: ${ms(serve.startMs)}; checkpoint ${ms(serve.checkpointMs)}` +
        `\n  consistency proof: median ${ms(serve.consistency.median)}, max ${ms(serve.consistency.max)}; inclusion proof (a job's entry): median ${ms(serve.inclusion.median)}, max ${ms(serve.inclusion.max)} (${proofs} each)` +
        `\n  peak RSS serving: ${serve.rssMb.toFixed(0)} MB`,
    );
  } finally {
    if (!args.includes('--keep')) rmSync(dir, { recursive: true, force: true });
    else console.log(`  kept: ${dir}`);
  }
}
if (rows.length > 1) {
  const anchor = rows[0];
  for (const row of rows.slice(1)) {
    const worst = Math.max(row.serve.consistency.max, row.serve.inclusion.max);
    const rss = Math.max(row.build.rssMb, row.serve.rssMb);
    console.log(
      `${row.size} entries beside ${anchor.size}: peak RSS ${rss.toFixed(0)} MB (anchor ${Math.max(anchor.build.rssMb, anchor.serve.rssMb).toFixed(0)} MB; target <= ${TARGET_RSS_MB}: ${rss <= TARGET_RSS_MB ? 'met' : 'missed'}),` +
        ` slowest proof ${ms(worst)} (anchor ${ms(Math.max(anchor.serve.consistency.max, anchor.serve.inclusion.max))}; target < ${TARGET_PROOF_MS}: ${worst < TARGET_PROOF_MS ? 'met' : 'missed'}),` +
        ` start ${ms(row.serve.startMs)} (anchor ${ms(anchor.serve.startMs)})`,
    );
  }
}
