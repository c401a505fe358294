// Reading the files the user named (whole, a piece at a time, into shared memory or on demand) with errors that
// name them, and writing files safely (a temporary file, then a rename).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, sep } from 'node:path';
import { SignGateError, UsageError } from '../core/errors.js';
import type { EngineInput } from '../engine/index.js';
import type { DownloadSink } from '../service-client/client.js';
import type { ZipEntry } from '../zip/write-zip.js';
import { displayPath, type InputFile } from './input-paths.js';

/** Reads a whole file, turning fs errors into SG_ERR_IO_READ with the file name; `shared`: into a SharedArrayBuffer. */
export function readInputFile(absolutePath: string, shownAs = absolutePath, shared = false): Buffer {
  try {
    return shared ? readShared(absolutePath) : readFileSync(absolutePath);
  } catch (cause) {
    throw readError(cause, shownAs);
  }
}

/**
 * Runs `use` on the file opened for reading, and closes it after: for a file read a piece at a time, never whole. An
 * error of the file system (opening or reading) is readInputFile's SG_ERR_IO_READ naming the file; what `use`
 * throws otherwise passes as it is.
 */
export function withInputFile<T>(absolutePath: string, shownAs: string, use: (fd: number) => T): T {
  let fd: number | undefined;
  try {
    fd = openSync(absolutePath, 'r');
    return use(fd);
  } catch (cause) {
    throw (cause as NodeJS.ErrnoException).syscall === undefined ? cause : readError(cause, shownAs);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Reads an open file from where it stands (a pipe too) into the buffer given: how many bytes, 0 at its end. */
export function readerOf(fd: number): (into: Buffer) => number {
  return (into) => readSync(fd, into, 0, into.length, null);
}

/**
 * Reads a whole file into `into` when it is large enough, else into a new buffer of its own (not from Node's pool,
 * so that the caller may keep it for the next file: `Buffer.from(result.buffer)`). Errors as readInputFile.
 * The result is a view: the caller must not keep it, or anything made from it, once `into` is used again.
 */
export function readInputFileInto(absolutePath: string, shownAs: string, into: Buffer | undefined): Buffer {
  let fd: number | undefined;
  try {
    fd = openSync(absolutePath, 'r');
    const size = fstatSync(fd).size;
    if (size === 0) return readFileSync(fd); // a pipe or a file of /proc: read to its end, as readInputFile does
    return readOpenFile(fd, into && into.length >= size ? into.subarray(0, size) : Buffer.allocUnsafeSlow(size));
  } catch (cause) {
    throw readError(cause, shownAs);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Fills `bytes` from the start of an open file; a file that ended sooner gives the part read. */
function readOpenFile(fd: number, bytes: Buffer): Buffer {
  let at = 0;
  for (let n = -1; at < bytes.length && n !== 0; at += n) n = readSync(fd, bytes, at, bytes.length - at, at);
  return at === bytes.length ? bytes : bytes.subarray(0, at);
}

/** A file's size and hex SHA-256 and SHA-512. */
export interface FileDigest {
  readonly size: number;
  readonly sha256: string;
  readonly sha512: string;
}

/**
 * The SHA-256 and SHA-512 of a file, read a part at a time into `buffer` (reused between files; 1 MB when not
 * given), so that a large file that is no assembly (an AOT image of 17 MB beside the assemblies) is never held whole.
 * @throws SignGateError SG_ERR_IO_READ naming `shownAs` when the file cannot be read
 */
export function digestFile(absolutePath: string, shownAs: string, buffer: Buffer = Buffer.allocUnsafe(1 << 20)): FileDigest {
  let fd: number | undefined;
  try {
    fd = openSync(absolutePath, 'r');
    if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
    const sha256 = createHash('sha256');
    const sha512 = createHash('sha512');
    let size = 0;
    for (let n = readSync(fd, buffer, 0, buffer.length, size); n > 0; n = readSync(fd, buffer, 0, buffer.length, size)) {
      const part = buffer.subarray(0, n);
      sha256.update(part);
      sha512.update(part);
      size += n;
    }
    return { size, sha256: sha256.digest('hex'), sha512: sha512.digest('hex') };
  } catch (cause) {
    throw readError(cause, shownAs);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** SG_ERR_IO_READ for a file that could not be read, with the reason in words. */
export function readError(cause: unknown, shownAs: string): SignGateError {
  const code = (cause as NodeJS.ErrnoException).code;
  const reason =
    code === 'ENOENT'
      ? 'the file does not exist; check the path (relative paths start at the working directory, or at the config file for paths in signgate.config.json)'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a folder, not a file'
          : `cannot read the file (${code ?? (cause as Error).message})`;
  return new SignGateError('SG_ERR_IO_READ', `${shownAs}: ${reason}`, { cause, file: shownAs });
}

/** A file read each time it is asked for, never held (see readCheckInputs). */
export interface FileOnDemand {
  readonly size: number;
  /**
   * The file's bytes: a new buffer, or a view of `into` when that is large enough (the caller reuses it).
   * @throws SignGateError SG_ERR_IO_READ when the file can no longer be read, or changed since it was first seen
   */
  read(into?: Buffer): Buffer;
}

/**
 * A file whose size and modification time are taken now, and whose bytes are read when asked for. Each read checks
 * that the file is still the one first seen: a check that reads a file twice must not judge two versions of it.
 * @throws SignGateError SG_ERR_IO_READ when the file cannot be read
 */
export function fileOnDemand(absolutePath: string, shownAs = absolutePath): FileOnDemand {
  const seen = statInput(absolutePath, shownAs);
  return {
    size: seen.size,
    read(into) {
      let fd: number | undefined;
      try {
        fd = openSync(absolutePath, 'r');
        const now = fstatSync(fd);
        if (now.size !== seen.size || now.mtimeMs !== seen.mtimeMs) {
          const what = now.size !== seen.size ? `${seen.size} bytes when first seen, ${now.size} now` : 'it has a new modification time';
          throw new SignGateError(
            'SG_ERR_IO_READ',
            `${shownAs}: the file changed while signgate was reading it (${what}); run the command again once the build has finished writing it`,
            { file: shownAs },
          );
        }
        return readOpenFile(fd, into && into.length >= now.size ? into.subarray(0, now.size) : Buffer.allocUnsafe(now.size));
      } catch (cause) {
        if (cause instanceof SignGateError) throw cause;
        throw readError(cause, shownAs);
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },
  };
}

function statInput(absolutePath: string, shownAs: string): { size: number; mtimeMs: number } {
  try {
    const stat = statSync(absolutePath);
    if (stat.isDirectory()) throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
    return { size: stat.size, mtimeMs: stat.mtimeMs };
  } catch (cause) {
    throw readError(cause, shownAs);
  }
}

/**
 * The file in a SharedArrayBuffer: worker threads read it where it is, with no copy per message (the check pool
 * sends every file to the threads twice).
 */
function readShared(absolutePath: string): Buffer {
  const fd = openSync(absolutePath, 'r');
  try {
    return readOpenFile(fd, Buffer.from(new SharedArrayBuffer(fstatSync(fd).size)));
  } finally {
    closeSync(fd);
  }
}

/**
 * A text given in pieces, joined into parts of about 64 KB, each ending where a piece ends a line (a report written
 * or printed a part at a time, never held whole). Parts of a megabyte went to V8's large-object space, which only a
 * full collection empties: printing the audit of the Mono corpus (15 MB) took 75 MB of heap.
 */
export function* lineBatches(pieces: Iterable<string>, size = 1 << 16): Generator<string> {
  let part = '';
  // Whether the part ends a line, told by its last piece that is not empty: asking the joined part would flatten it
  // into a new string at every piece once it is long enough.
  let endsLine = false;
  for (const piece of pieces) {
    part += piece;
    if (piece.length > 0) endsLine = piece.charCodeAt(piece.length - 1) === 10;
    if (part.length >= size && endsLine) {
      yield part;
      part = '';
    }
  }
  if (part) yield part;
}

/**
 * Writes `content` (bytes, or a text written as UTF-8, whole or in pieces) to `target` through a temporary file in the same folder and a rename, so that the
 * target is either the old file or the complete new one, never half written.
 */
export function writeFileAtomic(target: string, content: Uint8Array | string | Iterable<string>, mode = 0o666): void {
  const file = new AtomicFileWriter(target, mode);
  try {
    // A text in pieces (a report of many megabytes) is encoded a batch at a time, never held whole.
    const parts = content instanceof Uint8Array ? [content] : typeof content === 'string' ? [content] : lineBatches(content);
    for (const part of parts) file.write(part);
  } catch (cause) {
    throw file.failed(cause);
  }
  file.commit();
}

/**
 * A file written a piece at a time as writeFileAtomic writes it whole: into a temporary file in the target's folder,
 * which `commit` syncs and renames over the target, so that the target is either the old file or the complete new
 * one. For what is too large to gather first (`serve record export -o`). Every error is SG_ERR_IO_WRITE naming the
 * target, after the temporary file was removed; `abort` removes it when the writer gives up for a reason of its own.
 */
export class AtomicFileWriter {
  private readonly temp: string;
  private fd: number | undefined;
  private failure: SignGateError | undefined;

  constructor(
    private readonly target: string,
    mode = 0o666,
  ) {
    this.temp = join(dirname(target), `.${basename(target)}.signgate-tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      this.fd = openSync(this.temp, 'wx', mode);
    } catch (cause) {
      throw this.failed(cause);
    }
  }

  /** Appends `part` (a text as UTF-8). */
  write(part: Uint8Array | string): void {
    const bytes = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(this.fd!, bytes, written, bytes.length - written);
    } catch (cause) {
      throw this.failed(cause);
    }
  }

  /** Syncs the file and puts it in the target's place. */
  commit(): void {
    try {
      fsyncSync(this.fd!);
      closeSync(this.fd!);
      this.fd = undefined;
      renameSync(this.temp, this.target);
    } catch (cause) {
      throw this.failed(cause);
    }
  }

  /** Closes and removes the temporary file: the target stays as it was. */
  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    try {
      unlinkSync(this.temp);
    } catch {
      // the temporary file was never created or is already gone
    }
  }

  /** Aborts, and the SG_ERR_IO_WRITE to throw for `cause` (the first one, when the writer had failed already). */
  failed(cause: unknown): SignGateError {
    this.abort();
    const reason = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
    const message = `${this.target}: cannot write the file (${reason}); the original is unchanged`;
    this.failure ??= new SignGateError('SG_ERR_IO_WRITE', message, { cause, file: this.target });
    return this.failure;
  }
}

/**
 * Inputs larger than this together are not held in memory by `check` and `audit` (see CheckOptions.readAtOnceBytes):
 * 64 MiB, well above an add-in's build output, well below what holding a large release costs (the 170 MB of the
 * Mono corpus took check to 388 MB and audit to 443 MB of peak RSS).
 */
export const DEFAULT_READ_AT_ONCE_BYTES = 64 * 1024 * 1024;

/**
 * Reads `files` the way the engine will run over them: into shared memory when `threads` worker threads will run
 * and `forPool`; as files to read when `onDemand` and they are larger together than `readAtOnceBytes` (see
 * inputReading); else into memory.
 */
export function readInputs(
  files: readonly InputFile[],
  root: string | null,
  how: {
    readonly forPool?: boolean | undefined;
    readonly onDemand?: boolean | undefined;
    readonly threads: number;
    readonly readAtOnceBytes?: number | undefined;
  },
): { inputs: EngineInput[]; onDemand: boolean } {
  const reading = how.forPool === true && how.threads > 0 ? 'shared' : how.onDemand === true ? inputReading(files, 0, how.readAtOnceBytes) : 'memory';
  return { inputs: readCheckInputs(files, root, reading), onDemand: reading === 'on-demand' };
}

/** How readCheckInputs reads: into memory, into shared memory for worker threads, or each time asked (held nowhere). */
export type InputReading = 'memory' | 'shared' | 'on-demand';

/**
 * How `check` and `audit` read `files`: shared memory for a pool, on demand in the calling thread when they are
 * larger together than `readAtOnceBytes` (their sizes are taken from the file system), else into memory.
 * @throws RangeError for a `readAtOnceBytes` that is negative or not a number
 */
export function inputReading(files: readonly InputFile[], threads: number, readAtOnceBytes = DEFAULT_READ_AT_ONCE_BYTES): InputReading {
  if (!(readAtOnceBytes >= 0)) throw new RangeError(`readAtOnceBytes must be a number of bytes of at least 0, not ${readAtOnceBytes}`);
  if (threads > 0) return 'shared';
  let total = 0;
  for (const f of files) {
    total += statSafeSize(f.absolutePath);
    if (total > readAtOnceBytes) return 'on-demand';
  }
  return 'memory';
}

/** A file's size, or 0 when it cannot be stat'ed (the read that follows says why). */
function statSafeSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Reads `files` as check inputs: each upload name is the path below `root` (`/`-separated), or the file name
 * without a root. `shared` reads them into shared memory for worker threads; `on-demand` only takes their sizes,
 * and the engine reads each file when a task needs it (see fileOnDemand).
 * @throws UsageError for a file outside `root`; SignGateError SG_ERR_IO_READ
 */
export function readCheckInputs(files: readonly InputFile[], root: string | null, reading: InputReading = 'memory'): EngineInput[] {
  return files.map((f) => {
    let uploadName = basename(f.absolutePath);
    if (root) {
      const rel = relative(root, f.absolutePath);
      if (rel.startsWith('..') || isAbsolute(rel))
        throw new UsageError(
          `${f.displayPath} is outside the root folder ${displayPath(root)}`,
          'Pass a --root that contains every file, or leave --root out.',
        );
      uploadName = rel.split(sep).join('/');
    }
    if (reading !== 'on-demand')
      return { path: f.displayPath, uploadName, bytes: readInputFile(f.absolutePath, f.displayPath, reading === 'shared'), explicit: f.explicit };
    const file = fileOnDemand(f.absolutePath, f.displayPath);
    return { path: f.displayPath, uploadName, explicit: f.explicit, size: file.size, read: file.read };
  });
}

/**
 * A file written a part at a time without blocking the thread, into a temporary file beside the target
 * (`.name.<tag>-xxxxxxxx`) that `commit` renames over it; `discard` removes it. Errors are the file system's own.
 */
export class PartFile {
  private constructor(
    private readonly target: string,
    private readonly temp: string,
    private readonly file: FileHandle,
  ) {}

  /** Creates the temporary file for `target`. */
  static async create(target: string, tag: string): Promise<PartFile> {
    const temp = join(dirname(target), `.${basename(target)}.${tag}-${randomBytes(4).toString('hex')}`);
    return new PartFile(target, temp, await open(temp, 'wx'));
  }

  /** Appends `chunks`, in order. */
  async write(...chunks: Uint8Array[]): Promise<void> {
    await this.file.writev(chunks);
  }

  /** Closes the file and puts it in the target's place. */
  async commit(): Promise<void> {
    await this.file.close();
    await rename(this.temp, this.target);
  }

  /** Closes and removes the temporary file: the target stays as it was. */
  async discard(): Promise<void> {
    await this.file.close().catch(() => {});
    await rm(this.temp, { force: true });
  }
}

/** Where client.download puts the result package: a part file beside `target` for each attempt (`.name.part-…`). */
export function downloadTo(target: string): DownloadSink {
  return { open: () => PartFile.create(target, 'part') };
}

/** A ZIP entry of the file at `path`, read when its turn comes. */
export function zipEntryOfFile(name: string, path: string): ZipEntry {
  return { name, source: { read: () => readFile(path) } };
}

/**
 * Writes `entries` as a ZIP package at `target`, through a temporary file in the same folder (`.name.tmp-…`) that
 * is renamed when complete (removed on failure).
 * @throws SignGateError (SG_ERR_IO_WRITE) when the package would need the Zip64 extension
 */
export async function writeZipFile(target: string, entries: readonly ZipEntry[]): Promise<void> {
  // Loaded here, not with this module: every command reads files, few write packages (fflate stays unloaded).
  const { writeZip } = await import('../zip/write-zip.js');
  const file = await PartFile.create(target, 'tmp');
  try {
    await writeZip({ name: target, write: (chunks) => file.write(...chunks) }, entries);
    await file.commit();
  } catch (error) {
    await file.discard();
    throw error;
  }
}
