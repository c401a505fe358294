// Where the tasks of the pipeline's two rounds run: a pool of worker threads (piscina, running worker.ts from dist/),
// or the calling thread, one task after the other, for inputs read on demand.
import { piscinaTask, workerModulePath } from '../../runtime/worker-module.js';
import { answer, ReadBuffers, runTask, type CheckAnswer, type CheckTask } from './worker.js';

/** Where the tasks of the two rounds run: a pool of worker threads, or this thread one run at a time. */
export interface Runner {
  readonly threads: number;
  /** Whether every file goes through the check round (else the files no file rule reads are checked here). */
  readonly everyFile: boolean;
  run<T>(task: CheckTask): Promise<CheckAnswer<T>>;
  /** Called when the rounds are done or failed (every task settled: see settled in rounds.ts). */
  close(): Promise<void>;
}

/** The tasks in this thread, one after the other, the files read into buffers used again from item to item. */
export function inThisThread(): Runner {
  const buffers = new ReadBuffers();
  return {
    threads: 1,
    // Facts on this thread keep a module once a rule parsed it: every file is checked in a task, where it is not kept.
    everyFile: true,
    run: async <T>(task: CheckTask) => answer(() => runTask(task, buffers) as T),
    close: async () => {},
  };
}

/** A pool of `threads` worker threads running the rounds' tasks; `close` destroys it once every task is done. */
export async function openPool(threads: number): Promise<Runner> {
  const { Piscina } = await import('piscina');
  // As for scans: a young generation of 8 MB per thread keeps the peak RSS down at the same CPU.
  const pool = new Piscina<CheckTask, CheckAnswer<unknown>>({ ...piscinaTask(workerModulePath('workflows/pipeline/worker')), minThreads: threads, maxThreads: threads, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  return { threads, everyFile: false, run: <R>(task: CheckTask) => pool.run(task) as Promise<CheckAnswer<R>>, close: () => pool.destroy() };
}
