// The local job ledger: what was uploaded where, with SHA-256 of each file and the job's state, so that a
// run interrupted by a network loss, Ctrl-C or a timeout resumes the same job instead of uploading again.
// JSON in the user's cache folder; it never holds a token. Several runs may share it (parallel CI jobs of one
// user, projects of a solution built at once): every change re-reads the file and writes it back under one lock file
// (`jobs.json.lock`, made with O_EXCL on every system, Windows included), so that no run overwrites another's entries
// and a record pin is replaced only by a run that checked its checkpoint against the pin saved then
// (workflows/record-proof.ts). A lock left by a process that died is taken over: at once when its process is gone
// (same machine), else once it is STALE_LOCK_MS old.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './files.js';
import { windowsPathKey } from '../core/windows-names.js';
import { SignGateError } from '../core/errors.js';

export type LedgerState = 'uploaded' | 'finished' | 'downloaded' | 'verified' | 'failed' | 'deleted';

export interface LedgerFile {
  readonly name: string;
  readonly sha256: string;
  readonly size: number;
  /** Where the file was read from, as shown. */
  readonly source: string;
}

export interface LedgerEntry {
  readonly jobId: string;
  /** The job's URLs as the service gave them (same origin as baseUrl), when it gave any. */
  readonly links?: { readonly status?: string; readonly download?: string; readonly delete?: string };
  readonly baseUrl: string;
  readonly comment: string | null;
  readonly createdAt: string;
  updatedAt: string;
  state: LedgerState;
  readonly files: readonly LedgerFile[];
  destination?: string;
  /** Per file: the service's state, whether it verified, the SHA-256 of the returned file, the messages. */
  results?: {
    fileName: string;
    state: string;
    verified: boolean;
    outputSha256: string | null;
    messages: { dateTime: string | null; messageType: string; message: string }[];
  }[];
}

/** The cache folder: SIGNGATE_CACHE_DIR, else %LOCALAPPDATA%\signgate on Windows, else $XDG_CACHE_HOME/signgate or ~/.cache/signgate. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SIGNGATE_CACHE_DIR) return env.SIGNGATE_CACHE_DIR;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'signgate');
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'signgate');
}

/** The name of a result package being downloaded into the cache folder by process `pid`. */
export function downloadName(pid = process.pid): string {
  return `download-${pid}-${randomBytes(6).toString('hex')}.zip`;
}

/** How old a download left in the cache must be before it is removed even when its process number is in use. */
const STALE_DOWNLOAD_MS = 24 * 3600 * 1000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes what runs that died (kill -9, a lost CI agent) left in the cache folder: result packages and their
 * `.part-*` files whose process is gone, or that are a day old. Returns the names removed.
 */
export function sweepStaleDownloads(folder = cacheDir()): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = /^\.?download-(\d+)-[0-9a-f]+\.zip(?:\.part-[0-9a-f]+)?$/.exec(name);
    if (!m) continue;
    const path = join(folder, name);
    try {
      const pid = Number(m[1]);
      if ((pid !== process.pid && !alive(pid)) || Date.now() - statSync(path).mtimeMs > STALE_DOWNLOAD_MS) {
        unlinkSync(path);
        removed.push(name);
      }
    } catch {
      // gone in between, or not ours to remove
    }
  }
  return removed;
}

/**
 * Makes `folder` if missing, 0700: what is in it (the ledger, downloads) names the service, its jobs and what it
 * said, the user's alone. The default cache folder is narrowed to 0700 if it is wider; a folder the user named
 * (SIGNGATE_CACHE_DIR, perhaps a checkout others read) is left as it is, the files in it being 0600.
 */
function makePrivateFolder(folder: string): string {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32' && folder === cacheDir({ ...process.env, SIGNGATE_CACHE_DIR: '' })) {
    try {
      if (statSync(folder).mode & 0o077) chmodSync(folder, 0o700);
    } catch {
      // a folder we may not change: the files in it are 0600
    }
  }
  return folder;
}

/** The cache folder, made if missing (see makePrivateFolder). */
export function makeCacheDir(): string {
  return makePrivateFolder(cacheDir());
}

export function ledgerPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'jobs.json');
}

