// A pool of worker threads (piscina) that sign the files of the service's jobs, one per core by default, so
// that several jobs, and the files of one job, are signed at once while the main thread answers requests.
import { availableParallelism } from 'node:os';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { KeyError, UsageError } from '../../core/errors.js';
import type { ErrorCode } from '../../core/error-codes.js';
import { reapplyV8Flags } from '../../runtime/v8-flags.js';
import { piscinaTask, workerModulePath, workerThreadsAvailable } from '../../runtime/worker-module.js';
import type { StrongNameKeyFile } from '../../strongname/key-blob.js';
import { isPkcs11Key, servePkcs11Broker } from '../../strongname/pkcs11/signer.js';
import type { PreparedZipData } from '../../zip/write-zip.js';
import { ownsItsMemory, type FileSigner, type SignedFile } from './sign-file.js';
import type { SignTask, SignTaskFailure, SignTaskResult } from './signing-pool-task.js';

/** Moves a file's memory to the thread rather than copying it, when it is the whole of its memory. */
function transferring(bytes: Uint8Array): { transferList?: ArrayBuffer[] } {
  return ownsItsMemory(bytes) ? { transferList: [bytes.buffer as ArrayBuffer] } : {};
}

/** A thread's result, or the error of ours it reported (a key in a token that cannot sign, a file's own fault) thrown again here. */
function rethrown(result: SignTaskResult): SignTaskResult {
  const failed = (result as SignTaskFailure | undefined)?.failed;
  if (failed) throw new KeyError(failed.code as ErrorCode, failed.message, { fault: failed.fault });
  return result;
}

/** The default size of the signing pool: one thread per core. */
export function defaultSigningWorkers(): number {
  return availableParallelism();
}

/** The most threads a pool may have. */
export const MAX_SIGNING_WORKERS = 256;

/**
 * Checks a signing-worker count from the command line or the server configuration: a whole number from 0
 * (sign in the service's own thread) to MAX_SIGNING_WORKERS.
 * @throws UsageError naming where the value came from
 */
function checkSigningWorkers(value: number, shownAs: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_SIGNING_WORKERS) {
    throw new UsageError(
      `${shownAs} ${value} is not a whole number from 0 to ${MAX_SIGNING_WORKERS}`,
      `Give the number of signing threads, for example ${defaultSigningWorkers()} (one per core); 0 signs in the service's own thread.`,
    );
  }
  return value;
}

/** Signs in `threads` worker threads; files beyond the free threads wait in the pool's queue. */
export class SigningPool implements FileSigner {
  private readonly pool: Piscina<SignTask, SignTaskResult>;
  readonly ahead: number;

  constructor(readonly threads: number) {
    if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`a signing pool needs at least one thread, not ${threads}`);
    // Threads start at once and stay: the first job should not wait for a thread to load its code.
    this.pool = new Piscina({
      ...piscinaTask(workerModulePath('server/jobs/signing-pool-task')),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
    });
    // Enough files of a job in the queue to keep every thread busy, and no more: a deleted job wastes little.
    this.ahead = threads;
  }

  async sign(bytes: Uint8Array, keyPair: StrongNameKeyFile): Promise<SignedFile | undefined> {
    if (!isPkcs11Key(keyPair)) return rethrown(await this.run({ bytes, keyPair }, transferring(bytes))) as SignedFile | undefined;
    // A key in a token: the thread hashes, this thread (the module's one owner) signs the DigestInfo it sends.
    const { port1, port2 } = new MessageChannel();
    servePkcs11Broker(port1);
    try {
      const transferList = [...(transferring(bytes).transferList ?? []), port2];
      return rethrown(await this.run({ bytes, keyPair, broker: port2 }, { transferList: transferList as never })) as SignedFile | undefined;
    } finally {
      port1.close();
    }
  }

  pack(bytes: Uint8Array): Promise<PreparedZipData> {
    return this.run({ bytes }, transferring(bytes)) as Promise<PreparedZipData>;
  }

  /** A task on a thread; its answer comes from a thread that has started, whose start set V8's flags back (see reapplyV8Flags). */
  private run<T = SignTaskResult>(task: Parameters<Piscina['run']>[0], options: Parameters<Piscina['run']>[1]): Promise<T> {
    return (this.pool.run(task, options) as Promise<T>).finally(reapplyV8Flags);
  }

  /** Files signed or packed (or refused) by the pool's threads so far. */
  get completed(): number {
    return this.pool.completed;
  }

  /** Lets the tasks in progress finish, then ends the threads. */
  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * The signing worker's options for `threads` signing threads (default one per core): a pool processing as
 * many jobs at once, or for 0 the service's own thread, one job at a time.
 */
export function signingOptions(threads: number = defaultSigningWorkers()): { signer?: SigningPool; concurrency: number } {
  checkSigningWorkers(threads, 'signingWorkers');
  // Inside a one-file executable there is no module for a thread to load: sign in the service's own thread.
  return threads === 0 || !workerThreadsAvailable() ? { concurrency: 1 } : { signer: new SigningPool(threads), concurrency: threads };
}
