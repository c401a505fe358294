// The engine: one entry, runEngine(product, inputs, runner), under check, audit, sign and the service.
//
// product.ts  what the engine makes (passed in: the check's findings, the audit's evidence), its per-file step
// inputs.ts   files held in memory, or read when a task needs them through the caller's reader; read buffers
// task.ts     one task of a round (parse, or the per-file step), in any thread; errors as data across threads
// runner.ts   where tasks run: this thread, or a pool of worker threads (thread.ts is what those threads load)
// engine.ts   the rounds: parse, roles, the per-file step, the assembly
export { runEngine } from './engine.js';
export { inHand, isFileToRead, readInput, ReadBuffers, type EngineInput } from './inputs.js';
export type { Product } from './product.js';
export { inPool, inThisThread, type Runner } from './runner.js';
export { answer, runTask, settleTask, type TaskAnswer } from './task.js';
