// The reference signing service as a fastify app (service-api.md is the contract).
// buildServer() makes the app; the caller listens, and closes it (which also stops the signing worker).
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import multipart from '@fastify/multipart';
import { docsOAuth } from '../identity/oidc.js';
import { registerRateLimits } from '../identity/rate-limit.js';
import { DEFAULT_JOB_MEMORY_BYTES, JobMemory } from '../jobs/job-memory.js';
import { signingOptions } from '../jobs/signing-pool.js';
import type { JobWorker, NodeRole } from '../jobs/job-worker.js';
import { DEFAULT_SERVICE_NAME, type Organization, type RateLimitSettings, type ServerConfig } from '../server-config.js';
import { SERVICE_LOG_OPTIONS } from '../service-log.js';
import type { JobStateStore, TokenKeeper } from '../ports.js';
import { authenticator, operatorCheck } from './authenticate.js';
import { nodeMetrics, registerMetricsRoute, type ServiceMetrics } from './metrics.js';
import { openStoresFor } from './node-stores.js';
import { keepRecordLog, keepRetention, logPkcs11Events } from './node-tasks.js';
import { answerProblems, frameworkErrors } from './problem-answers.js';
import { answerRequestIds, requestIdOf } from './request-id.js';
import { QuietPollLog } from './request-log.js';
import { registerArchiveRoutes } from './routes/archives-routes.js';
import type { RouteContext } from './routes/context.js';
import { registerDocs } from './routes/docs-routes.js';
import { registerExchangePage } from './routes/exchange-page-routes.js';
import { readiness, registerHealth, type Readiness } from './routes/health-routes.js';
import { registerJobRoutes } from './routes/jobs-routes.js';
import { registerLicenseRoutes } from './routes/licenses-routes.js';
import { registerRecordRoutes } from './routes/record-routes.js';
import { registerResultRoutes } from './routes/results-routes.js';
import { wholeNumbersOnly } from './whole-numbers.js';

export interface BuildServerOptions {
  /** The configuration, or a function that returns the current one (re-read when the file changes). */
  readonly config: ServerConfig | (() => ServerConfig);
  readonly dataDir: string;
  /** The record key file (`serve --record-key`); wins over the configuration's "recordKey". */
  readonly recordKeyFile?: string;
  /** fastify/pino logger options; false for none. The Authorization header is always redacted. */
  readonly logger?: FastifyServerOptions['logger'];
  /** A logger made with SERVICE_LOG_OPTIONS (createServiceLog), instead of `logger`: the log of `signgate serve`. */
  readonly loggerInstance?: FastifyBaseLogger;
  /** Now, for token expiry (tests move time). */
  readonly now?: () => Date;
  /**
   * Which proxies may speak for the client through X-Forwarded-For/-Host/-Proto: fastify's trustProxy
   * (addresses or CIDR ranges as a list or comma-separated string, or true for any). Default: none, so a
   * direct client cannot choose the address the log shows or the host in the links of an answer.
   */
  readonly trustProxy?: boolean | string | readonly string[];
  readonly timeouts?: ServerTimeouts;
  /** Rate limits that win over the configuration's `rateLimits` (each key separately). */
  readonly rateLimits?: Partial<RateLimitSettings>;
  /** PostgreSQL connection string: jobs, queue and tokens in the database instead of the data directory. */
  readonly database?: string;
  /** With `database`: job files in S3-compatible object storage, s3://bucket/prefix?endpoint=URL&region=NAME. */
  readonly blobStore?: string;
  /** api: accept, list and serve jobs; worker: sign queued jobs; all (default): both. */
  readonly role?: NodeRole;
  /** How long a PostgreSQL lease (a job being signed, an upload in flight) lasts without a heartbeat. */
  readonly leaseMs?: number;
  /**
   * Threads that sign (RSA and hashing), as many jobs processed at once: 0 signs in the service's own thread,
   * one job at a time. Default: the configuration's signingWorkers, else one per core.
   */
  readonly signingWorkers?: number;
  /**
   * Bytes of uploads and result packages kept in memory between a job's steps (written to disk once, not read back):
   * default DEFAULT_JOB_MEMORY_BYTES; 0 reads every file back from disk.
   */
  readonly jobMemoryBytes?: number;
  /**
   * The service's metrics (metrics.ts): `route` serves GET /metrics on this app; `apart` keeps them for a listener of
   * their own (listenForMetrics with app.signgate.metrics). Default: none.
   */
  readonly metrics?: 'route' | 'apart';
}

