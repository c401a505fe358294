// The signature record in the data directory: <data-dir>/signature-record.jsonl, one JSON line per entry, appended
// and fsync'd; beside it signature-record.head.json names the last entry (its sequence number and hash), written
// empty before the first entry and atomically after every append, so that entries cut off the end are found too. Appends of one process are
// serialized; the data directory belongs to one process. An append that fails half-way is cut off again before
// the error is passed on; one a crash left half-written (a last line without its newline) is what
// `serve record verify` reports as truncation, and the next start moves it aside into signature-record.torn-<time>
// before appending (it never becomes an entry).
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readSync, statSync, ftruncateSync, renameSync, writeSync } from 'node:fs';
import { open, readFile, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { chainEvents, EMPTY_HEAD, entryLine, recordLines, verifyRecordText, type ChainHead, type RecordVerification, type SignatureEntry, type SignatureEvent } from '../../core/signature-record.js';
import type { SignatureRecordReader } from '../jobs/store.js';
import { PRIVATE_FILE, writeFileAtomicSync } from './fs-atomic.js';

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
    throw new UsageError(`${path} is not the head of a signature record (no JSON)`, 'Run `signgate serve record verify` and restore the data directory from its backup if the record was tampered with.', 'SG_ERR_CONFIG');
  }
  if (!Number.isSafeInteger(head?.seq) || head.seq < 0 || typeof head.hash !== 'string' || !/^[0-9a-f]{64}$/.test(head.hash)) {
    throw new UsageError(`${path} is not the head of a signature record (it needs "seq" and "hash")`, 'Run `signgate serve record verify` and restore the data directory from its backup if the record was tampered with.', 'SG_ERR_CONFIG');
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
          throw new UsageError(`the signature record ${this.path} ends in a line that is no entry`, 'Run `signgate serve record verify --data-dir …` to see where it breaks; restore the file from a backup, or move it aside to start a new record.', 'SG_ERR_CONFIG');
        }
        last = { seq: entry.seq, hash: entry.hash };
      }
      this.size = tail.wholeSize;
    }
    if (head && (last.seq < head.seq || (last.seq === head.seq && last.hash !== head.hash))) {
      throw new UsageError(`the signature record ${this.path} ends at entry ${last.seq}, but its head ${this.headPath} names entry ${head.seq}: entries were cut off or replaced`, 'Run `signgate serve record verify --data-dir …`; restore the record from a backup, or move both files aside to start a new record.', 'SG_ERR_CONFIG');
    }
    if (!head && last.seq > 0) {
      throw new UsageError(`the signature record ${this.path} has entries but its head ${this.headPath} is missing`, 'Restore the head from a backup (or move both files aside to start a new record); without it entries cut off the end would go unnoticed.', 'SG_ERR_CONFIG');
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

  /** Checks the whole record and its head (reads the file; the service may be appending meanwhile). */
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
    const text = existsSync(this.path) ? await readFile(this.path, 'utf8') : '';
    if (!head && text.length > 0) {
      const partial = verifyRecordText(text, undefined, this.path);
      return partial.break ? partial : { ...partial, break: { line: null, seq: null, kind: 'head', message: `the head ${this.headPath} is missing: entries cut off the end of ${this.path} could not be noticed` } };
    }
    return verifyRecordText(text, head, this.path);
  }

  /**
   * The files each of `jobs` (job ids) has entries for, read from the record (at a start, for the jobs a crash
   * left unfinished: their entries may have been appended before the job file could say finished).
   */
  async filesOfJobs(jobs: ReadonlySet<string>): Promise<Map<string, Set<string>>> {
    const found = new Map<string, Set<string>>();
    if (jobs.size === 0 || !existsSync(this.path)) return found;
    const text = await readFile(this.path, 'utf8');
    for (const { entry, torn } of recordLines(text)) {
      const e = entry as Partial<SignatureEntry> | undefined;
      if (torn || typeof e?.job !== 'string' || typeof e.file !== 'string' || !jobs.has(e.job)) continue;
      let files = found.get(e.job);
      if (!files) found.set(e.job, (files = new Set()));
      files.add(e.file);
    }
    return found;
  }

  /** Every whole line of the record as the entry it holds (verify() first: they are not checked here). */
  async *entries(): AsyncGenerator<SignatureEntry> {
    const text = existsSync(this.path) ? await readFile(this.path, 'utf8') : '';
    for (const { entry, torn } of recordLines(text)) if (!torn) yield entry as SignatureEntry;
  }

  /** The entries after the first `count` (whole lines only; the file is read from where the last read stopped). */
  async *entriesAfter(count: number): AsyncGenerator<SignatureEntry> {
    if (this.readTo?.count !== count) this.readTo = { count: 0, bytes: 0 };
    if (!existsSync(this.path)) return;
    const file = await open(this.path, 'r');
    let text: string;
    try {
      const { size } = await file.stat();
      const buffer = Buffer.alloc(Math.max(0, size - this.readTo.bytes));
      await file.read(buffer, 0, buffer.length, this.readTo.bytes);
      const whole = buffer.lastIndexOf(0x0a) + 1;
      text = buffer.subarray(0, whole).toString('utf8');
      this.readTo = { count: this.readTo.count, bytes: this.readTo.bytes + whole };
    } finally {
      await file.close();
    }
    let seen = this.readTo.count;
    for (const { entry } of recordLines(text)) {
      seen += 1;
      this.readTo = { ...this.readTo, count: seen };
      if (seen > count) yield entry as SignatureEntry;
    }
  }

  /** Where entriesAfter stopped reading: entries and bytes. */
  private readTo: { count: number; bytes: number } | undefined;

  /** The record's whole lines as they are (a last line without its newline is no entry and is left out). */
  async exportTo(write: (lines: string) => void | Promise<void>): Promise<number> {
    const text = existsSync(this.path) ? await readFile(this.path, 'utf8') : '';
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    if (whole) await write(whole);
    return whole.split('\n').length - 1;
  }
}

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
