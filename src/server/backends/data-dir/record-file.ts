// The signature record in the data directory: <data-dir>/signature-record.jsonl, one JSON line per entry, appended
// and fsync'd; beside it signature-record.head.json names the last entry (its sequence number and hash), written
// empty before the first entry and atomically after every append, so that entries cut off the end are found too. Appends of one process are
// serialized; the data directory belongs to one process. An append that fails half-way is cut off again before
// the error is passed on; one a crash left half-written (a last line without its newline) is what
// `serve record verify` reports as truncation, and the next start moves it aside into signature-record.torn-<time>
// before appending (it never becomes an entry). The record is read a chunk at a time, never whole (verify, export,
// the entries for checkpoints and proofs, the files of unfinished jobs at a start), with the line bounds of
// record/signature-record.ts; a start reads only the end of the file to find the last entry.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, statSync, ftruncateSync, renameSync, writeSync } from 'node:fs';
import { open, rename, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UsageError } from '../../../core/errors.js';
import {
  chainEvents,
  EMPTY_HEAD,
  entryLine,
  parseRecordLine,
  RecordFileChecker,
  recordHandleLines,
  type ChainHead,
  type RecordFileLine,
  type RecordVerification,
  type SignatureEntry,
  type SignatureEvent,
} from '../../../record/signature-record.js';
import type { RecordTreeHashes, SignatureRecordReader } from '../../ports.js';
import { RecordTreeFile } from './record-tree-file.js';
import { PRIVATE_FILE, writeFileAtomicSync } from '../../fs-atomic.js';

export const RECORD_FILE = 'signature-record.jsonl';
export const RECORD_HEAD_FILE = 'signature-record.head.json';

/** The record's head file, or undefined when there is none; throws when it cannot be read as one. */
export function readRecordHead(path: string): ChainHead | undefined {
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8');
  let head: ChainHead;
  try {
    head = JSON.parse(text) as ChainHead;
  } catch {
    throw new UsageError(
      `${path} is not the head of a signature record (no JSON)`,
      'Run `signgate serve record verify` and restore the data directory from its backup if the record was tampered with.',
      'SG_ERR_CONFIG',
    );
  }
  if (!Number.isSafeInteger(head?.seq) || head.seq < 0 || typeof head.hash !== 'string' || !/^[0-9a-f]{64}$/.test(head.hash)) {
    throw new UsageError(
      `${path} is not the head of a signature record (it needs "seq" and "hash")`,
      'Run `signgate serve record verify` and restore the data directory from its backup if the record was tampered with.',
      'SG_ERR_CONFIG',
    );
  }
  return { seq: head.seq, hash: head.hash };
}

/** Bytes at the end of the record read to find its last entry at start. */
const TAIL_BYTES = 64 * 1024;

/** The last line of the file after its last newline (the torn part) and the last whole line before it. */
function tailOf(path: string, size: number): { torn: Buffer; lastLine: string | undefined; wholeSize: number } {
  const fd = openSync(path, 'r');
  try {
    let from = Math.max(0, size - TAIL_BYTES);
    for (;;) {
      const buffer = Buffer.alloc(size - from);
      readSync(fd, buffer, 0, buffer.length, from);
      const lastNewline = buffer.lastIndexOf(0x0a);
      if (lastNewline < 0 && from > 0) {
        from = Math.max(0, from - TAIL_BYTES); // a torn line longer than the window: look further back
        continue;
      }
      const wholeSize = from + lastNewline + 1;
      const torn = buffer.subarray(lastNewline + 1);
      const before = buffer.subarray(0, Math.max(0, lastNewline));
      const previousNewline = before.lastIndexOf(0x0a);
      if (lastNewline >= 0 && previousNewline < 0 && from > 0) {
        from = Math.max(0, from - TAIL_BYTES);
        continue;
      }
      return { torn: Buffer.from(torn), lastLine: lastNewline < 0 ? undefined : before.subarray(previousNewline + 1).toString('utf8'), wholeSize };
    }
  } finally {
    closeSync(fd);
  }
}

/** The signature record of a data directory (see the top of this file). */
export class FileSignatureRecord implements SignatureRecordReader {
  readonly path: string;
  readonly headPath: string;
  private head: ChainHead = EMPTY_HEAD;
  /** Bytes of whole entries in the file: where the next append starts (a failed append is cut back to it). */
  private size = 0;
  /** The appends, one after the other. */
  private tail: Promise<unknown> = Promise.resolve();
  private opened = false;

  constructor(readonly dataDir: string) {
    this.path = join(dataDir, RECORD_FILE);
    this.headPath = join(dataDir, RECORD_HEAD_FILE);
  }

  /** For messages: where the record is. */
  get where(): string {
    return this.path;
  }

