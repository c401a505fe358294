// Signature record files for the tests of its readers: many valid chained entries written to a file a batch at a
// time (a record of hundreds of megabytes is never held whole), a record key and a checkpoint signed over the first
// entries, and the CLI started with a small heap, the way an operator's machine with little memory runs it.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { copyFileSync, closeSync, mkdirSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RECORD_FILE, RECORD_HEAD_FILE } from '../../src/server/backends/data-dir/record-file.js';
import { RECORD_PUBLIC_KEY_FILE } from '../../src/server/record-key.js';
import { fixturePath } from './fixtures.js';
import { signCheckpoint, entryLeaf, formatVerifierKey, verifierOf } from '../../src/record/checkpoint.js';
import { rootHash, type Hash } from '../../src/record/merkle.js';
import { chainEvents, EMPTY_HEAD, entryLine, type ChainHead, type SignatureEvent } from '../../src/record/signature-record.js';
import { CLI } from './service-process.js';

/** The event of entry `n`: its hashes differ per entry; its file name is padded to make a line of about `bytes` (at least 560). */
export function recordEvent(n: number, bytes = 600): SignatureEvent {
  const hex = (x: number) => x.toString(16).padStart(64, '0');
  const name = `Addins/F${n}.dll`;
  return {
    time: new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString(),
    organization: 'sandbox',
    user: 'ci',
    tokenId: 'abcdef0123456789',
    job: `job-${Math.floor(n / 10)}`,
    file: name.padStart(Math.max(name.length, bytes - 546), '_'),
    uploadedSha256: hex(n),
    signedSha256: hex(n + 0x1000000000),
    optionId: 12345,
    keyToken: '0123456789abcdef',
    keyLocation: '../test-keys/12345_keypair.snk',
  };
}

export interface WrittenRecord {
  readonly entries: number;
  readonly bytes: number;
  readonly head: ChainHead;
  /** The leaves of the first `keepLeaves` entries, for a checkpoint over them. */
  readonly leaves: Hash[];
  /** For the sequence numbers of `endsOf`: the byte offset where the entry's line ends (after its newline). */
  readonly ends: Map<number, number>;
}

/**
 * Writes `count` chained entries to `path`, 10,000 at a time. `keepLeaves`: how many first leaves to hand back;
 * `endsOf`: the entries whose line ends to hand back; `plant`: fields that entries of these sequence numbers carry
 * instead of recordEvent's.
 */
export function writeRecord(
  path: string,
  count: number,
  options: { bytes?: number; keepLeaves?: number; endsOf?: ReadonlySet<number>; plant?: ReadonlyMap<number, Partial<SignatureEvent>> } = {},
): WrittenRecord {
  const fd = openSync(path, 'w');
  let head: ChainHead = EMPTY_HEAD;
  let bytes = 0;
  const leaves: Hash[] = [];
  const ends = new Map<number, number>();
  const eventOf = (n: number) => ({ ...recordEvent(n, options.bytes), ...options.plant?.get(n) });
  try {
    for (let from = 1; from <= count; from += 10_000) {
      const batch = chainEvents(
        head,
        Array.from({ length: Math.min(10_000, count - from + 1) }, (_, i) => eventOf(from + i)),
      );
      const lines = batch.map(entryLine);
      let end = bytes;
      for (const [i, e] of batch.entries()) {
        end += Buffer.byteLength(lines[i]!);
        if (e.seq <= (options.keepLeaves ?? 0)) leaves.push(entryLeaf(e));
        if (options.endsOf?.has(e.seq)) ends.set(e.seq, end);
      }
      bytes += writeSync(fd, lines.join(''));
      head = { seq: batch[batch.length - 1]!.seq, hash: batch[batch.length - 1]!.hash };
    }
  } finally {
    closeSync(fd);
  }
  return { entries: count, bytes, head, leaves, ends };
}

/** A fresh record key: its private half, and the verifier key text `serve record public-key` prints. */
export function recordKeyPair(): { privateKey: KeyObject; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  return { privateKey, publicKey: formatVerifierKey(verifierOf(privateKey)) };
}

/** A checkpoint over `leaves`, signed by `privateKey`. */
export function checkpointOver(leaves: readonly Hash[], privateKey: KeyObject): string {
  return signCheckpoint({ size: leaves.length, root: rootHash(leaves) }, privateKey);
}

export interface CliRun {
  readonly code: number | null;
  readonly out: string;
  readonly err: string;
  readonly seconds: number;
}

/**
 * Runs the CLI under `node --max-old-space-size=<heapMb>` to its end. With `peakRss`, a file that a script loaded
 * first fills at the process's exit with its peak resident memory in kilobytes (process.resourceUsage().maxRSS).
 */
export function runCliWithHeap(heapMb: number, args: readonly string[], env: NodeJS.ProcessEnv = {}, peakRss?: string): Promise<CliRun> {
  const started = process.hrtime.bigint();
  const report = peakRss === undefined ? [] : ['--require', peakRssReporter(peakRss)];
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, ...report, CLI, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err, seconds: Number(process.hrtime.bigint() - started) / 1e9 }));
  });
}

/** A script for `node --require` that writes the process's peak resident memory (kB) to `file` at its exit. */
function peakRssReporter(file: string): string {
  const script = `${file}.cjs`;
  writeFileSync(script, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(file)}, String(process.resourceUsage().maxRSS)));\n`);
  return script;
}

/** What a run must never show: a JavaScript stack, V8's fatal heap error, or the internal-error code. */
export const NO_CRASH = /\n\s+at |FATAL ERROR|SG_ERR_INTERNAL|Reached heap limit/;

/** A data directory made in `parent`, holding `path` as its record, with the head `head` and the record public key. */
export function recordDataDir(parent: string, path: string, head: { seq: number; hash: string }, publicKey: string): string {
  const dataDir = mkdtempSync(join(parent, 'data-'));
  copyFileSync(path, join(dataDir, RECORD_FILE));
  writeFileSync(join(dataDir, RECORD_HEAD_FILE), `${JSON.stringify(head)}\n`);
  writeFileSync(join(dataDir, RECORD_PUBLIC_KEY_FILE), `${publicKey}\n`);
  return dataDir;
}

/**
 * A release folder made in `parent` holding the FindingAddin.dll fixture, and `audit --record` of it under a heap
 * of `heapMb` (JSON, no timestamp check, no cache of an earlier run).
 */
export function recordRelease(parent: string): (heapMb: number, record: string, ...more: string[]) => Promise<CliRun> {
  const release = join(parent, 'release');
  mkdirSync(release, { recursive: true });
  copyFileSync(fixturePath('findings/passing/FindingAddin.dll'), join(release, 'FindingAddin.dll'));
  const args = ['audit', release, '--key', fixturePath('test-keys/12345_public.snk'), '--vendor', 'Contoso', '--no-timestamp', '--format', 'json'];
  return (heapMb, record, ...more) => runCliWithHeap(heapMb, [...args, '--record', record, ...more], { SIGNGATE_CACHE_DIR: join(parent, 'no-cache') });
}
