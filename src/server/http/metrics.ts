// The service's metrics in the Prometheus text exposition format (prom-client), off unless the operator switches
// them on (`--metrics`, `metrics` in server.json): GET /metrics on the service's port, outside the API prefix and
// without a token, like /healthz and /readyz; or on a listener of its own (`metrics.listen`), which then alone serves
// them. Each process counts what it did itself (a PostgreSQL deployment is scraped node by node); the queue's depth
// on PostgreSQL is the deployment's. No metric names a token, a user, a job id or a URL: routes are their
// patterns (`/assembly-signing/v1.0/assemblies/:id/status`), labels are closed sets or the configuration's ids.
import { FileState } from '../../core/file-states.js';
import { createServer, type Server } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { VERSION } from '../../runtime/version.js';
import { probeTokenKeys, type TokenKeyReadiness } from '../jobs/token-readiness.js';
import { fileCounts, type JobObserver } from '../jobs/process-job.js';
import type { JobStateStore } from '../ports.js';
import type { JobRecord } from '../domain/job.js';
import type { JobWorker, NodeRole } from '../jobs/job-worker.js';
import type { ServerConfig } from '../server-config.js';
import type { RecordLog } from '../record/record-checkpoint.js';

/** Where the gauges read their values when Prometheus scrapes. */
export interface MetricsSources {
  /** `signgate_info`'s labels: the version, the node's role and its store. */
  info(): { version: string; role: string; store: string };
  /** Jobs waiting for a worker: this process's queue, or on PostgreSQL the deployment's. */
  queueDepth(): Promise<number>;
  /** Jobs this process is signing now. */
  processing(): number;
  /** Entries of the signature record. */
  /** The record's size; absent on a worker node, which keeps no view of the record (it signs no checkpoint). */
  recordEntries?(): Promise<number>;
  /** Whether each option's key can sign, on a node that signs (a key pair file: read; a PKCS#11 key: its probe). */
  optionKeys(): Promise<readonly { organization: string; optionId: number; ready: boolean }[]>;
}

/** Seconds to sign a job: from a fraction of a second (one small file) to minutes (a job of a thousand files). */
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds of a request: status calls take milliseconds, an upload of 40 MB on a slow line a minute or more. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export class ServiceMetrics implements JobObserver {
  readonly registry = new Registry();
  private readonly jobs: Counter<'outcome'>;
  private readonly files: Counter<'state'>;
  private readonly signing: Histogram;
  private readonly requests: Histogram<'method' | 'route' | 'status_code'>;

  constructor(sources: MetricsSources, onSourceError: (source: string, error: unknown) => void = () => {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.jobs = new Counter({
      name: 'signgate_jobs_finished_total',
      help: 'Jobs this process finished, by outcome: signed (every file), partial (some files failed), failed (no file signed)',
      labelNames: ['outcome'],
      registers,
    });
    const filesHelp = 'Files of the jobs this process finished, by state (Signed, Error)';
    this.files = new Counter({ name: 'signgate_files_finished_total', help: filesHelp, labelNames: ['state'], registers });
    for (const outcome of ['signed', 'partial', 'failed']) this.jobs.inc({ outcome }, 0);
    for (const state of [FileState.Signed, FileState.Error]) this.files.inc({ state }, 0);
    const signingHelp = 'Seconds this process took to process a job, from its first file to its result package';
    this.signing = new Histogram({ name: 'signgate_job_signing_seconds', help: signingHelp, buckets: JOB_BUCKETS, registers });
    this.requests = new Histogram({
      name: 'signgate_http_request_duration_seconds',
      help: 'Seconds from a request to its answer, by method, route pattern (unmatched: no route) and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    // Gauges read at each scrape; one whose source fails is NaN in that scrape (and the failure logged).
    const read = async (gauge: Gauge, source: string, value: () => Promise<number> | number) => {
      try {
        gauge.set(await value());
      } catch (error) {
        gauge.set(Number.NaN);
        onSourceError(source, error);
      }
    };
    new Gauge({
      name: 'signgate_info',
      help: 'The version of signgate, the node role and the store: always 1',
      labelNames: ['version', 'role', 'store'],
      registers,
      collect() {
        this.reset();
        this.set(sources.info(), 1);
      },
    });
    const gauge = (name: string, help: string, source: string, value: () => Promise<number> | number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          return read(this, source, value);
        },
      });
    const queueHelp = "Jobs waiting for a worker: this process's queue; on PostgreSQL the deployment's (the same on every node)";
    gauge('signgate_queue_depth', queueHelp, 'queue', sources.queueDepth);
    gauge('signgate_jobs_processing', 'Jobs this process is signing now', 'worker', sources.processing);
    if (sources.recordEntries) gauge('signgate_record_entries', 'Entries of the signature record (files signed and returned)', 'record', sources.recordEntries);
    new Gauge({
      name: 'signgate_option_key_ready',
      help: 'Whether the key of a license option can sign (1) or not (0), on a node that signs; PKCS#11 keys sign a probe digest',
      labelNames: ['organization', 'option'],
      registers,
      async collect() {
        this.reset();
        try {
          for (const key of await sources.optionKeys()) this.set({ organization: key.organization, option: String(key.optionId) }, key.ready ? 1 : 0);
        } catch (error) {
          onSourceError('keys', error);
        }
      },
    });
  }

  jobFinished(record: JobRecord, seconds?: number): void {
    const { signed, failed } = fileCounts(record);
    this.jobs.inc({ outcome: failed === 0 ? 'signed' : signed === 0 ? 'failed' : 'partial' });
    if (signed) this.files.inc({ state: FileState.Signed }, signed);
    if (failed) this.files.inc({ state: FileState.Error }, failed);
    if (seconds !== undefined) this.signing.observe(seconds);
  }

  /** Times every answer of `app` by its route's pattern, never its URL (which holds job ids). */
  observeRequests(app: FastifyInstance): void {
    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      this.requests.observe({ method: request.method, route, status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
    });
  }

  /** The exposition text (and its content type) of every metric, read now. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/** GET /metrics on the service's own port (hidden from the OpenAPI document: it is for operators). */
export function registerMetricsRoute(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const { contentType, text } = await metrics.exposition();
    return reply.type(contentType).send(text);
  });
}