  /** The stored hashes of the record's tree, beside it (signature-record.tree). */
  tree(): RecordTreeHashes {
    return new RecordTreeFile(this.dataDir);
  }

  /**
   * Finds the end of the chain before the first append: a torn last line (a crash during an append) is moved aside
   * into signature-record.torn-<time> and cut off; a record that ends before its head, or whose last line is no
   * entry, is refused: it must be looked at (`serve record verify`) before anything is appended to it.
   * @returns a warning to log when a torn line was moved aside
   */
  openForAppend(): string | undefined {
    if (this.opened) return undefined;
    let warning: string | undefined;
    const head = readRecordHead(this.headPath);
    const size = existsSync(this.path) ? statSync(this.path).size : 0;
    let last: ChainHead = EMPTY_HEAD;
    if (size > 0) {
      const tail = tailOf(this.path, size);
      if (tail.torn.length) {
        const aside = join(this.dataDir, `signature-record.torn-${new Date().toISOString().replace(/[:.]/g, '-')}`);
        writeFileAtomicSync(aside, tail.torn);
        const fd = openSync(this.path, 'r+');
        try {
          ftruncateSync(fd, tail.wholeSize);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
        warning = `the signature record ${this.path} ended in an incomplete line (${tail.torn.length} bytes, an append a crash interrupted): moved aside into ${aside}; it is no entry`;
      }
      if (tail.lastLine !== undefined) {
        let entry: SignatureEntry | undefined;
        try {
          entry = JSON.parse(tail.lastLine) as SignatureEntry;
        } catch {
          entry = undefined;
        }
        if (!entry || !Number.isSafeInteger(entry.seq) || typeof entry.hash !== 'string') {
          throw new UsageError(
            `the signature record ${this.path} ends in a line that is no entry`,
            'Run `signgate serve record verify --data-dir …` to see where it breaks; restore the file from a backup, or move it aside to start a new record.',
            'SG_ERR_CONFIG',
          );
        }
        last = { seq: entry.seq, hash: entry.hash };
      }
      this.size = tail.wholeSize;
    }
    if (head && (last.seq < head.seq || (last.seq === head.seq && last.hash !== head.hash))) {
      throw new UsageError(
        `the signature record ${this.path} ends at entry ${last.seq}, but its head ${this.headPath} names entry ${head.seq}: entries were cut off or replaced`,
        'Run `signgate serve record verify --data-dir …`; restore the record from a backup, or move both files aside to start a new record.',
        'SG_ERR_CONFIG',
      );
    }
    if (!head && last.seq > 0) {
      throw new UsageError(
        `the signature record ${this.path} has entries but its head ${this.headPath} is missing`,
        'Restore the head from a backup (or move both files aside to start a new record); without it entries cut off the end would go unnoticed.',
        'SG_ERR_CONFIG',
      );
    }
    // An entry after the head: a crash between the append and the head's update. It is whole and linked: the head follows.
    if (head && last.seq > head.seq) writeHeadDurably(this.headPath, last);
    // A new record gets its (empty) head before its first entry: a crash during the first append then leaves entries
    // after a head, which the next start accepts, and a head that is missing beside entries always means a removed one.
    if (!head && last.seq === 0) writeHeadDurably(this.headPath, EMPTY_HEAD);
    this.head = last;
    this.opened = true;
    return warning;
  }

  /**
   * Appends entries for `events`, in order, after the entries appended before (one append at a time in this
   * process): one write, fsync, then the head. Resolves once they are on disk; a failure leaves the record as it was.
   */
  append(events: readonly SignatureEvent[]): Promise<SignatureEntry[]> {
    const run = this.tail.then(() => this.appendNow(events));
    this.tail = run.catch(() => {});
    return run;
  }

  private async appendNow(events: readonly SignatureEvent[]): Promise<SignatureEntry[]> {
    if (events.length === 0) return [];
    this.openForAppend();
    const entries = chainEvents(this.head, events);
    const bytes = Buffer.from(entries.map(entryLine).join(''), 'utf8');
    const file = await open(this.path, 'a', PRIVATE_FILE);
    try {
      try {
        await file.write(bytes);
        await file.datasync();
      } catch (error) {
        // Nothing half-written stays: the next append starts where this one did.
        await file.truncate(this.size).catch(() => {});
        throw error;
      }
    } finally {
      await file.close();
    }
    this.size += bytes.length;
    const last = entries[entries.length - 1]!;
    this.head = { seq: last.seq, hash: last.hash };
    await writeHeadDurablyAsync(this.headPath, this.head);
    return entries;
  }

  /** Checks the whole record and its head (reads the file a chunk at a time; the service may be appending meanwhile). */
  async verify(): Promise<RecordVerification> {
    // The head first: entries appended after it was read are accepted when they link.
    let head: ChainHead | undefined;
    try {
      head = readRecordHead(this.headPath);
    } catch (error) {
      // A head that cannot be read is a break of the record (exit 1), not a usage error.
      const reason = error instanceof UsageError ? error.message : `${this.headPath} cannot be read: ${(error as Error).message}`;
      return { entries: 0, head: EMPTY_HEAD, break: { line: null, seq: null, kind: 'head', message: `${reason}: the end of ${this.path} cannot be checked` } };
    }
    const checker = new RecordFileChecker(this.path, head);
    let lines = 0;
    for await (const l of this.lines()) {
      lines += 1;
      if (!checker.add(l)) break;
    }
    const result = checker.finish();
    if (head || lines === 0 || result.break) return result;
    const message = `the head ${this.headPath} is missing: entries cut off the end of ${this.path} could not be noticed`;
    return { ...result, break: { line: null, seq: null, kind: 'head', message } };
  }

  /**
   * The lines of the record from byte `from` (see RecordFileLine: the last one may be torn), read a chunk at a time,
   * never whole; none when there is no record yet. The file is closed when the caller stops.
   */
  private async *lines(from = 0, chunk?: number): AsyncGenerator<RecordFileLine> {
    let file: FileHandle;
    try {
      file = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      yield* recordHandleLines(async (into, at) => (await file.read(into, 0, into.length, at)).bytesRead, from, chunk);
    } finally {
      await file.close();
    }
  }

  /**
   * The files each of `jobs` (job ids) has entries for, read from the record (at a start, for the jobs a crash
   * left unfinished: their entries may have been appended before the job file could say finished).
   */
  async filesOfJobs(jobs: ReadonlySet<string>): Promise<Map<string, Set<string>>> {
    const found = new Map<string, Set<string>>();
    if (jobs.size === 0) return found;
    for await (const l of this.lines()) {
      const e = (l.torn ? undefined : parseRecordLine(l).value) as Partial<SignatureEntry> | undefined;
      if (typeof e?.job !== 'string' || typeof e.file !== 'string' || !jobs.has(e.job)) continue;
      let files = found.get(e.job);
      if (!files) found.set(e.job, (files = new Set()));
      files.add(e.file);
    }
    return found;
  }

  /** Every whole line of the record as the entry it holds (verify() first: they are not checked here). */
  async *entries(): AsyncGenerator<SignatureEntry> {
    for await (const l of this.lines()) if (!l.torn) yield parseRecordLine(l).value as SignatureEntry;
  }

  /**
   * The entries after the first `count` (whole lines only): read from where the last read stopped, else from the
   * line of entry count + 1, found by its sequence number (offsetOf); the caller checks the chain.
   */
  async *entriesAfter(count: number): AsyncGenerator<SignatureEntry> {
    if (this.readTo?.count !== count) {
      const bytes = count > 0 ? await this.offsetOf(count + 1) : 0;
      this.readTo = bytes === undefined ? { count: 0, bytes: 0 } : { count, bytes };
    }
    let { count: seen, bytes } = this.readTo;
    for await (const l of this.lines(bytes)) {
      if (l.torn) break;
      seen += 1;
      bytes += l.length + 1;
      this.readTo = { count: seen, bytes };
      if (seen > count) yield parseRecordLine(l).value as SignatureEntry;
    }
  }

  /** Where entriesAfter stopped reading: entries and bytes. */
  private readTo: { count: number; bytes: number } | undefined;

  /**
   * The entries of `job`: those at `seqs` (each found by offsetOf), else (a job of an older version) every entry
   * of the record read for it. Throws when an entry is not where its sequence number says.
   */
  async *entriesOfJob(job: string, seqs?: readonly number[]): AsyncGenerator<SignatureEntry> {
    if (!seqs) {
      for await (const entry of this.entries()) if ((entry as SignatureEntry | undefined)?.job === job) yield entry;
      return;
    }
    let next: { seq: number; at: number } | undefined;
    for (const seq of seqs) {
      // A job's entries are mostly one after the other: the next line starts where the last one ended.
      const at = next?.seq === seq ? next.at : await this.offsetOf(seq);
      const line = at === undefined ? undefined : await this.lineAt(at);
      const entry = line?.entry;
      if (entry?.seq !== seq)
        throw new UsageError(`the signature record ${this.path} holds no entry ${seq}, which job ${job} names`, VERIFY_FIRST, 'SG_ERR_CONFIG');
      next = { seq: seq + 1, at: line!.end };
      yield entry;
    }
  }

  /** The entry on the line that starts at byte `at` and where that line ends (after its newline); undefined for no whole line. */
  private async lineAt(at: number): Promise<{ entry: SignatureEntry | undefined; end: number } | undefined> {
    for await (const l of this.lines(at, 2 * SEEK_WINDOW)) {
      if (l.torn) return undefined;
      return { entry: parseRecordLine(l).value as SignatureEntry | undefined, end: at + l.length + 1 };
    }
    return undefined;
  }

  /**
   * Where the line of entry `seq` starts (for the entry after the last, where the whole lines end): a binary search
   * on the sequence numbers the lines begin with, O(log n) reads of SEEK_WINDOW bytes. Undefined when the lines do
   * not say (a line that is no entry, a gap): the caller then reads from the start. What it finds is not trusted:
   * the caller checks the chain, or compares the entry with the record's tree.
   */
  private async offsetOf(seq: number): Promise<number | undefined> {
    if (seq <= 1) return 0;
    let file: FileHandle;
    try {
      file = await open(this.path, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    try {
      const window = Buffer.allocUnsafe(2 * SEEK_WINDOW);
      /** The whole lines of the window read at `from` (the first begins at `from`), each with where it starts. */
      const linesAt = async (from: number): Promise<{ start: number; seq: number | undefined }[]> => {
        const { bytesRead } = await file.read(window, 0, window.length, from);
        const out: { start: number; seq: number | undefined }[] = [];
        for (let start = 0; ; ) {
          const end = window.indexOf(0x0a, start);
          if (end < 0 || end >= bytesRead) return out;
          const m = /^\{"seq":(\d+),/.exec(window.toString('latin1', start, Math.min(end, start + 32)));
          out.push({ start: from + start, seq: m ? Number(m[1]) : undefined });
          start = end + 1;
        }
      };
      /** The first line that begins at or after `at` (at > 0): where it starts and its sequence number, from one read. */
      const lineFrom = async (at: number): Promise<{ start: number; seq: number | undefined } | undefined> => {
        const { bytesRead } = await file.read(window, 0, window.length, at - 1);
        const newline = window.subarray(0, bytesRead).indexOf(0x0a);
        if (newline < 0) return undefined;
        const m = /^\{"seq":(\d+),/.exec(window.toString('latin1', newline + 1, Math.min(bytesRead, newline + 33)));
        return { start: at + newline, seq: m ? Number(m[1]) : undefined };
      };
      // lo: a line start whose entry comes before `seq`; hi: a line start whose entry is `seq` or later, or the end.
      let lo = 0;
      let hi = this.opened ? this.size : (await file.stat()).size;
      while (hi - lo > SEEK_WINDOW) {
        const line = await lineFrom(lo + Math.floor((hi - lo) / 2));
        if (line === undefined || line.start >= hi) break;
        if (line.seq === undefined) return undefined;
        if (line.seq < seq) lo = line.start;
        else hi = line.start;
      }
      const lines = await linesAt(lo);
      const found = lines.find((l) => l.seq === seq);
      if (found) return found.start;
      // The entry after the last: the end of the last whole line, when that line holds seq - 1.
      const last = lines.at(-1);
      if (last?.seq === seq - 1 && lines.length > 0) {
        const end = window.indexOf(0x0a, last.start - lo);
        return lo + end + 1;
      }
      return undefined;
    } finally {
      await file.close();
    }
  }

  /** The record's whole lines as they are (a last line without its newline is no entry and is left out), a batch at a time. */
  async exportTo(write: (lines: string) => void | Promise<void>): Promise<number> {
    let count = 0;
    let batch = '';
    for await (const line of this.lines()) {
      if (line.torn) break;
      if (!line.bytes) {
        const what = `line ${line.line} of the signature record ${this.path}`;
        throw new UsageError(`${what} is longer than a line of a record may be: it is no entry`, VERIFY_FIRST, 'SG_ERR_CONFIG');
      }
      batch += `${line.bytes.toString('utf8')}\n`;
      count += 1;
      if (batch.length >= EXPORT_BATCH_CHARS) {
        await write(batch);
        batch = '';
      }
    }
    if (batch) await write(batch);
    return count;
  }
}

const VERIFY_FIRST = 'Run `signgate serve record verify` first: it names the break.';
/** How near offsetOf's binary search comes before it reads lines in turn (an entry takes a few hundred bytes). */
const SEEK_WINDOW = 4096;
/** How much of the record export hands to its writer at a time. */
const EXPORT_BATCH_CHARS = 1 << 20;

/** writeHeadDurably without blocking the service's thread while the disk syncs (appends are one at a time). */
async function writeHeadDurablyAsync(path: string, head: ChainHead): Promise<void> {
  const temp = `${path}.tmp`;
  const file = await open(temp, 'w', PRIVATE_FILE);
  try {
    await file.writeFile(`${JSON.stringify(head)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
  if (process.platform === 'win32') return;
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

/** Writes the head through a temporary file, fsync'd, renamed over the old one, and the folder fsync'd (POSIX). */
function writeHeadDurably(path: string, head: ChainHead): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w', PRIVATE_FILE);
  try {
    writeSync(fd, `${JSON.stringify(head)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  if (process.platform === 'win32') return;
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
