// The reference signing service as a fastify app (service-api.md is the contract).
// buildServer() makes the app; the caller listens, and closes it (which also stops the signing worker).
import { createHash } from 'node:crypto';
import { open, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { DEFAULT_RESULT_FILE, type JobRecord, type PendingJob } from '../jobs/store.js';
import { commentOf, errorResponse, OUTAGE_RETRY_AFTER_S, HttpProblem, problem, type ProblemFileError } from './problem.js';
import { wholeNumbersOnly } from './whole-numbers.js';
import * as S from './schemas.js';
import { DEFAULT_SERVICE_NAME, USER_ROLE, type Organization, type ServerConfig } from '../server-config.js';
import { bearerToken, tokenIdOf, type TokenKeeper } from '../identity/token-store.js';
import { acceptance } from '../jobs/key-rotation.js';
import type { JobStateStore, JobWorker, NodeRole } from '../jobs/store.js';
import { openStores } from '../storage/open-stores.js';
import { RecordLog, type JobRecordProof } from '../storage/record-checkpoint.js';
import { formatVerifierKey } from '../../record/checkpoint.js';
import { signingOptions } from '../jobs/signing-pool.js';
import { DEFAULT_JOB_MEMORY_BYTES, JobMemory } from '../jobs/job-memory.js';
import { onPkcs11Event } from '../../strongname/pkcs11/session.js';
import { logPkcs11Event, probeTokenKeys } from '../jobs/signing-worker.js';
import { decodeEncodedWords } from './encoded-words.js';
import { UploadNames } from '../../core/upload-names.js';
import { registerRateLimits, type RateLimitSettings } from '../identity/rate-limit.js';
import { registerHealth } from './health.js';
import { statfs } from 'node:fs/promises';
import { archiveBody, registerArchiveRoutes } from './archive.js';
import { guardBody } from './body-guard.js';
import { registerExchangePage } from './exchange-page.js';
import { docsOAuth, looksLikeJwt, OidcAuthenticator } from '../identity/oidc.js';
import { mkdirPrivate, PRIVATE_FILE } from '../storage/fs-atomic.js';
import { QuietPollLog } from './request-log.js';
import { SERVICE_LOG_OPTIONS, withoutQuery } from '../service-log.js';
import { nodeMetrics, registerMetricsRoute, type ServiceMetrics } from './metrics.js';

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
/** Room for what surrounds the file bytes in an upload body: boundaries, part headers, the comment. */
export const UPLOAD_ENVELOPE_BYTES = 1024 * 1024;

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
    };
  }
}

