// The signature record of the signing service: one entry per file the service signed and returned, each carrying
// the hash of the entry before it (a hash chain), so that a removed, changed, inserted or reordered entry is found.
// The service writes it (server/), `serve record verify` checks it and `audit --record` reads an exported copy
// (audit/): the format lives here, below both. One entry is one line of JSON; the hash covers every field but
// itself, in a fixed order, so the same entry hashes the same whether it was kept in a file or in PostgreSQL.
// A record file is read a chunk at a time, never whole, and a line is parsed only within bounds on its length and
// its nesting (RecordLineSplitter, parseRecordLine): a record of any size, or a hostile one, costs little memory.
import { createHash } from 'node:crypto';

/** What the service knows about one signature it made: the fields of an entry without its place in the chain. */
export interface SignatureEvent {
  /** When the signed file was handed over (the job finished), ISO 8601 UTC. */
  readonly time: string;
  readonly organization: string;
  /** The user the access token was made for (or the OpenID Connect user claim). */
  readonly user: string;
  /** The personal access token's id (the first 16 hex digits of its SHA-256, as kept by the service), never the token; null for an OpenID Connect token. */
  readonly tokenId: string | null;
  /** The job id. */
  readonly job: string;
  /** The file's name in the job, as uploaded (`/`-separated). */
  readonly file: string;
  /** SHA-256 of the bytes uploaded, lowercase hex. */
  readonly uploadedSha256: string;
  /** SHA-256 of the bytes returned (the signed file), lowercase hex. */
  readonly signedSha256: string;
  readonly optionId: number;
  /** The public key token of the key that signed (16 hex digits). */
  readonly keyToken: string;
  /** Where that key lives: its key pair file as the configuration names it, or its pkcs11: URI without PIN attributes. */
  readonly keyLocation: string;
}

/** One entry of the record: the event, its sequence number (from 1, without gaps), the previous entry's hash and its own. */
export interface SignatureEntry extends SignatureEvent {
  readonly seq: number;
  readonly prev: string;
  readonly hash: string;
}

/** The end of a chain: the last entry's sequence number and hash (0 and GENESIS_HASH for an empty record). */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

/** What the first entry links to. */
export const GENESIS_HASH = '0'.repeat(64);
export const EMPTY_HEAD: ChainHead = { seq: 0, hash: GENESIS_HASH };

/** Prefixed to what an entry's hash covers: another format version would hash differently. */
const HASH_DOMAIN = 'signgate signature record 1\n';

/** An entry's fields in the order its hash covers them (and its line lists them, `hash` last). */
export const ENTRY_FIELDS = [
  'seq',
  'time',
  'organization',
  'user',
  'tokenId',
  'job',
  'file',
  'uploadedSha256',
  'signedSha256',
  'optionId',
  'keyToken',
  'keyLocation',
  'prev',
] as const;

/** The hash of an entry: SHA-256 over HASH_DOMAIN and the JSON array of its fields in ENTRY_FIELDS order. */
export function entryHash(entry: Omit<SignatureEntry, 'hash'>): string {
  return createHash('sha256')
    .update(HASH_DOMAIN + JSON.stringify(ENTRY_FIELDS.map((f) => entry[f])))
    .digest('hex');
}

/** The entries that follow `head` for `events`, in order, each linked to the one before. */
export function chainEvents(head: ChainHead, events: readonly SignatureEvent[]): SignatureEntry[] {
  const out: SignatureEntry[] = [];
  let { seq, hash: prev } = head;
  for (const event of events) {
    seq += 1;
    const unhashed = { seq, ...pick(event), prev };
    const hash = entryHash(unhashed);
    out.push({ ...unhashed, hash });
    prev = hash;
  }
  return out;
}

