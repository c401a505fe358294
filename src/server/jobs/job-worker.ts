// What signs the queued jobs, whatever keeps them: the signing worker in process (SigningWorker, with the data
// directory) or on the PostgreSQL queue (QueueWorker, queue-worker.ts); an API node has none. And the roles a node can take.
/** Signs queued jobs: in process (SigningWorker, data directory) or from the PostgreSQL queue. */
export interface JobWorker {
  /** A job was queued (a hint: the PostgreSQL worker also finds jobs queued by other nodes). */
  enqueue(organization: string, id: string): void;
  /** Lets go of the job if this worker is processing it; resolves once it has. */
  cancel(organization: string, id: string): Promise<void>;
  /** Takes no new work; the job in progress stops and is resumed later (after a restart, or by another worker). */
  stop(): Promise<void>;
  /** Jobs this worker is processing now. */
  processing?(): number;
  /** Jobs waiting in this worker's own queue (also those waiting for another attempt); absent for a shared queue. */
  waiting?(): number;
}

/** A node that only accepts, lists and serves jobs: it signs nothing. */
export const NO_WORKER: JobWorker = {
  enqueue: () => {},
  cancel: async () => {},
  stop: async () => {},
};

/** The roles of `serve --role`. */
export type NodeRole = 'api' | 'worker' | 'all';
export const NODE_ROLES: readonly NodeRole[] = ['api', 'worker', 'all'];