/** A lock older than this is taken to be left by a process that died (a write takes milliseconds). */
export const STALE_LOCK_MS = 10_000;
/** How long a run waits for another's lock before it gives up with an error. */
const LOCK_WAIT_MS = 30_000;

/**
 * The identity a service's record pin belongs to: the base URL's scheme, host (lower case), port (none when it is
 * the scheme's default) and path without trailing slashes; no user, query or fragment. Spellings of one service
 * share it, so a trailing slash or an upper-case host never starts a second trust-on-first-use pin.
 */
export function recordIdentity(baseUrl: string): string {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return baseUrl;
  }
  return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`;
}

/** The latest checkpoint of a service's signature record this client saw and verified (workflows/record-proof.ts). */
export interface LedgerRecordCheckpoint {
  /** The record key (C2SP verifier key) the service showed the first time: later checkpoints must be signed by it. */
  readonly publicKey: string;
  readonly size: number;
  /** The root hash, base64. */
  readonly root: string;
  /** The signed checkpoint as the service gave it. */
  readonly checkpoint: string;
  readonly savedAt: string;
}

/**
 * The ledger's content; none when the file does not exist.
 * @throws SignGateError SG_ERR_IO_READ when it exists but cannot be read or is not a ledger: it holds the jobs' states
 * and the services' record pins, and a run that took it for empty would lose both (and trust any record key again)
 */
function readLedger(path: string): { jobs: LedgerEntry[]; recordCheckpoints: Record<string, LedgerRecordCheckpoint> } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { jobs: [], recordCheckpoints: {} };
    throw new SignGateError('SG_ERR_IO_READ', `${path}: the job ledger cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
      cause: error,
      file: path,
    });
  }
  let parsed: { jobs?: unknown; recordCheckpoints?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
  } catch (error) {
    throw new SignGateError(
      'SG_ERR_IO_READ',
      `${path}: the job ledger is damaged (${(error as Error).message}); it holds your jobs' states and the record keys pinned for each service. Move it aside to start a new one (the next sign then pins each service's record key anew), or mend it`,
      { cause: error, file: path },
    );
  }
  const checkpoints =
    parsed.recordCheckpoints && typeof parsed.recordCheckpoints === 'object' && !Array.isArray(parsed.recordCheckpoints)
      ? (parsed.recordCheckpoints as Record<string, LedgerRecordCheckpoint>)
      : {};
  return { jobs: Array.isArray(parsed.jobs) ? (parsed.jobs as LedgerEntry[]) : [], recordCheckpoints: checkpoints };
}

/**
 * The saved checkpoint of a service: under its identity, or under a spelling of its URL that an older signgate used
 * as the key (the first such one whose identity is the same).
 */
function pinOf(checkpoints: Record<string, LedgerRecordCheckpoint>, identity: string): { key: string; pin: LedgerRecordCheckpoint } | undefined {
  if (checkpoints[identity]) return { key: identity, pin: checkpoints[identity] };
  const key = Object.keys(checkpoints).find((k) => recordIdentity(k) === identity);
  return key === undefined ? undefined : { key, pin: checkpoints[key]! };
}

function readEntries(path: string): LedgerEntry[] {
  return readLedger(path).jobs;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What a lock file holds: its holder's process number and machine, and a token of this hold alone. */
function lockText(): string {
  return `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')}\n`;
}

/**
 * Whether a lock file (its text and age) was left by a run that died: its process is gone from this machine, or it
 * is older than STALE_LOCK_MS (a holder elsewhere, or one written by an older signgate: the process number alone).
 */
function staleLock(text: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs > STALE_LOCK_MS) return true;
  const [pid, host] = text.trim().split(' ');
  const holder = Number(pid);
  return host === hostname() && Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && !alive(holder);
}

/**
 * Removes the lock `lock` when it is stale. It is first moved aside (one run alone can move it), then removed when it
 * is still the lock judged stale; a lock another run took in between is put back.
 */
function takeOverStale(lock: string): void {
  try {
    const text = readFileSync(lock, 'utf8');
    if (!staleLock(text, statSync(lock).mtimeMs)) return;
    const aside = `${lock}.stale-${randomBytes(6).toString('hex')}`;
    renameSync(lock, aside);
    if (readFileSync(aside, 'utf8') !== text) {
      try {
        linkSync(aside, lock);
      } catch {
        // another run holds a lock again: the one moved aside ends here
      }
    }
    unlinkSync(aside);
  } catch {
    // gone in between, or being written: try again
  }
}

