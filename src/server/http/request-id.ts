// One request, one id: the id fastify gives a request (the `reqId` of each of its log lines) is the client's
// X-Request-Id when it is well-formed, else a new random UUID (unique across nodes, unlike a per-process counter).
// Every answer carries it back in X-Request-Id, and a problem+json answer also in its `requestId` field.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** A request id the service takes from a client: 1 to 128 of A–Z a–z 0–9 . _ : - (anything else gets a new id). */
export const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** fastify's genReqId: the client's well-formed X-Request-Id, else a random UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && WELL_FORMED_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Sends the id back on every answer and puts it into every problem+json body. */
export function answerRequestIds(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    const type = reply.getHeader('content-type');
    if (typeof payload !== 'string' || typeof type !== 'string' || !type.startsWith('application/problem+json')) return payload;
    try {
      const body = JSON.parse(payload) as unknown;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) return payload;
      return JSON.stringify({ ...body, requestId: request.id });
    } catch {
      return payload;
    }
  });
}
