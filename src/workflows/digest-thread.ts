// The digest thread (started by file-digests.ts with this module as its entry): reads each file of its list a
// megabyte at a time and hashes it with SHA-256 and SHA-512, so that the bill of materials' SHA-512 costs the
// calling thread nothing while it audits. It imports node's modules only, so it starts in milliseconds.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

/** A file's size and hex digests as read now. */
export interface FileDigest {
  readonly size: number;
  readonly sha256: string;
  readonly sha512: string;
}

/** The digest of the file at `path`, or the file system's error code (and message) when it cannot be read. */
export type DigestAnswer = FileDigest | { readonly code: string; readonly message: string };

/** A batch of answers, for the files from `from` on in the order they were given; `done` with the last. */
export interface DigestMessage {
  readonly from: number;
  readonly answers: readonly DigestAnswer[];
  readonly done: boolean;
}

/** Reads and hashes one file through `buffer` (reused between files). */
export function digestFile(path: string, buffer: Buffer): DigestAnswer {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    if (fstatSync(fd).isDirectory()) return { code: 'EISDIR', message: 'a folder' };
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
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    return { code: e.code ?? 'EIO', message: e.message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** How many answers go in one message: few messages, and the first ones early. */
const BATCH = 64;

// Run as a worker thread's entry: hash the files of workerData.paths, in order, and post the answers in batches.
if (parentPort && (workerData as { digestPaths?: unknown } | null)?.digestPaths) {
  const paths = (workerData as { digestPaths: string[] }).digestPaths;
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (let from = 0; from < paths.length || from === 0; from += BATCH) {
    const answers = paths.slice(from, from + BATCH).map((p) => digestFile(p, buffer));
    parentPort.postMessage({ from, answers, done: from + BATCH >= paths.length } satisfies DigestMessage);
  }
}
