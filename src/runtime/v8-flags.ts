// V8 flags a command sets for the rest of its process (the heap's pace: src/runtime/heap.ts),
// recorded where bin/signgate.js finds them after the run.
//
// V8 refuses a code cache made under other flags than those of the process that reads it. bin/signgate.js makes a
// command's cache after the run, when the command has set its flags; it stores them beside the cache and sets them
// again before it compiles the next run of the same command, so that the cache is accepted.
import { setFlagsFromString } from 'node:v8';

/** Where the flags set through setV8Flags are listed (a global symbol: bin/signgate.js reads it). */
export const V8_FLAGS_KEY = Symbol.for('signgate.v8Flags');

/** Sets V8 flags (`--name=value`) for the rest of the process and records them under V8_FLAGS_KEY. */
export function setV8Flags(flags: readonly string[]): void {
  const record = globalThis as { [V8_FLAGS_KEY]?: string[] };
  for (const flag of flags) {
    setFlagsFromString(flag);
    record[V8_FLAGS_KEY] = [...(record[V8_FLAGS_KEY] ?? []).filter((f) => f !== flag), flag];
  }
}

/**
 * Sets the flags recorded by setV8Flags again. Starting a worker thread sets V8's flags back to the process's
 * command line when the thread's isolate is made (seen on Node 20: after `new Worker()`, the main thread's young
 * generation grew to 32 MB under `--semi-space-growth-factor=1`), so a thread's starter calls this once the thread
 * has started: when it is online, or when a task of it answers (a pool).
 */
export function reapplyV8Flags(): void {
  for (const flag of (globalThis as { [V8_FLAGS_KEY]?: string[] })[V8_FLAGS_KEY] ?? []) setFlagsFromString(flag);
}