/**
 * Serves GET /metrics on a listener of its own (`metrics.listen`: an internal address, or loopback for a scraper on
 * this machine), and GET /readyz as the operator sees it (`readyz`: the node's readiness with every detail, as only
 * the operator reaches this listener); anything else is 404. Resolves once it listens, with its address.
 */
export async function listenForMetrics(
  metrics: ServiceMetrics,
  host: string,
  port: number,
  readyz?: () => Promise<{ status: number; body: Record<string, unknown> }>,
): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/readyz' && readyz) {
      readyz().then(
        ({ status, body }) =>
          response
            .writeHead(status, { 'content-type': status === 200 ? 'application/json; charset=utf-8' : 'application/problem+json' })
            .end(JSON.stringify(body)),
        () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('Readiness could not be read; see the log.\n'),
      );
      return;
    }
    if (request.method !== 'GET' || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`Only GET /metrics${readyz ? ' and GET /readyz are' : ' is'} served here.\n`);
      return;
    }
    metrics.exposition().then(
      ({ contentType, text }) => response.writeHead(200, { 'content-type': contentType }).end(text),
      () => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('The metrics could not be read; see the log.\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as { address: string; port: number; family: string };
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shown}:${address.port}/metrics`, server };
}

/** What a node's metrics read at each scrape: opened after the metrics, which the worker reports to. */
export interface NodeParts {
  readonly store: JobStateStore;
  readonly worker: JobWorker;
  /** Undefined on a worker node, which signs no checkpoint (it reports the record's size from the store). */
  readonly recordLog: RecordLog | undefined;
}

/** The metrics of a node, read from its store, worker, record and keys at each scrape (`parts` is called only then). */
export function nodeMetrics(log: FastifyBaseLogger, role: NodeRole, config: () => ServerConfig, parts: () => NodeParts): ServiceMetrics {
  return new ServiceMetrics(
    {
      info: () => ({ version: VERSION, role, store: parts().store.kind }),
      queueDepth: async () => {
        const { store, worker } = parts();
        return store.waiting ? await store.waiting() : (worker.waiting?.() ?? 0);
      },
      processing: () => parts().worker.processing?.() ?? 0,
      ...(role === 'worker'
        ? {}
        : {
            recordEntries: async () => {
              const { recordLog } = parts();
              await recordLog!.refresh();
              return recordLog!.size;
            },
          }),
      // An API node signs nothing: it has no keys to report.
      optionKeys: async () => (role === 'api' ? [] : optionKeyReadiness(config())),
    },
    (source, error) => log.warn({ source, err: { message: (error as Error).message } }, `a metric could not be read: ${source}`),
  );
}

/** Each option's current key: a key pair file is ready once read; a key in a PKCS#11 token as its probe says (/readyz's). */
async function optionKeyReadiness(config: ServerConfig): Promise<{ organization: string; optionId: number; ready: boolean }[]> {
  const probed = await probeTokenKeys(config).catch((error: unknown) => {
    const states = (error as { details?: { tokenKeys?: readonly TokenKeyReadiness[] } }).details?.tokenKeys;
    if (!states) throw error;
    return states;
  });
  return [...config.organizations.values()].flatMap((org) =>
    org.licenses.map((l) => {
      const token = probed.find((k) => k.organization === org.id && k.optionId === l.optionId);
      return { organization: org.id, optionId: l.optionId, ready: token?.ready ?? true };
    }),
  );
}
