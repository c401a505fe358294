// What a worker thread of the engine's pool runs (piscina loads it from dist/engine/thread.js): a task, with the
// product's per-file step loaded from the module the task names, once per thread.
import { pathToFileURL } from 'node:url';
import { workerModulePath } from '../runtime/worker-module.js';
import { answer, runTask, type EngineTask, type TaskAnswer } from './task.js';
import type { FileStep } from './product.js';

const steps = new Map<string, Promise<FileStep<unknown, unknown>>>();

function stepOf(module: string): Promise<FileStep<unknown, unknown>> {
  let step = steps.get(module);
  if (!step) steps.set(module, (step = import(pathToFileURL(workerModulePath(module)).href) as Promise<FileStep<unknown, unknown>>));
  return step;
}

export default async function engineThreadTask(task: EngineTask): Promise<TaskAnswer<unknown[]>> {
  const step = task.kind === 'file' ? await stepOf(task.product) : undefined;
  return answer(() => runTask(task, step));
}
