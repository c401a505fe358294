// How the service answers what goes wrong, always as problem+json: the router's own refusals (frameworkErrors, a
// Fastify option), every error a route or hook throws (its status from error-response.ts; the service's own faults
// logged; what the client still sends read and dropped, or the connection closed), and an address no route serves.
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { problem } from '../problem.js';
import type { ServerConfig } from '../server-config.js';
import { withoutQuery } from '../service-log.js';
import { discardBody, UPLOAD_ENVELOPE_BYTES } from './body-guard.js';
import { errorResponse, OUTAGE_RETRY_AFTER_S } from './error-response.js';

/**
 * The router's own refusals (a bad percent-encoding, a path segment too long) answer problem+json like every other
 * error; the address is not echoed (it is the client's, and may be long).
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
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
};

/** Sets `app`'s error and not-found handlers. `idleMs`: how long a body may bring no byte while it is read and dropped. */
export function answerProblems(app: FastifyInstance, config: () => ServerConfig, idleMs: number): void {
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
}