function pick(e: SignatureEvent): SignatureEvent {
  return {
    time: e.time,
    organization: e.organization,
    user: e.user,
    tokenId: e.tokenId,
    job: e.job,
    file: e.file,
    uploadedSha256: e.uploadedSha256,
    signedSha256: e.signedSha256,
    optionId: e.optionId,
    keyToken: e.keyToken,
    keyLocation: e.keyLocation,
  };
}

/** An entry as its line of the record (JSON, fields in a fixed order, with the newline). */
export function entryLine(entry: SignatureEntry): string {
  return `${JSON.stringify(Object.fromEntries([...ENTRY_FIELDS, 'hash'].map((f) => [f, entry[f as keyof SignatureEntry]])))}\n`;
}

/** Where and why a record stops being trustworthy. */
export interface RecordBreak {
  /** The line of the record (from 1), when it is a file; null for PostgreSQL rows and for the head. */
  readonly line: number | null;
  /** The entry's sequence number where it could be read. */
  readonly seq: number | null;
  readonly kind: 'truncated' | 'malformed' | 'changed' | 'missing' | 'reordered' | 'unlinked' | 'head';
  readonly message: string;
}

export interface RecordVerification {
  /** Entries that verified, up to the first break. */
  readonly entries: number;
  /** The last entry that verified (EMPTY_HEAD for none). */
  readonly head: ChainHead;
  /** The first break, or undefined when the whole record verifies. */
  readonly break?: RecordBreak;
}

const HEX64 = /^[0-9a-f]{64}$/;
const ENTRY_KEYS: ReadonlySet<string> = new Set([...ENTRY_FIELDS, 'hash']);

/** The fields of a parsed line that are not what an entry holds, named; empty when it is an entry. */
function shapeProblems(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return ['not a JSON object'];
  const v = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const f of ['time', 'organization', 'user', 'job', 'file', 'keyToken', 'keyLocation'] as const)
    if (typeof v[f] !== 'string') problems.push(`${f} is not text`);
  for (const f of ['uploadedSha256', 'signedSha256', 'prev', 'hash'] as const)
    if (typeof v[f] !== 'string' || !HEX64.test(v[f] as string)) problems.push(`${f} is not a SHA-256 in hex`);
  for (const f of ['seq', 'optionId'] as const) if (!Number.isSafeInteger(v[f]) || (v[f] as number) < 1) problems.push(`${f} is not a positive whole number`);
  if (v.tokenId !== null && typeof v.tokenId !== 'string') problems.push('tokenId is neither text nor null');
  // The hash covers the known fields only: a field beside them would be carried along unverified.
  const unknown = Object.keys(v).filter((k) => !ENTRY_KEYS.has(k));
  if (unknown.length) problems.push(`it has ${unknown.length === 1 ? 'a field' : 'fields'} no entry has (${unknown.map((k) => JSON.stringify(k)).join(', ')})`);
  return problems;
}

/**
 * Checks entries one at a time, in their order, against the chain: every entry's hash against its content, sequence
 * numbers from 1 without gaps or repeats, every entry linked to the one before; `finish(head)` then checks that the
 * chain reaches the head's entry with the head's hash (entries after it, appended since the head was read, are
 * accepted: they link). The first break stops it.
 */
export class ChainChecker {
  private last: ChainHead = EMPTY_HEAD;
  private count = 0;
  private broken: RecordBreak | undefined;
  private head: ChainHead | undefined;

  /** `where` names the record in messages. */
  constructor(private readonly where = 'the record') {}

