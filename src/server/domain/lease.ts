// The lease of a job on a shared queue (ports.ts, SharedJobQueue): a worker's write refused once the lease is
// gone, and how often a job may fail before its files end with an error instead of being tried again.
/** A worker's write was refused: another worker holds the job now, or it was deleted. */
export class LeaseLost extends Error {
  constructor(organization: string, id: string) {
    super(`job ${organization}/${id} is no longer leased by this worker (taken over after its lease ran out, or deleted)`);
    this.name = 'LeaseLost';
  }
}

/**
 * A job whose processing failed this often (its worker died, or it threw) is not processed again: the next worker
 * that takes it finishes it with an error on every file (jobs/queue-worker.ts), so it never stays unfinished.
 */
export const MAX_ATTEMPTS = 5;
