// One guard for every upload body (POST /assemblies and POST /archives): every byte counts toward the limit
// (preamble, part headers, fields, files), and a body that brings nothing for the idle time is stalled.
import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../problem.js';

/** Room for what surrounds the file bytes in an upload body: boundaries, part headers, the comment. */
export const UPLOAD_ENVELOPE_BYTES = 1024 * 1024;

/**
 * Watches the raw body while busboy parses it. Past `maxBodyBytes` it stops with `tooLarge()` (413); after `idleMs`
 * without a byte, with 408. Either ends the parts iteration with that error. Returns the function that stops
 * watching; call it once the parts are read.
 */
export function guardBody(request: FastifyRequest, maxBodyBytes: number, idleMs: number, tooLarge: () => HttpProblem): () => void {
  const raw = request.raw;
  let seen = 0;
  const stop = (error: HttpProblem) => {
    release();
    // @fastify/multipart listens for 'error' on the request: it unpipes busboy and the iteration throws this.
    raw.emit('error', error);
  };
  const idle = setTimeout(
    () => stop(new HttpProblem(408, 'Request Timeout', `The upload sent nothing for ${Math.round(idleMs / 1000)} s and was abandoned; send it again.`)),
    idleMs,
  );
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    idle.refresh();
    if (seen > maxBodyBytes) stop(tooLarge());
  };
  const release = () => {
    clearTimeout(idle);
    raw.removeListener('data', onData);
    raw.removeListener('end', release);
  };
  raw.on('data', onData);
  raw.once('end', release);
  return release;
}

/** Reads and drops the rest of a request body; false when it is longer than `maxBytes` or stalls for `idleMs` (the caller closes). */
export function discardBody(raw: NodeJS.ReadableStream & { readableEnded?: boolean; complete?: boolean }, maxBytes: number, idleMs: number): Promise<boolean> {
  if (raw.readableEnded || raw.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    let seen = 0;
    const idle = setTimeout(() => finish(false), idleMs);
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
