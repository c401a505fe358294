// What the engine makes of the files: a product is passed in (the check's findings: rules/check-product.ts; the
// audit's evidence: audit/audit-product.ts), so the engine knows neither. A product has two halves: the per-file
// step, which runs wherever the runner runs tasks (a worker thread loads it from `module`), and the assembly of the
// result from every file, on the calling thread.
import { isInputFault } from '../core/errors.js';
import { unreadableFacts } from '../rules/facts.js';
import type { CheckSettings, FileFacts } from '../rules/types.js';

/** The per-file half of a product: what a task computes for one file, from its facts and its netmodules' facts. */
export interface FileStep<O, F> {
  /**
   * The product's result for one file: plain data, since it may come back from a worker thread.
   * @param near the file and the netmodules matched to its File table (see ruleNeighbourhood)
   * @param options the product's own plain data (rule severities), as it crossed to the task
   */
  readonly perFile: (facts: FileFacts, near: ReadonlyMap<string, FileFacts>, settings: CheckSettings, options: O) => F;
}

/** A product of the engine: its per-file step, the data that step runs with, and its result from every file. */
export interface Product<O, F, R> extends FileStep<O, F> {
  /**
   * The compiled module (a path below dist/ without extension, e.g. `rules/check-product`) whose export `perFile`
   * is this product's per-file step: what a worker thread loads.
   */
  readonly module: string;
  readonly settings: CheckSettings;
  /** The per-file step's own data: plain, structured-clonable. */
  readonly options: O;
  /**
   * Whether every file goes through the per-file step in a task (the audit reads each file's hashes and
   * signatures); else only the managed files, whose metadata the file rules read, and the others here.
   */
  readonly everyFile: boolean;
  /** The result, on the calling thread, from every file's facts and per-file result, keyed by display path. */
  readonly assemble: (facts: ReadonlyMap<string, FileFacts>, perFile: ReadonlyMap<string, F>) => R;
}

/**
 * Runs the per-file step on one file. A fault of that file's own bytes that the step meets (past the verdict of its
 * parse) makes it a file that cannot be read, and the step runs again on it as such: the file gets SG001, the run
 * and every other file go on. Any other error stops the run.
 */
export function perFileOf<O, F>(step: FileStep<O, F>, facts: FileFacts, near: ReadonlyMap<string, FileFacts>, settings: CheckSettings, options: O): F {
  try {
    return step.perFile(facts, near, settings, options);
  } catch (error) {
    if (!isInputFault(error)) throw error;
    const unreadable = unreadableFacts(facts, error);
    return step.perFile(unreadable, new Map([[facts.input.path, unreadable]]), settings, options);
  }
}
