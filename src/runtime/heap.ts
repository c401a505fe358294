// The garbage collector's pace for the process, set through V8 flags (v8-flags.ts): two processes, two paces.
//
// keepHeapSmall: V8's heap held small for a process that checks or audits a large set and exits (the command line),
// so that its peak memory follows what the check keeps, not what the garbage collector lets grow.
// Left to its defaults, V8 grows the young generation to two 16 MB halves as soon as objects survive, and lets the
// old generation grow to up to four times what was alive after its last collection. A file's check allocates its
// parsed metadata and the rules' work, and drops them; the metadata of a large assembly lives long enough to be
// promoted, so the old generation filled with the dead metadata of files already checked: over the Mono corpus
// (2,629 files, 160 MB) the heap grew to 86–100 MB of which 20 MB was alive, and `check` peaked at 165 MB of RSS.
//
// paceGarbageCollectionForJobs: fewer full collections for a process that runs the service. Each job brings
// megabytes of uploads, signed files and packages through the main thread as buffers outside the JavaScript heap;
// V8 counts them toward the next full collection, and its default growth (a factor from 1.1 up, chosen from how fast
// the program allocates) set that collection barely above what the last one kept: a full collection (with its
// marking on other threads) every one or two jobs. Letting the heap grow to three times what the last full
// collection kept brings that to one every six or seven jobs; collections of young objects (most of a job's buffers)
// still come as often, and V8 still collects early when the memory outside the heap grows by 64 MB.
import { setV8Flags } from './v8-flags.js';

/** How much the old generation may grow past what was alive after a collection before the next (V8: 10% to 300%). */
export const HEAP_GROWING_PERCENT = 25;

/**
 * Keeps V8's heap small for the rest of the process: the young generation stays at the size it has
 * (`--semi-space-growth-factor=1`), and the old generation is collected once it has grown by HEAP_GROWING_PERCENT
 * of what was alive (`--heap-growing-percent`; V8 grows by at least 8 MB). V8's own concurrent marking does the
 * collections. Over the Mono corpus: `check` 105 MB of peak RSS instead of 165, `audit` 110 instead of 175, for
 * 3–11 % more CPU (more, smaller collections). For a process that checks or audits a large set and exits, such as
 * the command line; a long-running process that does other work would collect more often than it needs.
 */
export function keepHeapSmall(): void {
  setV8Flags(['--semi-space-growth-factor=1', `--heap-growing-percent=${HEAP_GROWING_PERCENT}`]);
}

/** The service's heap growth between full collections, in percent of what the last one kept (V8's `--heap-growing-percent`). */
export const SERVICE_HEAP_GROWING_PERCENT = 200;

/**
 * Sets the service's pace of full garbage collections for this process and its threads (a V8 flag, read at each
 * collection). Called by `signgate serve` before the service starts; a program that embeds the service decides for itself.
 */
export function paceGarbageCollectionForJobs(): void {
  setV8Flags([`--heap-growing-percent=${SERVICE_HEAP_GROWING_PERCENT}`]);
}