  /**
   * Checks the next entry (`raw` as parsed, undefined for a line that is no JSON, or that was not parsed because of
   * `unread`, which says why); the break, once there is one.
   */
  add(raw: unknown, line: number | null, unread?: string): RecordBreak | undefined {
    if (this.broken) return this.broken;
    const at = line === null ? '' : ` (line ${line})`;
    const last = this.last;
    const problems = unread !== undefined ? [unread] : raw === undefined ? ['not JSON'] : shapeProblems(raw);
    if (problems.length)
      return this.fail({
        line,
        seq: null,
        kind: 'malformed',
        message: `${line === null ? `the entry after entry ${last.seq}` : `line ${line}`} is not an entry of a signature record: ${problems.join(', ')}`,
      });
    const e = raw as SignatureEntry;
    const { hash, ...unhashed } = e;
    if (entryHash(unhashed) !== hash)
      return this.fail({
        line,
        seq: e.seq,
        kind: 'changed',
        message: `entry ${e.seq}${at} was changed: its content does not match its hash ${hash.slice(0, 16)}…`,
      });
    const expected = last.seq + 1;
    if (e.seq > expected)
      return this.fail({
        line,
        seq: e.seq,
        kind: 'missing',
        message: `entry ${e.seq}${at} follows entry ${last.seq}: ${e.seq - expected === 1 ? `entry ${expected} is` : `entries ${expected} to ${e.seq - 1} are`} missing here (removed, or moved)`,
      });
    if (e.seq < expected)
      return this.fail({
        line,
        seq: e.seq,
        kind: 'reordered',
        message: `entry ${e.seq}${at} comes after entry ${last.seq}: entries were reordered or repeated`,
      });
    if (e.prev !== last.hash)
      return this.fail({
        line,
        seq: e.seq,
        kind: 'unlinked',
        message: `entry ${e.seq}${at} does not link to the entry before it (its prev ${e.prev.slice(0, 16)}… is not ${last.hash.slice(0, 16)}…): an entry was replaced or inserted`,
      });
    if (this.head && e.seq === this.head.seq && hash !== this.head.hash) {
      return this.fail({
        line,
        seq: e.seq,
        kind: 'head',
        message: `entry ${e.seq}${at} is not the entry the head of ${this.where} names (hash ${this.head.hash.slice(0, 16)}…): the end of the record was replaced`,
      });
    }
    this.last = { seq: e.seq, hash };
    this.count += 1;
    return undefined;
  }

  /** Checks a chain that continues `head` (an entry checked before): the next entry added must link to it. Call it before the first add. */
  continueFrom(head: ChainHead): void {
    this.last = head;
  }

  /** Compares the entries with this head (call it before the first add): the chain must reach it, with its hash. */
  expectHead(head: ChainHead): void {
    this.head = head;
  }

  /** Ends the check: with a head, a record that stops before the head's entry is truncated. */
  finish(): RecordVerification {
    const head = this.head;
    if (head && !this.broken && this.last.seq < head.seq) {
      const missing = head.seq - this.last.seq;
      this.fail({
        line: null,
        seq: this.last.seq + 1,
        kind: 'truncated',
        message: `${this.where} ends at entry ${this.last.seq}, but its head names entry ${head.seq}: ${missing === 1 ? `entry ${head.seq} was` : `entries ${this.last.seq + 1} to ${head.seq} were`} cut off`,
      });
    }
    return { entries: this.count, head: this.last, ...(this.broken ? { break: this.broken } : {}) };
  }

  private fail(b: RecordBreak): RecordBreak {
    this.broken = b;
    return b;
  }
}

/** Checks a whole sequence of entries with a ChainChecker (see there); `head`, when given, is expected from the start. */
export function verifyChain(
  entries: Iterable<{ readonly entry: unknown; readonly line: number | null }>,
  head?: ChainHead,
  where = 'the record',
): RecordVerification {
  const checker = new ChainChecker(where);
  if (head) checker.expectHead(head);
  for (const { entry, line } of entries) if (checker.add(entry, line)) break;
  return checker.finish();
}

/**
 * The longest line a record file may hold. An entry takes a few hundred bytes (its longest fields are a file name of
 * at most 260 characters and the key's location), so 64 KiB is far beyond any entry the service writes, and a line
 * longer than that is refused without being kept or parsed: a hostile record costs its reader 64 KiB, not its size.
 */
export const MAX_RECORD_LINE_BYTES = 64 * 1024;
/** The deepest a line's JSON may nest before it is parsed: an entry is one flat object (depth 1). */
export const MAX_RECORD_LINE_DEPTH = 4;
/** How much of a record file is read at a time. */
const READ_CHUNK_BYTES = 1 << 20;

