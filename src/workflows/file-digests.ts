// The SHA-256 and SHA-512 of many files for the bill of materials, on a thread of its own (digest-thread.ts) that
// reads them from disk while the calling thread audits, so that the SHA-512 TR-03183-2 asks for of every shipped file
// adds little to the audit's time. Inside a one-file executable, which has no module files for a thread to load,
// the calling thread hashes them when asked.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { reapplyV8Flags } from '../runtime/v8-flags.js';
import { workerModulePath, workerThreadsAvailable } from '../runtime/worker-module.js';
import { readError } from './files.js';
import { digestFile, type DigestAnswer, type DigestMessage, type FileDigest } from './digest-thread.js';

export type { FileDigest } from './digest-thread.js';

/** Digests being made: `result()` gives them by the path as given, or throws the first file's read error. */
export interface FileDigests {
  result(): Promise<ReadonlyMap<string, FileDigest>>;
  /** Ends the thread where it is (a caller that failed before it asked); result() then fails. */
  stop(): void;
}

/**
 * Starts hashing `paths` (as shown: relative to the working directory or absolute) with SHA-256 and SHA-512, once
 * the thread is running (the process's V8 flags set again then: see reapplyV8Flags).
 * @returns the digests to come; `result()` throws SignGateError SG_ERR_IO_READ naming the first file that cannot be read
 */
export async function startFileDigests(paths: readonly string[]): Promise<FileDigests> {
  const absolute = paths.map((p) => resolve(p));
  const byPath = (answers: readonly DigestAnswer[]): ReadonlyMap<string, FileDigest> => {
    const digests = new Map<string, FileDigest>();
    answers.forEach((a, i) => {
      if ('code' in a) throw readError(Object.assign(new Error(a.message), { code: a.code }), paths[i]!);
      digests.set(paths[i]!, a);
    });
    return digests;
  };
  if (paths.length === 0) return { result: async () => new Map(), stop: () => {} };
  if (!workerThreadsAvailable()) {
    return {
      result: async () => {
        const buffer = Buffer.allocUnsafe(1 << 20);
        return byPath(absolute.map((p) => digestFile(p, buffer)));
      },
      stop: () => {},
    };
  }
  // A small young generation: the thread holds a megabyte of file at a time and the hex of its digests.
  const worker = new Worker(pathToFileURL(workerModulePath('workflows/digest-thread')), {
    workerData: { digestPaths: absolute },
    resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 32 },
  });
  const answers: DigestAnswer[] = new Array<DigestAnswer>(paths.length);
  const done = new Promise<ReadonlyMap<string, FileDigest>>((fulfil, reject) => {
    let finished = false;
    worker.on('message', (m: DigestMessage) => {
      m.answers.forEach((a, i) => (answers[m.from + i] = a));
      if (!m.done) return;
      finished = true;
      void worker.terminate();
      try {
        fulfil(byPath(answers));
      } catch (error) {
        reject(error);
      }
    });
    worker.on('error', (error) => reject(error));
    worker.on('exit', (code) => {
      if (!finished) reject(new Error(`the digest thread stopped (exit code ${code}) before it had hashed every file`));
    });
  });
  // A caller that fails before it asks must not leave an unhandled rejection behind.
  done.catch(() => {});
  await Promise.race([once(worker, 'online'), done]);
  reapplyV8Flags();
  return { result: () => done, stop: () => void worker.terminate() };
}
