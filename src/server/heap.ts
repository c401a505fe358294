// The garbage collector's pace for a process that runs the service. Each job brings megabytes of uploads, signed
// files and packages through the main thread as buffers outside the JavaScript heap; V8 counts them toward the next
// full collection, and its default growth (a factor from 1.1 up, chosen from how fast the program allocates) set that
// collection barely above what the last one kept: a full collection (with its marking on other threads) every one or
// two jobs. Letting the heap grow to three times what the last full collection kept brings that to one every six or
// seven jobs; collections of young objects (most of a job's buffers) still come as often, and V8 still collects early
// when the memory outside the heap grows by 64 MB.
import { setV8Flags } from '../core/v8-flags.js';

/** The heap's growth between full collections, in percent of what the last one kept (V8's `--heap-growing-percent`). */
export const SERVICE_HEAP_GROWING_PERCENT = 200;

/**
 * Sets the service's pace of full garbage collections for this process and its threads (a V8 flag, read at each
 * collection). Called by `signgate serve` before the service starts; a program that embeds the service decides for itself.
 */
export function paceGarbageCollectionForJobs(): void {
  setV8Flags([`--heap-growing-percent=${SERVICE_HEAP_GROWING_PERCENT}`]);
}
