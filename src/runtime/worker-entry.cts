// The file that piscina's worker threads load. It is CommonJS on purpose: piscina first tries require() on its
// file, and for an ES module Node 20.19+ then takes its require(esm) path, which aborts the whole process
// ("v8::Module::IsGraphAsync must be used on an instantiated module") when a thread asks for the module again
// while it is still being loaded. From here the task module (workerData.module, an ES module) is imported once,
// asynchronously, and its default export runs each task.
import { workerData } from 'node:worker_threads';

type Task = (input: unknown) => unknown;
let task: Promise<Task> | undefined;

function runTask(input: unknown): Promise<unknown> {
  task ??= import((workerData as { module: string }).module).then((m: { default: Task }) => m.default);
  return task.then((run) => run(input));
}

export = runTask;
