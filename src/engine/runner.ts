// Where the engine's tasks run, behind one interface: the calling thread, one task after the other, or a pool of
// worker threads (piscina, running engine/thread.ts from dist/).
import { reapplyV8Flags } from '../runtime/v8-flags.js';
import { piscinaTask, workerModulePath } from '../runtime/worker-module.js';
import { isFileToRead, ReadBuffers } from './inputs.js';
import type { FileStep } from './product.js';
import { answer, runTask, type EngineTask, type ParsedHere, type TaskAnswer } from './task.js';

/** Where the tasks of the two rounds run. */
export interface Runner {
  readonly threads: number;
  /**
   * Whether every file goes through the per-file round in a task. In this thread, yes: the facts of the calling
   * thread would keep each module once a rule parsed it. In a pool, only the files the product's step needs to read.
   */
  readonly everyFile: boolean;
  run<T>(task: EngineTask, step: FileStep<unknown, unknown>): Promise<TaskAnswer<T>>;
  /** Called when the rounds are done or failed (every task settled). */
  close(): Promise<void>;
}

/**
 * The tasks in this thread, one after the other; files to read are read into buffers used again from item to item,
 * and held inputs are parsed once: the per-file round takes the metadata the parse round made of them.
 */
export function inThisThread(): Runner {
  const buffers = new ReadBuffers();
  const kept: ParsedHere = new Map();
  return {
    threads: 1,
    everyFile: true,
    run: async <T>(task: EngineTask, step: FileStep<unknown, unknown>) => answer(() => runTask(task, step, buffers, kept) as T),
    close: async () => kept.clear(),
  };
}

/** A pool of `threads` worker threads; `close` destroys it once every task is done. Inputs must be held (shared memory). */
export async function inPool(threads: number): Promise<Runner> {
  const { Piscina } = await import('piscina');
  // As for scans: a young generation of 8 MB per thread keeps the peak RSS down at the same CPU.
  const pool = new Piscina<EngineTask, TaskAnswer<unknown>>({
    ...piscinaTask(workerModulePath('engine/thread')),
    minThreads: threads,
    maxThreads: threads,
    resourceLimits: { maxYoungGenerationSizeMb: 8 },
  });
  return {
    threads,
    everyFile: false,
    run: <T>(task: EngineTask) => {
      if (task.kind === 'parse' && task.inputs.some(isFileToRead))
        throw new Error('internal error: a file to read cannot cross to a worker thread; read it into shared memory');
      // Each thread's start set V8's flags back (see reapplyV8Flags); an answer comes from a thread that has started.
      return (pool.run(task) as Promise<TaskAnswer<T>>).finally(reapplyV8Flags);
    },
    close: () => pool.destroy(),
  };
}
