// An upload's multipart body (POST /assemblies) received: names checked as they arrive, bytes counted against the
// limit, each file written once into the job's uploads folder and, while there is room, kept in memory for the signing.
import { createHash } from 'node:crypto';
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { UploadNames } from '../../core/upload-names.js';
import type { JobMemory } from '../jobs/job-memory.js';
import type { PendingJob } from '../ports.js';
import { mkdirPrivate, PRIVATE_FILE } from '../fs-atomic.js';
import { guardBody, UPLOAD_ENVELOPE_BYTES } from './body-guard.js';
import { decodeEncodedWords } from './encoded-words.js';
import { commentOf } from './error-response.js';
import { HttpProblem, type ProblemFileError } from '../problem.js';

const COMMENT_MAX = 1000;

export const tooLarge = (maxBytes: number) =>
  new HttpProblem(413, 'Upload too large', `The upload exceeds ${maxBytes} bytes, the most one job may hold. Split the files into several jobs.`);

export interface ReceivedUpload {
  comment: string | null;
  bytes: number;
  files: { fileName: string; size: number; sha256: string }[];
  /** The files' bytes kept in memory (as reserved from `memory`), by name. */
  held: Map<string, Uint8Array>;
}

/**
 * Streams the multipart parts to disk, counting bytes: past the limit it stops reading and answers 413.
 * Names are checked as they arrive; all name problems are reported together (400, one entry per file).
 * Each file is written once; while `memory` has room its bytes are also kept (taken from it into `reserved`).
 */
export async function receiveUpload(
  request: FastifyRequest,
  pending: PendingJob,
  maxBytes: number,
  idleMs: number,
  memory: JobMemory | undefined,
  reserved: { bytes: number },
): Promise<ReceivedUpload> {
  let total = 0;
  let comment: string | null = null;
  const files: ReceivedUpload['files'] = [];
  const held = new Map<string, Uint8Array>();
  const folders = new Set<string>();
  const nameErrors: ProblemFileError[] = [];
  const names = new UploadNames();
  const parts = request.parts()[Symbol.asyncIterator]();
  // The first next() pipes the request into busboy; the guard listens beside it from the same tick on.
  const first = parts.next();
  const release = guardBody(request, maxBytes + UPLOAD_ENVELOPE_BYTES, idleMs, () => tooLarge(maxBytes));
  try {
    for (let result = await first; !result.done; result = await parts.next()) {
      const part = result.value;
      if (part.type === 'field') {
        if (part.fieldname === 'comment') comment = commentOf(part.value, COMMENT_MAX);
        continue;
      }
      const fileName = part.filename === undefined ? undefined : decodeEncodedWords(part.filename);
      const check = names.check(fileName);
      const hash = createHash('sha256');
      let size = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          total += chunk.length;
          size += chunk.length;
          if (total > maxBytes) return callback(tooLarge(maxBytes));
          hash.update(chunk);
          callback(null, chunk);
        },
      });
      if (!check.ok) {
        nameErrors.push({ fileName: fileName ?? '', detail: check.reason });
        await pipeline(part.file, counter, new Transform({ transform: (_c, _e, cb) => cb() }));
        continue;
      }
      const target = join(pending.uploadsDir, check.name);
      if (!folders.has(dirname(target))) {
        await mkdirPrivate(dirname(target));
        folders.add(dirname(target));
      }
      const sink = new FileSink(target, memory, reserved);
      await pipeline(part.file, counter, sink);
      if ((part.file as { truncated?: boolean }).truncated) throw tooLarge(maxBytes);
      files.push({ fileName: check.name, size, sha256: hash.digest('hex') });
      if (sink.held) held.set(check.name, sink.held);
    }
  } finally {
    release();
  }
  if (nameErrors.length) throw new HttpProblem(400, 'Bad file names', `${nameErrors.length} file name(s) cannot be accepted; nothing was stored.`, nameErrors);
  if (files.length === 0) throw new HttpProblem(400, 'No files', 'The upload holds no file part. Send one part per file, each with a filename.');
  return { comment, bytes: total, files, held };
}

/**
 * One uploaded file, written once: kept in memory while `memory` has room and written in one call at its end (its
 * bytes then stay in `held`), or, once there is no room, written to disk as it arrives (and read back for signing).
 */
class FileSink extends Writable {
  held: Uint8Array | undefined;
  private chunks: Buffer[] | undefined;
  private size = 0;
  private file: FileHandle | undefined;

  constructor(
    private readonly target: string,
    private readonly memory: JobMemory | undefined,
    private readonly reserved: { bytes: number },
  ) {
    super();
    this.chunks = memory ? [] : undefined;
  }

  private async toDisk(): Promise<FileHandle> {
    this.file ??= await open(this.target, 'wx', PRIVATE_FILE);
    if (this.chunks) {
      // No more room: what was kept so far goes to disk first, and its memory back.
      const kept = this.chunks;
      this.chunks = undefined;
      this.memory!.release(this.size);
      this.reserved.bytes -= this.size;
      for (const chunk of kept) await this.file.writeFile(chunk); // at the current position, the whole chunk
    }
    return this.file;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.chunks && this.memory!.reserve(chunk.length)) {
      this.reserved.bytes += chunk.length;
      this.chunks.push(chunk);
      this.size += chunk.length;
      callback();
      return;
    }
    this.toDisk()
      .then((file) => file.writeFile(chunk))
      .then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.chunks) {
      const bytes = Buffer.concat(this.chunks, this.size);
      this.chunks = undefined;
      writeFile(this.target, bytes, { flag: 'wx', mode: PRIVATE_FILE }).then(() => {
        this.held = bytes;
        callback();
      }, callback);
      return;
    }
    this.toDisk()
      .then((file) => file.close())
      .then(() => {
        this.file = undefined;
        callback();
      }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return callback(error);
    file.close().then(
      () => callback(error),
      () => callback(error),
    );
  }
}