/** One line of a record file as read. */
export interface RecordFileLine {
  /** Its number, from 1. */
  readonly line: number;
  /**
   * The line without its newline; undefined when it is longer than MAX_RECORD_LINE_BYTES (it is not kept). A view
   * of the reader's buffer: valid until the next line is asked for.
   */
  readonly bytes: Buffer | undefined;
  /** Its length in bytes, without the newline, even when it is not kept. */
  readonly length: number;
  /** A last line without its newline: an append that did not finish (or a cut file); it is no entry. */
  readonly torn: boolean;
}

/** Splits a record's bytes, given a chunk at a time, into lines, keeping at most MAX_RECORD_LINE_BYTES of one line. */
export class RecordLineSplitter {
  /** The start of the line the last chunk ended in (copies: the reader's buffer is filled again). */
  private parts: Buffer[] = [];
  private partBytes = 0;
  private count = 0;

  /** The lines that end in `chunk`. */
  *push(chunk: Buffer): Generator<RecordFileLine> {
    let from = 0;
    for (let newline = chunk.indexOf(0x0a); newline >= 0; newline = chunk.indexOf(0x0a, from)) {
      yield this.take(chunk.subarray(from, newline), false);
      from = newline + 1;
    }
    if (from === chunk.length) return;
    this.partBytes += chunk.length - from;
    // Past the bound the line is only counted: nothing of it is kept.
    if (this.partBytes > MAX_RECORD_LINE_BYTES) this.parts = [];
    else this.parts.push(Buffer.from(chunk.subarray(from)));
  }

  /** At the end of the file: the last line, when it has no newline (torn). */
  *end(): Generator<RecordFileLine> {
    if (this.partBytes > 0) yield this.take(Buffer.alloc(0), true);
  }

  private take(rest: Buffer, torn: boolean): RecordFileLine {
    const length = this.partBytes + rest.length;
    const bytes = length > MAX_RECORD_LINE_BYTES ? undefined : this.parts.length ? Buffer.concat([...this.parts, rest]) : rest;
    this.parts = [];
    this.partBytes = 0;
    this.count += 1;
    return { line: this.count, bytes, length, torn };
  }
}

/** The lines of `bytes` (a record held whole). */
function* linesOf(bytes: Buffer): Generator<RecordFileLine> {
  const splitter = new RecordLineSplitter();
  yield* splitter.push(bytes);
  yield* splitter.end();
}

/** Reads the next bytes of a record into `into` (from where it stands: a pipe too); how many it read, 0 at the end. */
export type RecordReader = (into: Buffer) => number;
/** Reads the bytes of a record from byte `at` into `into`; how many it read, 0 at the end. */
export type RecordReaderAt = (into: Buffer, at: number) => Promise<number>;

/** The lines of an open record file, read through `read` a chunk at a time. */
export function* recordFileLines(read: RecordReader): Generator<RecordFileLine> {
  const splitter = new RecordLineSplitter();
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (let n = read(chunk); n > 0; n = read(chunk)) yield* splitter.push(chunk.subarray(0, n));
  yield* splitter.end();
}

/** The lines of an open record file from byte `from` to its end, read through `read` a chunk at a time (without blocking the thread). */
export async function* recordHandleLines(read: RecordReaderAt, from = 0, chunkBytes = READ_CHUNK_BYTES): AsyncGenerator<RecordFileLine> {
  const splitter = new RecordLineSplitter();
  const chunk = Buffer.allocUnsafe(chunkBytes);
  for (let at = from, n = -1; n !== 0; at += n) {
    n = await read(chunk, at);
    yield* splitter.push(chunk.subarray(0, n));
  }
  yield* splitter.end();
}

