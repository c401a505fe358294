// The engine under check, audit, sign and the service: parse every file, work out the roles on the calling thread
// (use of the vendor API is transitive, companions serve other files), run the product's per-file step, and
// assemble the product. One path, whatever runs the tasks: the calling thread (files held, or read when needed and
// held no longer than their parse or their step) or a pool of worker threads (files in shared memory). The result
// is the same, byte for byte.
import { taskRunSize } from '../runtime/worker-module.js';
import { fileFacts, fileParser, fromParsedData, placeFiles, withInputDeclarations, type ParsedFileData } from '../rules/facts.js';
import { ruleNeighbourhood } from '../rules/rule-runner.js';
import type { FileFacts } from '../rules/types.js';
import { inHand, named, type EngineInput } from './inputs.js';
import { perFileOf, type FileStep, type Product } from './product.js';
import type { Runner } from './runner.js';
import { settleTask, type PlacedFile, type TaskAnswer, type TaskItem } from './task.js';

/**
 * Makes `product` of `inputs`: the parse round in the runner's tasks, the roles here, the per-file round in the
 * runner's tasks (every file, or the files whose metadata the step reads; the others here), then the product's
 * assembly here. The runner is closed when the rounds end, whether they succeed or fail.
 * @throws what a task throws (a SignGateError comes back as the class it was), once every task has settled
 */
export async function runEngine<O, F, R>(product: Product<O, F, R>, inputs: readonly EngineInput[], runner: Runner): Promise<R> {
  const step = product as FileStep<unknown, unknown>;
  try {
    const runs = <T>(items: readonly T[]) => runsOf(items, runner.threads);
    const parsed = (
      await settled(runs(inputs).map((run) => runner.run<ParsedFileData[]>({ kind: 'parse', settings: product.settings, inputs: run }, step)))
    ).flat();
    // The per-file round's settings: with the vendor attribute types that the vendor API inputs declare (their parse read them).
    const settings = withInputDeclarations(product.settings, parsed);
    const placements = placeFiles(inputs.map(named), parsed.map(fromParsedData), settings);
    const placed = new Map<string, PlacedFile>(inputs.map((input, i) => [input.path, { input, parsed: parsed[i]!, placement: placements[i]! }]));
    // Parsed again when a rule reads it here: the parse round gave the verdict on these bytes.
    const parse = fileParser(settings, true);
    // The calling thread's facts: names, roles and sizes for the set rules; a rule that reads a file's metadata
    // here reads the file (when not held) and parses it then.
    const facts = new Map<string, FileFacts>(
      [...placed].map(([path, p]) => [
        path,
        fileFacts(named(p.input), fromParsedData(p.parsed), p.placement, p.parsed.managed ? () => parse(inHand(p.input)).module : undefined),
      ]),
    );
    const inTask = (p: PlacedFile) => runner.everyFile || product.everyFile || p.parsed.managed;
    const items: TaskItem[] = [...placed.values()]
      .filter(inTask)
      .map((p) => ({ ...p, netmodules: p.placement.netmodules.flatMap((l) => (l.path === undefined ? [] : [placed.get(l.path)!])) }));
    const results = await settled(
      runs(items).map((run) => runner.run<F[]>({ kind: 'file', settings, product: product.module, options: product.options, items: run }, step)),
    );
    const perFile = new Map<string, F>(results.flat().map((r, i) => [items[i]!.input.path, r]));
    // The files no task took (native, unreadable: their rules read only what the parse returned).
    for (const f of facts.values())
      if (!perFile.has(f.input.path)) perFile.set(f.input.path, perFileOf(product, f, ruleNeighbourhood(f, facts), settings, product.options));
    return product.assemble(facts, perFile);
  } finally {
    await runner.close();
  }
}

/** Like Promise.all, but waits for every task before it throws the first error: the pool is closed only when idle. */
async function settled<T>(tasks: readonly Promise<TaskAnswer<T>>[]): Promise<T[]> {
  const results = await Promise.allSettled(tasks);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => settleTask((r as PromiseFulfilledResult<TaskAnswer<T>>).value));
}

/** Runs of consecutive items, one per task (see taskRunSize). */
function runsOf<T>(items: readonly T[], threads: number): T[][] {
  const size = taskRunSize(items.length, threads);
  const runs: T[][] = [];
  for (let i = 0; i < items.length; i += size) runs.push(items.slice(i, i + size));
  return runs;
}