/**
 * Runs `body` holding `<path>.lock`: created exclusively, removed afterwards when it is still this run's; a stale one
 * (staleLock) is taken over.
 * @throws SignGateError SG_ERR_IO_WRITE when the lock cannot be had within LOCK_WAIT_MS
 */
function withLock<T>(path: string, body: () => T): T {
  const lock = `${path}.lock`;
  const mine = lockText();
  const until = Date.now() + LOCK_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, 'wx', 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // On Windows a lock being removed while another run reads it stays in the way for a moment (EPERM, EBUSY).
      const busy = code === 'EEXIST' || (process.platform === 'win32' && (code === 'EPERM' || code === 'EACCES' || code === 'EBUSY'));
      if (!busy || Date.now() > until)
        throw new SignGateError(
          'SG_ERR_IO_WRITE',
          busy && code === 'EEXIST'
            ? `${lock}: another signgate run has held the job ledger for ${LOCK_WAIT_MS / 1000} s`
            : `${lock}: cannot make the job ledger's lock file (${code ?? (error as Error).message})`,
          { cause: error, file: lock },
        );
      takeOverStale(lock);
      sleepSync(Math.min(2 + attempt * 2, 25));
      continue;
    }
    try {
      writeSync(fd, mine);
    } catch (error) {
      closeSync(fd);
      unlinkSync(lock);
      throw new SignGateError(
        'SG_ERR_IO_WRITE',
        `${lock}: cannot write the job ledger's lock file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
        {
          cause: error,
          file: lock,
        },
      );
    }
    closeSync(fd);
    break;
  }
  try {
    return body();
  } finally {
    try {
      if (readFileSync(lock, 'utf8') === mine) unlinkSync(lock);
    } catch {
      // taken over as stale by another run: nothing of ours to remove
    }
  }
}

/** Whether two record pins are the same checkpoint of the same key (or both absent). */
export function samePin(a: LedgerRecordCheckpoint | undefined, b: LedgerRecordCheckpoint | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.publicKey === b.publicKey && a.size === b.size && a.root === b.root);
}

/** What became of a checkpoint to save (Ledger.saveRecordCheckpoint). */
export type PinSave =
  | { readonly outcome: 'saved' | 'kept' }
  /** Another run saved `pin` (or removed the pin) after this one read it: the checkpoint must be checked against it again. */
  | { readonly outcome: 'changed'; readonly pin: LedgerRecordCheckpoint | undefined };

export class Ledger {
  private entries: LedgerEntry[];

  constructor(readonly path = ledgerPath()) {
    this.entries = readEntries(path);
  }

  all(): readonly LedgerEntry[] {
    return this.entries;
  }

  find(jobId: string): LedgerEntry | undefined {
    return this.entries.find((e) => e.jobId === jobId);
  }

  /** A job of the same service with exactly these files (names and contents) that was not completed. */
  resumable(baseUrl: string, files: readonly { name: string; sha256: string }[]): LedgerEntry | undefined {
    return this.latest(baseUrl, files, ['uploaded', 'finished', 'downloaded']);
  }

  /** The newest completed job of the same service with exactly these files. */
  completed(baseUrl: string, files: readonly { name: string; sha256: string }[]): LedgerEntry | undefined {
    return this.latest(baseUrl, files, ['verified', 'failed', 'deleted']);
  }

  private latest(baseUrl: string, files: readonly { name: string; sha256: string }[], states: readonly LedgerState[]): LedgerEntry | undefined {
    const key = (fs: readonly { name: string; sha256: string }[]) =>
      fs
        .map((f) => `${windowsPathKey(f.name)}\u0000${f.sha256}`)
        .sort()
        .join('\n');
    const wanted = key(files);
    return [...this.entries].reverse().find((e) => e.baseUrl === baseUrl && states.includes(e.state) && key(e.files) === wanted);
  }

  /** A job just uploaded, entered as `uploaded`: the first of its transitions (see finished, downloaded, deleted). */
  uploaded(job: Pick<LedgerEntry, 'jobId' | 'links' | 'baseUrl' | 'comment' | 'files'>): LedgerEntry {
    const now = new Date().toISOString();
    const entry: LedgerEntry = {
      jobId: job.jobId,
      ...(job.links ? { links: job.links } : {}),
      baseUrl: job.baseUrl,
      comment: job.comment,
      createdAt: now,
      updatedAt: now,
      state: 'uploaded',
      files: job.files,
    };
    this.upsert(entry);
    return entry;
  }

  /** The service finished the job: its results can be downloaded. */
  finished(entry: LedgerEntry): void {
    entry.state = 'finished';
    this.upsert(entry);
  }

  /** The job's results are written to `destination` and each file verified: `verified` when all are, else `failed`. */
  downloaded(entry: LedgerEntry, destination: string, results: NonNullable<LedgerEntry['results']>): void {
    entry.destination = destination;
    entry.results = results;
    entry.state = results.every((r) => r.verified) ? 'verified' : 'failed';
    this.upsert(entry);
  }

  /** The job was deleted on the service, everything of it saved here. */
  deleted(entry: LedgerEntry): void {
    entry.state = 'deleted';
    this.upsert(entry);
  }

  /** Adds or replaces the entry of `entry.jobId`, keeping what other runs wrote meanwhile. */
  upsert(entry: LedgerEntry): void {
    entry.updatedAt = new Date().toISOString();
    this.makeFolder();
    withLock(this.path, () => {
      this.entries = [...readEntries(this.path).filter((e) => e.jobId !== entry.jobId), entry];
      this.save();
    });
  }

  /**
   * The latest record checkpoint saved for the service `identity` (workflows/record-proof.ts recordIdentity), read from
   * the file now; a key an older ledger has (a spelling of the base URL) counts when its identity is the same.
   */
  recordCheckpoint(identity: string): LedgerRecordCheckpoint | undefined {
    return pinOf(readLedger(this.path).recordCheckpoints, identity)?.pin;
  }

  /**
   * Saves the service's latest record checkpoint under its identity, under the lock and only when the pin saved now
   * is still `seen`, the one the checkpoint was checked against (same key, size and root; none for a first use):
   * then it replaces it, unless `seen` is larger (a later checkpoint of the same record, which stays). When another
   * run saved or removed the pin meanwhile nothing is written, and the pin now saved is returned, to check the
   * checkpoint against it again. A key of an older spelling of the same service is replaced.
   */
  saveRecordCheckpoint(identity: string, checkpoint: LedgerRecordCheckpoint, seen: LedgerRecordCheckpoint | undefined): PinSave {
    this.makeFolder();
    return withLock(this.path, (): PinSave => {
      const ledger = readLedger(this.path);
      this.entries = ledger.jobs;
      const before = pinOf(ledger.recordCheckpoints, identity);
      if (!samePin(before?.pin, seen)) return { outcome: 'changed', pin: before?.pin };
      if (before && before.pin.size > checkpoint.size) return { outcome: 'kept' };
      const rest = Object.fromEntries(Object.entries(ledger.recordCheckpoints).filter(([k]) => k !== before?.key));
      this.save({ ...rest, [identity]: checkpoint });
      return { outcome: 'saved' };
    });
  }

  /** Removes the record pin of the service `identity` (and of older spellings of it); the pin removed, if any. */
  removeRecordCheckpoint(identity: string): LedgerRecordCheckpoint | undefined {
    this.makeFolder();
    return withLock(this.path, () => {
      const ledger = readLedger(this.path);
      this.entries = ledger.jobs;
      const gone = Object.entries(ledger.recordCheckpoints).filter(([k]) => recordIdentity(k) === identity);
      if (!gone.length) return undefined;
      this.save(Object.fromEntries(Object.entries(ledger.recordCheckpoints).filter(([k]) => recordIdentity(k) !== identity)));
      return gone[0]![1];
    });
  }

  private makeFolder(): void {
    makePrivateFolder(join(this.path, '..'));
  }

  private save(recordCheckpoints = readLedger(this.path).recordCheckpoints): void {
    const doc = Object.keys(recordCheckpoints).length ? { jobs: this.entries, recordCheckpoints } : { jobs: this.entries };
    writeFileAtomic(this.path, new TextEncoder().encode(`${JSON.stringify(doc, null, 2)}\n`), 0o600);
  }
}