/** Whether a line's JSON nests deeper than `max` arrays and objects (brackets inside strings do not count). */
function nestsDeeper(bytes: Buffer, max: number): boolean {
  // An entry has one brace and no bracket: nothing to count.
  const brace = bytes.indexOf(0x7b);
  if (bytes.indexOf(0x5b) < 0 && (brace < 0 || bytes.indexOf(0x7b, brace + 1) < 0)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c)
        i += 1; // the escaped character, whatever it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return false;
}

const TOO_LONG = `it is longer than ${MAX_RECORD_LINE_BYTES} bytes, the most a line of a record may take (an entry takes a few hundred)`;
const TOO_DEEP = `its JSON nests deeper than ${MAX_RECORD_LINE_DEPTH} levels (an entry is one flat object)`;

/**
 * What a line of a record holds: the value its JSON parses to (undefined for no JSON), or why it was not parsed (a
 * line too long to be kept, or nested deeper than an entry can be: JSON.parse never sees either).
 */
export function parseRecordLine(l: RecordFileLine): { readonly value: unknown; readonly unread?: string } {
  if (!l.bytes) return { value: undefined, unread: TOO_LONG };
  if (nestsDeeper(l.bytes, MAX_RECORD_LINE_DEPTH)) return { value: undefined, unread: TOO_DEEP };
  try {
    return { value: JSON.parse(l.bytes.toString('utf8')) };
  } catch {
    return { value: undefined };
  }
}

/**
 * Checks a record file's lines as they are read (the data directory's record, or `serve record export`'s): the
 * chain, through a ChainChecker, and that its last line is whole. `head` is the head the store kept beside the file,
 * when there is one. `onEntry` sees every entry that verified, in order: the caller keeps what it needs of them.
 */
export class RecordFileChecker {
  private readonly checker: ChainChecker;
  private torn: number | undefined;

  constructor(
    private readonly where = 'the record',
    head?: ChainHead,
    private readonly onEntry?: (entry: SignatureEntry) => void,
  ) {
    this.checker = new ChainChecker(where);
    if (head) this.checker.expectHead(head);
  }

  /** Checks the next line; false once nothing after it matters (a break, or the torn last line). */
  add(l: RecordFileLine): boolean {
    if (l.torn) {
      this.torn = l.line;
      return false;
    }
    const { value, unread } = parseRecordLine(l);
    if (this.checker.add(value, l.line, unread)) return false;
    this.onEntry?.(value as SignatureEntry);
    return true;
  }

  /** The verification: the first break, or a torn last line (once the chain before it verified) as truncation. */
  finish(): RecordVerification {
    const result = this.checker.finish();
    if ((result.break && result.break.kind !== 'truncated') || this.torn === undefined) return result;
    const where = `${this.where} is truncated: line ${this.torn}, after entry ${result.head.seq}`;
    const message = `${where}, is incomplete (an append that did not finish, or a cut file); it is no entry`;
    return { ...result, break: { line: this.torn, seq: result.head.seq + 1, kind: 'truncated', message } };
  }
}

/** Checks every line of `lines` with a RecordFileChecker (see there), up to the first break. */
export function verifyRecordFileLines(
  lines: Iterable<RecordFileLine>,
  where?: string,
  head?: ChainHead,
  onEntry?: (entry: SignatureEntry) => void,
): RecordVerification {
  const checker = new RecordFileChecker(where, head, onEntry);
  for (const l of lines) if (!checker.add(l)) break;
  return checker.finish();
}

/**
 * Verifies a record file's text held whole (small records of the service's own; a file is read with
 * recordFileLines instead): see RecordFileChecker. Every entry that verified comes back in `entryList`.
 */
export function verifyRecordText(text: string, head?: ChainHead, where = 'the record'): RecordVerification & { readonly entryList: SignatureEntry[] } {
  const entryList: SignatureEntry[] = [];
  return { ...verifyRecordFileLines(linesOf(Buffer.from(text, 'utf8')), where, head, (e) => entryList.push(e)), entryList };
}
