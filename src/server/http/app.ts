// The reference signing service as a fastify app (service-api.md is the contract).
// buildServer() makes the app; the caller listens, and closes it (which also stops the signing worker).
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import multipart from '@fastify/multipart';
import { onPkcs11Event } from '../../strongname/pkcs11/session.js';
import { docsOAuth } from '../identity/oidc.js';
import { registerRateLimits } from '../identity/rate-limit.js';
import type { TokenKeeper } from '../ports.js';
import { DEFAULT_JOB_MEMORY_BYTES, JobMemory } from '../jobs/job-memory.js';
import { signingOptions } from '../jobs/signing-pool.js';
import { logPkcs11Event } from '../jobs/token-readiness.js';
import { startRetention } from '../jobs/retention.js';
import type { JobWorker, NodeRole } from '../jobs/job-worker.js';
import { problem } from '../problem.js';
import { DEFAULT_SERVICE_NAME, type Organization, type RateLimitSettings, type ServerConfig } from '../server-config.js';
import { SERVICE_LOG_OPTIONS, withoutQuery } from '../service-log.js';
import { RecordLog } from '../record/record-checkpoint.js';
import type { JobStateStore } from '../ports.js';
import { authenticator, operatorCheck } from './authenticate.js';
import { discardBody, UPLOAD_ENVELOPE_BYTES } from './body-guard.js';
import { nodeMetrics, registerMetricsRoute, type ServiceMetrics } from './metrics.js';
import { openStores } from './node-stores.js';
import { errorResponse, OUTAGE_RETRY_AFTER_S } from './error-response.js';
import { answerRequestIds, requestIdOf } from './request-id.js';
import { QuietPollLog } from './request-log.js';
import { registerArchiveRoutes } from './routes/archives-routes.js';
import { jobOf, type RouteContext } from './routes/context.js';
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
    // The router's own refusals (a bad percent-encoding, a path segment too long) answer problem+json like every
    // other error; the address is not echoed (it is the client's, and may be long).
    frameworkErrors: (error, request, reply) => {
      const code = (error as { code?: string }).code;
      const status = code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const detail =
        code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'A part of the address is longer than the service reads.'
          : code === 'FST_ERR_BAD_URL'
            ? 'The address has a malformed percent-encoding.'
            : 'The request cannot be read.';
      // No hook runs for these: the request id is sent here (request-id.ts does it for every other answer).
      const plain = reply as unknown as { header(n: string, v: string): void; status(code: number): { type(t: string): { send(body: unknown): void } } };
      plain.header('x-request-id', request.id);
      plain
        .status(status)
        .type('application/problem+json')
        .send({
          ...problem(status, status === 414 ? 'URI Too Long' : 'Bad Request', detail, withoutQuery(request.url).slice(0, 200)),
          requestId: request.id,
        });
    },
  });
  const role = options.role ?? 'all';
  // An API node signs nothing: it starts no signing threads.
  // A node that signs keeps a job's files in memory from the upload to the signing and from the package to its download.
  const memory = role === 'api' ? undefined : new JobMemory(options.jobMemoryBytes ?? DEFAULT_JOB_MEMORY_BYTES);
  const metrics = options.metrics ? nodeMetrics(app.log, role, config, () => ({ store, worker, recordLog })) : undefined;
  const signing = role === 'api' ? undefined : { ...signingOptions(options.signingWorkers ?? config().signingWorkers), memory, observer: metrics };
  const stores = await openStores({
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
  // This thread owns the PKCS#11 modules (pool threads sign through it): what it does with a token is logged.
  const stopPkcs11Log = signing ? onPkcs11Event((event) => logPkcs11Event(app.log, event)) : undefined;
  // The record as a Merkle log: checkpoints signed with the deployment's record key (openStores agrees on it).
  // A worker node serves no API and signs no checkpoint: it has no record key (stores.recordKey is undefined).
  const recordLog = stores.recordKey ? new RecordLog(store.signatures, stores.recordKey) : undefined;
  // The record's stored tree is read on from the start, not at the first request: at the first start of a release
  // on a record without one, it is built (minutes for millions of entries) while the node serves; checkpoints wait.
  if (recordLog) app.addHook('onReady', async () => void readRecordTree(recordLog, app.log));
  // Finished jobs past limits.jobRetention go, swept by the nodes that serve the API (retention.ts).
  const stopRetention = role === 'worker' ? undefined : startRetention(store, config, app.log, memory);
  app.addHook('onClose', async () => {
    await recordLog?.stop();
    await stopRetention?.();
    stopPkcs11Log?.();
    await worker.stop();
    await stores.close();
    await signing?.signer?.close();
  });

  app.setErrorHandler(async (error, request, reply) => {
    // A client that went away (a cancelled upload, a dropped connection) is not a fault of the service's storage,
    // though its reads fail as an outage's do (ECONNRESET): one info line, and an answer nobody reads.
    if (request.raw.readableAborted || request.raw.socket?.destroyed) {
      request.log.info(
        { err: { message: (error as Error).message, code: (error as { code?: string }).code } },
        'the client went away before its request was read whole; nothing of it was kept',
      );
      return reply
        .status(400)
        .header('connection', 'close')
        .type('application/problem+json')
        .send(problem(400, 'Bad Request', 'The request ended before its body did; nothing of it was kept.', request.url));
    }
    const { status, body } = errorResponse(error, request.url);
    if (status >= 500) {
      const what =
        status === 507
          ? 'storage full: free space on the data disk (answered 507)'
          : status === 503
            ? 'storage does not answer (answered 503 with Retry-After)'
            : 'request failed';
      request.log.error({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, what);
    }
    if (status === 503) reply.header('retry-after', String(OUTAGE_RETRY_AFTER_S));
    if (status === 413 || status === 408)
      reply.header('connection', 'close'); // stop reading the rest of an oversized or stalled upload
    // Any other refusal (401, 403, 409, 400) reads and drops what the client is still sending, so that the client
    // sees the answer instead of a broken pipe; past the upload limit it gives up and closes the connection.
    else if (!(await discardBody(request.raw, config().maxUploadBytes + UPLOAD_ENVELOPE_BYTES, idleMs))) reply.header('connection', 'close');
    return reply.status(status).type('application/problem+json').send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .type('application/problem+json')
      .send(problem(404, 'Not Found', `There is no ${request.method} ${withoutQuery(request.url)}.`, request.url)),
  );

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
        registerArchiveRoutes(api, {
          config,
          store,
          worker,
          now,
          apiPrefix,
          envelopeBytes: UPLOAD_ENVELOPE_BYTES,
          idleMs,
          jobOf: (request) => jobOf(routes, request),
        });
      },
      { prefix: apiPrefix },
    );

  await app.ready();
  for (const record of await store.unfinished()) worker.enqueue(record.organization, record.id);
  return app;
}

/** Reads the record's tree on in the background; logs how long when it took more than a second, and a failure (a request retries it). */
function readRecordTree(recordLog: RecordLog, log: FastifyBaseLogger): void {
  const since = Date.now();
  recordLog.refresh().then(
    () => {
      if (Date.now() - since > 1000) log.info({ entries: recordLog.size, ms: Date.now() - since }, "the signature record's stored tree is read");
    },
    (error: Error) =>
      log.error({ err: { message: error.message } }, "the signature record's stored tree could not be read; a request for a checkpoint tries again"),
  );
}