const COMMENT_MAX = 1000;

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
      const detail = code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A part of the address is longer than the service reads.' : code === 'FST_ERR_BAD_URL' ? 'The address has a malformed percent-encoding.' : 'The request cannot be read.';
      const plain = reply as unknown as { status(code: number): { type(t: string): { send(body: unknown): void } } };
      plain.status(status).type('application/problem+json').send(problem(status, status === 414 ? 'URI Too Long' : 'Bad Request', detail, withoutQuery(request.url).slice(0, 200)));
    },
  });
  const role = options.role ?? 'all';
  // An API node signs nothing: it starts no signing threads.
  // A node that signs keeps a job's files in memory from the upload to the signing and from the package to its download.
  const memory = role === 'api' ? undefined : new JobMemory(options.jobMemoryBytes ?? DEFAULT_JOB_MEMORY_BYTES);
  const metrics = options.metrics ? nodeMetrics(app.log, role, config, () => ({ store, worker, recordLog })) : undefined;
  const signing = role === 'api' ? undefined : { ...signingOptions(options.signingWorkers ?? config().signingWorkers), memory, observer: metrics };
  const stores = await openStores({ dataDir: options.dataDir, database: options.database, blobStore: options.blobStore, leaseMs: options.leaseMs, role, config, log: app.log, signing, recordKeyFile: options.recordKeyFile ?? config().recordKeyFile });
  const { jobs: store, tokens, worker } = stores;
  app.decorate('signgate', { store, worker, tokens, apiPrefix, role, memory, metrics });
  if (metrics) metrics.observeRequests(app);
  if (options.metrics === 'route') registerMetricsRoute(app, metrics!);
  // This thread owns the PKCS#11 modules (pool threads sign through it): what it does with a token is logged.
  const stopPkcs11Log = signing ? onPkcs11Event((event) => logPkcs11Event(app.log, event)) : undefined;
  // The record as a Merkle log: checkpoints signed with the deployment's record key (openStores agrees on it).
  // A worker node serves no API and signs no checkpoint: it has no record key (stores.recordKey is undefined).
  const recordLog = stores.recordKey ? new RecordLog(store.signatures, stores.recordKey) : undefined;
  app.addHook('onClose', async () => {
    stopPkcs11Log?.();
    await worker.stop();
    await stores.close();
    await signing?.signer?.close();
  });

  app.setErrorHandler(async (error, request, reply) => {
    const { status, body } = errorResponse(error, request.url);
    if (status >= 500) {
      const what = status === 507 ? 'storage full: free space on the data disk (answered 507)' : status === 503 ? 'storage does not answer (answered 503 with Retry-After)' : 'request failed';
      request.log.error({ err: { message: (error as Error).message, code: (error as { code?: string }).code } }, what);
    }
    if (status === 503) reply.header('retry-after', String(OUTAGE_RETRY_AFTER_S));
    if (status === 413 || status === 408) reply.header('connection', 'close'); // stop reading the rest of an oversized or stalled upload
    // Any other refusal (401, 403, 409, 400) reads and drops what the client is still sending, so that the client
    // sees the answer instead of a broken pipe; past the upload limit it gives up and closes the connection.
    else if (!(await discardBody(request.raw, config().maxUploadBytes + UPLOAD_ENVELOPE_BYTES, idleMs))) reply.header('connection', 'close');
    return reply.status(status).type('application/problem+json').send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).type('application/problem+json').send(problem(404, 'Not Found', `There is no ${request.method} ${withoutQuery(request.url)}.`, request.url)),
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
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assembly signing service (signgate reference implementation)',
        version: '1.0',
        description: 'Upload delay-signed .NET assemblies, follow the job, download the signed files. Authorize with a personal access token.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Personal access token' }, ...(oauth ? { oauth2: oauth.scheme } : {}) } },
      security: [{ bearerAuth: [] }, ...(oauth ? [{ oauth2: oauth.scopes }] : [])],
      tags: [
        { name: 'licenses', description: "The organization's license options: which `<optionId>_public.snk` it may delay-sign with" },
        { name: 'assemblies', description: 'Signing jobs: upload, status, result package, deletion' },
        { name: 'archives', description: 'The archive path: one ZIP of the project in, one ZIP with every file and a log per file back' },
        { name: 'record', description: "The signature record as a Merkle log: signed checkpoints, consistency proofs, the record key's public half" },
      ],
    },
    // The upload body is read as a multipart stream, so fastify does not validate it; describe it for the docs only.
    transform: ({ schema, url, route }) => {
      const out = { ...(schema as object) } as Record<string, unknown>;
      if (route.method === 'POST' && url === `${apiPrefix}/assemblies`) out.body = S.uploadBody;
      if (route.method === 'POST' && url === `${apiPrefix}/archives`) out.body = archiveBody;
      if (url === `${apiPrefix}/openapi.json`) out.hide = true;
      return { schema: out, url };
    },
    // Shared schemas (S.problemSchema) appear in components.schemas under their $id, the name generated clients use.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  app.addSchema(S.problemSchema);
  // validatorUrl null: the page must not call the public validator (no network beyond this service).
  // The page builds its document's address from its own, query included: /docs/?x would load /docs/?x/./json.
  // A query on the page itself (not on the OAuth redirect page, which needs its own) is dropped by a redirect.
  app.addHook('onRequest', async (request, reply) => {
    const [path, query] = request.url.split('?', 2);
    if (query !== undefined && (path === '/docs' || path === '/docs/')) return reply.redirect('/docs/', 302);
  });
  // The documentation page and its OAuth redirect page are never shown inside another origin's frame.
  app.addHook('onSend', async (request, reply) => {
    if (request.url === '/docs' || request.url.startsWith('/docs/') || request.url.startsWith('/docs?')) {
      reply.header('x-frame-options', 'DENY');
      if (!reply.getHeader('content-security-policy')) reply.header('content-security-policy', "frame-ancestors 'none'");
    }
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: false, tryItOutEnabled: true, validatorUrl: null },
    // The top bar's box for exploring another document's URL serves no user of this one, and on a phone it is
    // narrower than the URL it shows: left out.
    theme: { css: [{ filename: 'signgate.css', content: '.swagger-ui .topbar .download-url-wrapper { display: none; }' }] },
    ...(oauth ? { initOAuth: oauth.initOAuth } : {}),
  });

  registerHealth(app, {
    role,
    ready: async () => {
      await store.ping();
      // A node that takes uploads or signs needs room for them: an upload and its result package.
      await assertRoom(options.dataDir, 2 * config().maxUploadBytes);
      // A node that signs needs its keys in PKCS#11 tokens: each signs a probe digest that must verify with the
      // option's public key (in this thread, the modules' owner), with a timeout.
      // Jobs that wait for a key no worker could use (key-wait.ts): named, so that an API node's probe says that no
      // worker can sign an option, while it still takes uploads (they wait too).
      const waits = await store.keyWaits?.();
      const waitingForKeys = waits?.length ? { waitingForKeys: waits } : {};
      if (signing) {
        const tokenKeys = await probeTokenKeys(config());
        if (tokenKeys.length) return { tokenKeys, ...waitingForKeys };
      }
      return waitingForKeys;
    },
  });
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  registerExchangePage(app, apiPrefix, oauth?.signIn);

  const oidc = new OidcAuthenticator();
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    await identify(request);
    // Counted per token once the token is known to be good (junk is counted by address alone).
    await limitToken(request, reply);
  };
  const identify = async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new HttpProblem(401, 'Unauthorized', 'Send a personal access token: Authorization: Bearer <token>.');
    // A JWT is an OAuth 2.0 access token from the configured OpenID Connect issuer (oidc.ts).
    if (config().oidc && looksLikeJwt(token)) {
      request.principal = { ...(await oidc.principal(token, config(), now())), tokenId: null };
      return;
    }
    const stored = await tokens.find(token);
    if (!stored && tokens.holdsNone?.()) {
      // Said without the folder's path (the caller is not known yet); `signgate serve` prints it at start.
      throw new HttpProblem(
        401,
        'Unauthorized',
        'The access token is not known. This service holds no tokens at all in its data folder, so the token was made for another one: ' +
          'create a token with `signgate serve token create --data-dir <folder>` naming the folder the service runs with ' +
          '(`signgate serve` prints it at start).',
      );
    }
    if (!stored) throw new HttpProblem(401, 'Unauthorized', 'The access token is not known. Create a new token.');
    if (stored.revokedAt) throw new HttpProblem(401, 'Unauthorized', `The access token was revoked on ${stored.revokedAt}. Create a new token.`);
    if (Date.parse(stored.expiresAt) <= now().getTime()) {
      throw new HttpProblem(401, 'Unauthorized', `The access token expired on ${stored.expiresAt}. Tokens cannot be prolonged: create a new one.`);
    }
    const organization = config().organizations.get(stored.organization);
    const roles = organization?.users.get(stored.user);
    if (!organization || !roles?.includes(USER_ROLE)) {
      throw new HttpProblem(403, 'Forbidden', `The user ${stored.user} does not hold the role ${USER_ROLE} on the signing application.`);
    }
    request.principal = { organization, user: stored.user, tokenId: tokenIdOf(stored.hash) };
  };

  const links = (request: FastifyRequest, id: string) => {
    const base = `${request.protocol}://${request.host}${apiPrefix}/assemblies/${id}`;
    return { status: `${base}/status`, download: base, delete: base };
  };

  const jobOf = async (request: FastifyRequest<{ Params: { id: string } }>): Promise<JobRecord> => {
    const record = await store.get(request.principal!.organization.id, request.params.id);
    // Another organization's job answers exactly like an unknown one.
    if (!record) throw new HttpProblem(404, 'Not Found', `There is no job ${request.params.id}.`);
    return record;
  };

  // A worker node answers only health and readiness.
  if (role !== 'worker') await app.register(async (api) => {
    api.addHook('onRequest', authenticate);

    // The current key of each option (after a key rotation, the key new jobs are signed with).
    api.get('/licenses', { schema: S.licensesRoute }, async (request) => request.principal!.organization.licenses.map((l) => ({ optionId: l.optionId, publicKeyToken: l.token })));

    api.get<{ Params: { optionId: number } }>('/licenses/:optionId/public-key', { schema: S.publicKeyRoute }, async (request, reply) => {
      const org = request.principal!.organization;
      const license = org.licenses.find((l) => l.optionId === request.params.optionId);
      if (!license) {
        const held = org.licenses.length ? `it holds ${org.licenses.map((l) => l.optionId).join(', ')}` : 'it holds none';
        throw new HttpProblem(404, 'Not Found', `The organization ${org.id} holds no license option ${request.params.optionId}; ${held}.`);
      }
      return reply
        .type('application/octet-stream')
        .header('content-disposition', `attachment; filename="${license.optionId}_public.snk"`)
        .send(Buffer.from(license.key.publicKey.blob));
    });

    api.post('/assemblies', { schema: S.uploadRoute }, async (request, reply) => {
      const org = request.principal!.organization;
      const limits = config();
      if (org.licenses.length === 0) throw new HttpProblem(403, 'Forbidden', `The organization ${org.id} holds no license option, so nothing can be signed.`);
      if (!request.isMultipart()) throw new HttpProblem(400, 'Bad Request', 'Send the files as multipart/form-data, one part per file (files[0], files[1], …).');
      const maxBodyBytes = limits.maxUploadBytes + UPLOAD_ENVELOPE_BYTES;
      if (Number(request.headers['content-length'] ?? 0) > maxBodyBytes) throw tooLarge(limits.maxUploadBytes);
      // An upload sent again with the key of one the service accepted: the same job, not a second one.
      const idempotencyKey = idempotencyKeyOf(request.headers['idempotency-key']);
      const earlier = idempotencyKey === undefined ? undefined : await store.findByIdempotencyKey(org.id, idempotencyKey);
      if (earlier) {
        await discardBody(request.raw, maxBodyBytes, idleMs);
        request.log.info({ job: earlier.id, organization: org.id }, 'upload repeated with its Idempotency-Key: the same job');
        return reply.status(201).header('idempotent-replayed', 'true').send({ id: earlier.id, comment: earlier.comment, links: links(request, earlier.id) });
      }
      const pending = await store.reserve(org.id, limits.maxJobsPerOrganization);
      if (!pending) {
        throw new HttpProblem(409, 'Job limit reached', `The organization keeps ${limits.maxJobsPerOrganization} jobs, the most it may keep. Delete finished jobs, then upload again.`);
      }
      // Memory the upload's files take while they arrive (kept for the signing once the job is accepted).
      const reserved = { bytes: 0 };
      try {
        const job = await receiveUpload(request, pending, limits.maxUploadBytes, idleMs, memory, reserved);
        const record: JobRecord = {
          id: pending.id,
          organization: org.id,
          comment: job.comment,
          createdAt: now().toISOString(),
          processingFinished: false,
          assemblies: job.files.map((f) => ({ ...f, fileProcessingState: 'Pending', messages: [] })),
          ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
          ...acceptance(request.principal!),
        };
        await store.commit(pending, record);
        if (memory) memory.keepUploads(org.id, record.id, job.held, reserved.bytes);
        reserved.bytes = 0;
        request.log.info({ job: record.id, organization: org.id, files: record.assemblies.length, bytes: job.bytes }, 'job accepted');
        worker.enqueue(org.id, record.id);
        return reply.status(201).send({ id: record.id, comment: record.comment, links: links(request, record.id) });
      } catch (error) {
        memory?.release(reserved.bytes);
        await store.abandon(pending);
        throw error;
      }
    });

    api.get<{ Querystring: { offset?: number; limit?: number } }>('/assemblies', { schema: S.listRoute }, async (request) =>
      store.list(request.principal!.organization.id, request.query),
    );

    api.get<{ Params: { id: string } }>('/assemblies/:id/status', { schema: S.statusRoute }, async (request) => {
      const r = await jobOf(request);
      return {
        id: r.id,
        comment: r.comment,
        createdAt: r.createdAt,
        processingFinished: r.processingFinished,
        // Extension: the job's record entries, each with its inclusion proof in the checkpoint given with them.
        ...(r.processingFinished ? await recordProofOf(recordLog!, r.id, request.log) : {}),
        assemblies: r.assemblies.map((a) => ({ fileName: a.fileName, fileProcessingState: a.fileProcessingState, messages: a.messages })),
      };
    });

    api.get('/record/checkpoint', { schema: S.checkpointRoute }, async () => {
      await recordLog!.refresh();
      return { checkpoint: recordLog!.checkpoint(), size: recordLog!.size };
    });

    api.get<{ Querystring: { from: number; to: number } }>('/record/consistency', { schema: S.consistencyRoute }, async (request) => {
      const { from, to } = request.query;
      if (to > recordLog!.size) await recordLog!.refresh();
      if (from > to || to > recordLog!.size) {
        throw new HttpProblem(400, 'Bad Request', `No consistency proof from ${from} to ${to} entries: the record holds ${recordLog!.size}, and from must not exceed to.`);
      }
      return { from, to, proof: await recordLog!.consistency(from, to) };
    });

    api.get('/record/public-key', { schema: S.recordPublicKeyRoute }, async () => ({ publicKey: formatVerifierKey(recordLog!.key.verifier) }));

    api.get<{ Params: { id: string } }>('/assemblies/:id', { schema: S.downloadRoute }, async (request, reply) => {
      const r = await jobOf(request);
      if (!r.processingFinished) throw new HttpProblem(409, 'Not ready', `Job ${r.id} is still being processed; poll its status until processingFinished is true.`);
      // The package as it was written, when this process still has it; else from the store.
      const kept = memory?.package(r.organization, r.id, r.resultFile ?? DEFAULT_RESULT_FILE);
      if (kept) reply.header('content-length', kept.bytes);
      const result = kept ? Readable.from(kept.chunks, { objectMode: false }) : await store.openResult(r);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="${r.id}.zip"`)
        .send(result);
    });

    api.delete<{ Params: { id: string } }>('/assemblies/:id', { schema: S.deleteRoute }, async (request, reply) => {
      const org = request.principal!.organization.id;
      // The worker lets go of the job first, so that it never writes into a folder that is being removed.
      await worker.cancel(org, request.params.id);
      memory?.forget(org, request.params.id);
      let deleted: boolean;
      try {
        deleted = await store.delete(org, request.params.id);
      } catch (error) {
        // Still there: let the worker finish it rather than leave it processing for ever.
        const record = await store.get(org, request.params.id);
        if (record && !record.processingFinished) worker.enqueue(org, record.id);
        throw error;
      }
      if (!deleted) throw new HttpProblem(404, 'Not Found', `There is no job ${request.params.id}.`);
      return reply.status(204).send();
    });

    registerArchiveRoutes(api, { config, store, worker, now, apiPrefix, envelopeBytes: UPLOAD_ENVELOPE_BYTES, idleMs, jobOf });
  }, { prefix: apiPrefix });

  await app.ready();
  for (const record of await store.unfinished()) worker.enqueue(record.organization, record.id);
  return app;
}

const tooLarge = (maxBytes: number) =>
  new HttpProblem(413, 'Upload too large', `The upload exceeds ${maxBytes} bytes, the most one job may hold. Split the files into several jobs.`);

/** Reads and drops the rest of a request body; false when it is longer than `maxBytes` or stalls for `idleMs` (the caller closes). */
function discardBody(raw: NodeJS.ReadableStream & { readableEnded?: boolean; complete?: boolean }, maxBytes: number, idleMs: number): Promise<boolean> {
  if (raw.readableEnded || raw.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    let idle = setTimeout(() => finish(false), idleMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      idle.refresh();
      if (seen > maxBytes) finish(false);
    };
    const finish = (ok: boolean) => {
      clearTimeout(idle);
      raw.removeListener('data', onData);
      raw.removeListener('end', onEnd);
      raw.removeListener('error', onError);
      resolve(ok);
    };
    const onEnd = () => finish(true);
    const onError = () => finish(false);
    raw.on('data', onData);
    raw.once('end', onEnd);
    raw.once('error', onError);
    raw.resume();
  });
}

interface ReceivedUpload {
  comment: string | null;
  bytes: number;
  files: { fileName: string; size: number; sha256: string }[];
  /** The files' bytes kept in memory (as reserved from `memory`), by name. */
  held: Map<string, Uint8Array>;
}

/**
 * Streams the multipart parts to disk, counting bytes: past the limit it stops reading and answers 413.
 * Names are checked as they arrive; all name problems are reported together (400, one entry per file).
 * Each file is written once; while `memory` has room its bytes are also kept (taken from it into `reserved`).
 */
async function receiveUpload(request: FastifyRequest, pending: PendingJob, maxBytes: number, idleMs: number, memory: JobMemory | undefined, reserved: { bytes: number }): Promise<ReceivedUpload> {
  let total = 0;
  let comment: string | null = null;
  const files: ReceivedUpload['files'] = [];
  const held = new Map<string, Uint8Array>();
  const folders = new Set<string>();
  const nameErrors: ProblemFileError[] = [];
  const names = new UploadNames();
  const parts = request.parts()[Symbol.asyncIterator]();
  // The first next() pipes the request into busboy; the guard listens beside it from the same tick on.
  const first = parts.next();
  const release = guardBody(request, maxBytes + UPLOAD_ENVELOPE_BYTES, idleMs, () => tooLarge(maxBytes));
  try {
    for (let result = await first; !result.done; result = await parts.next()) {
      const part = result.value;
      if (part.type === 'field') {
        if (part.fieldname === 'comment') comment = commentOf(part.value, COMMENT_MAX);
        continue;
      }
      const fileName = part.filename === undefined ? undefined : decodeEncodedWords(part.filename);
      const check = names.check(fileName);
      const hash = createHash('sha256');
      let size = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          total += chunk.length;
          size += chunk.length;
          if (total > maxBytes) return callback(tooLarge(maxBytes));
          hash.update(chunk);
          callback(null, chunk);
        },
      });
      if (!check.ok) {
        nameErrors.push({ fileName: fileName ?? '', detail: check.reason });
        await pipeline(part.file, counter, new Transform({ transform: (_c, _e, cb) => cb() }));
        continue;
      }
      const target = join(pending.uploadsDir, check.name);
      if (!folders.has(dirname(target))) {
        await mkdirPrivate(dirname(target));
        folders.add(dirname(target));
      }
      const sink = new FileSink(target, memory, reserved);
      await pipeline(part.file, counter, sink);
      if ((part.file as { truncated?: boolean }).truncated) throw tooLarge(maxBytes);
      files.push({ fileName: check.name, size, sha256: hash.digest('hex') });
      if (sink.held) held.set(check.name, sink.held);
    }
  } finally {
    release();
  }
  if (nameErrors.length) throw new HttpProblem(400, 'Bad file names', `${nameErrors.length} file name(s) cannot be accepted; nothing was stored.`, nameErrors);
  if (files.length === 0) throw new HttpProblem(400, 'No files', 'The upload holds no file part. Send one part per file, each with a filename.');
  return { comment, bytes: total, files, held };
}

/**
 * One uploaded file, written once: kept in memory while `memory` has room and written in one call at its end (its
 * bytes then stay in `held`), or, once there is no room, written to disk as it arrives (and read back for signing).
 */
class FileSink extends Writable {
  held: Uint8Array | undefined;
  private chunks: Buffer[] | undefined;
  private size = 0;
  private file: FileHandle | undefined;

  constructor(
    private readonly target: string,
    private readonly memory: JobMemory | undefined,
    private readonly reserved: { bytes: number },
  ) {
    super();
    this.chunks = memory ? [] : undefined;
  }

  private async toDisk(): Promise<FileHandle> {
    this.file ??= await open(this.target, 'wx', PRIVATE_FILE);
    if (this.chunks) {
      // No more room: what was kept so far goes to disk first, and its memory back.
      const kept = this.chunks;
      this.chunks = undefined;
      this.memory!.release(this.size);
      this.reserved.bytes -= this.size;
      for (const chunk of kept) await this.file.writeFile(chunk); // at the current position, the whole chunk
    }
    return this.file;
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.chunks && this.memory!.reserve(chunk.length)) {
      this.reserved.bytes += chunk.length;
      this.chunks.push(chunk);
      this.size += chunk.length;
      callback();
      return;
    }
    this.toDisk().then((file) => file.writeFile(chunk)).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.chunks) {
      const bytes = Buffer.concat(this.chunks, this.size);
      this.chunks = undefined;
      writeFile(this.target, bytes, { flag: 'wx', mode: PRIVATE_FILE }).then(() => {
        this.held = bytes;
        callback();
      }, callback);
      return;
    }
    this.toDisk()
      .then((file) => file.close())
      .then(() => {
        this.file = undefined;
        callback();
      }, callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return callback(error);
    file.close().then(() => callback(error), () => callback(error));
  }
}

/**
 * The Idempotency-Key of an upload: 1 to 128 characters of letters, digits and `._:-`; absent is undefined.
 * @throws HttpProblem 400 for a key of another shape
 */
function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || !/^[A-Za-z0-9._:-]{1,128}$/.test(key)) throw new HttpProblem(400, 'Bad Request', 'The Idempotency-Key header must be 1 to 128 letters, digits, dots, underscores, colons or hyphens.');
  return key;
}

/**
 * Throws when the data folder has less than `bytes` free (readiness: a node that cannot store a job is not ready).
 * @throws Error naming the free and the needed space
 */
async function assertRoom(dataDir: string, bytes: number): Promise<void> {
  const fs = await statfs(dataDir);
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < bytes) throw new Error(`the data folder has ${(free / 1e6).toFixed(1)} MB free; a job may need ${(bytes / 1e6).toFixed(1)} MB (an upload and its result package)`);
}

/** A finished job's `signatureRecord` field, or nothing (no entries; a record that cannot be read is logged, not fatal to the status). */
async function recordProofOf(log: RecordLog, jobId: string, logger: FastifyBaseLogger): Promise<{ signatureRecord?: JobRecordProof }> {
  try {
    const proof = await log.jobProof(jobId);
    return proof ? { signatureRecord: proof } : {};
  } catch (error) {
    logger.error({ job: jobId, err: { message: (error as Error).message } }, 'the signature record could not be read for the job status');
    return {};
  }
}