export interface ServerTimeouts {
  /** A request body that brings no byte for this long is answered 408 and its connection closed. */
  readonly idleMs?: number;
  /** The whole request must arrive within this time (Node checks about every 30 s). */
  readonly requestMs?: number;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 15 * 60_000;

export interface Principal {
  readonly organization: Organization;
  readonly user: string;
  /** The personal access token's id (tokenIdOf: the start of its SHA-256), null for an OpenID Connect token. */
  readonly tokenId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
  interface FastifyInstance {
    signgate: {
      store: JobStateStore;
      worker: JobWorker;
      tokens: TokenKeeper;
      apiPrefix: string;
      role: NodeRole;
      memory: JobMemory | undefined;
      metrics: ServiceMetrics | undefined;
      /** What /readyz and /readyz/api ask; the metrics listener answers /readyz from it too. */
      readiness: Readiness;
    };
  }
}

/** Builds the service. Jobs that were still processing when the data directory was last used are resumed. */
export async function buildServer(options: BuildServerOptions): Promise<FastifyInstance> {
  const config = typeof options.config === 'function' ? options.config : () => options.config as ServerConfig;
  const now = options.now ?? (() => new Date());
  const serviceName = config().serviceName ?? DEFAULT_SERVICE_NAME;
  const apiPrefix = `/${serviceName}/v1.0`;
  // Tokens never reach a log, nor a URL's query (service-log.ts).
  const given = options.logger;
  const logger = given === undefined || given === false ? false : { ...(typeof given === 'object' ? given : {}), ...SERVICE_LOG_OPTIONS };
  const idleMs = options.timeouts?.idleMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const trustProxy = typeof options.trustProxy === 'object' ? [...options.trustProxy] : (options.trustProxy ?? false);
  const app = Fastify({
    ...(options.loggerInstance ? { loggerInstance: options.loggerInstance } : { logger }),
    // A job's status polls are not logged at info level unless they fail (request-log.ts).
    logController: new QuietPollLog(`${apiPrefix}/assemblies/:id/status`),
    // A request's id (its log lines' reqId, its answer's X-Request-Id): the client's well-formed one, else a UUID.
    genReqId: requestIdOf,
    bodyLimit: 1024 * 1024,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Behind the TLS-terminating proxy the README recommends, trust that proxy, so links say https and the public host.
    trustProxy,
    requestTimeout: options.timeouts?.requestMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    // A socket silent well past the body's idle timeout is closed even where no 408 can be sent (stalled
    // headers); the margin lets the 408 go out first however late the route started watching the body.
    connectionTimeout: idleMs + Math.max(idleMs, 10_000),
    frameworkErrors,
  });
  const role = options.role ?? 'all';
  // An API node signs nothing: it starts no signing threads.
  // A node that signs keeps a job's files in memory from the upload to the signing and from the package to its download.
  const memory = role === 'api' ? undefined : new JobMemory(options.jobMemoryBytes ?? DEFAULT_JOB_MEMORY_BYTES);
  const metrics = options.metrics ? nodeMetrics(app.log, role, config, () => ({ store, worker, recordLog })) : undefined;
  const signing = role === 'api' ? undefined : { ...signingOptions(options.signingWorkers ?? config().signingWorkers), memory, observer: metrics };
  // The signing threads close last, after the worker that uses them has stopped.
  const pool = signing?.signer;
  if (pool) app.addHook('onClose', async () => await pool.close());
  // Each part of the node adds its own onClose hook as it starts; they run in the reverse order (node-tasks.ts).
  const stores = await openStoresFor(app, {
    dataDir: options.dataDir,
    database: options.database,
    blobStore: options.blobStore,
    leaseMs: options.leaseMs,
    role,
    config,
    log: app.log,
    signing,
    recordKeyFile: options.recordKeyFile ?? config().recordKeyFile,
  });
  const { jobs: store, tokens, worker } = stores;
  const ready = readiness({ store, dataDir: options.dataDir, config, signs: signing !== undefined });
  app.decorate('signgate', { store, worker, tokens, apiPrefix, role, memory, metrics, readiness: ready });
  answerRequestIds(app);
  if (metrics) metrics.observeRequests(app);
  if (options.metrics === 'route') registerMetricsRoute(app, metrics!);
  if (signing) logPkcs11Events(app);
  // A worker node has no record key (stores.recordKey is undefined): it serves no API and signs no checkpoint.
  const recordLog = keepRecordLog(app, store, stores.recordKey);
  keepRetention(app, role, store, config, memory);
  answerProblems(app, config, idleMs);

  // Whole numbers in paths and queries are written one way only (the schemas' type coercion would take "12345.0").
  app.addHook('onRoute', wholeNumbersOnly);
  const limitToken = await registerRateLimits(app, () => ({ ...config().rateLimits, ...options.rateLimits }));

  await app.register(multipart, {
    // Part filenames are relative paths (Addins/Foo.dll); busboy would keep only the last segment.
    preservePath: true,
    limits: { fileSize: config().maxUploadBytes + 1, files: config().maxFilesPerJob, fields: 20, fieldSize: 64 * 1024, parts: config().maxFilesPerJob + 20 },
  });
  // With an OpenID Connect issuer and a public client configured, the documentation page's Authorize button signs
  // in with the authorization-code flow and PKCE (the issuer's endpoints are read from its discovery document).
  const oauth = await docsOAuth(config().oidc, app.log);
  await registerDocs(app, apiPrefix, oauth);
  registerHealth(app, { role, ...ready, isOperator: operatorCheck({ config, now, tokens }) });
  registerExchangePage(app, apiPrefix, oauth?.signIn);

  // The API, one plugin a resource; the order they are registered in is the order of the OpenAPI document's paths.
  const authenticate = authenticator({ config, now, tokens, limitToken });
  const routes: RouteContext = { config, now, apiPrefix, store, worker, memory, recordLog, idleMs };
  // A worker node answers only health and readiness.
  if (role !== 'worker')
    await app.register(
      async (api) => {
        api.addHook('onRequest', authenticate);
        registerLicenseRoutes(api);
        registerJobRoutes(api, routes);
        registerRecordRoutes(api, routes);
        registerResultRoutes(api, routes);
        registerArchiveRoutes(api, routes);
      },
      { prefix: apiPrefix },
    );

  await app.ready();
  for (const record of await store.unfinished()) worker.enqueue(record.organization, record.id);
  return app;
}
