// Every error the service answers, as RFC 9457 problem details (../problem.ts): storage faults, the framework's
// refusals and HttpProblems each mapped to a status and a body, and the upload's comment checked.
import { HttpProblem, problem, type Problem } from '../problem.js';

/** Seconds a client is asked to wait after a storage outage (503). */
export const OUTAGE_RETRY_AFTER_S = 5;

const FULL = new Set(['ENOSPC', 'EDQUOT']);
// Connections to PostgreSQL or object storage that failed or were cut, and PostgreSQL's own "not now" codes
// (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now, class 08 connection exceptions).
const OUTAGE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/**
 * Whether `error` is the storage's, not the request's: `full` (no room on the data disk), `outage` (the database
 * or object storage does not answer, for now), or undefined.
 */
export function storageFault(error: unknown): 'full' | 'outage' | undefined {
  for (
    let e = error as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; $metadata?: { httpStatusCode?: number } } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    const code = typeof e.code === 'string' ? e.code : undefined;
    if (code && FULL.has(code)) return 'full';
    if (code && OUTAGE.has(code)) return 'outage';
    if (typeof e.message === 'string' && /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message)) return 'outage';
    if ((e.$metadata?.httpStatusCode ?? 0) >= 500 || e.name === 'ServiceUnavailable' || e.name === 'SlowDown') return 'outage';
  }
  return undefined;
}

/** Maps any error a route can throw to a status and a problem body; internal details never leak. */
export function errorResponse(error: unknown, instance: string): { status: number; body: Problem } {
  const fault = storageFault(error);
  if (fault === 'full')
    return {
      status: 507,
      body: problem(507, 'Insufficient Storage', 'The service has no room to store this now; try again later. The operator has been told.', instance),
    };
  if (fault === 'outage')
    return {
      status: 503,
      body: problem(
        503,
        'Service Unavailable',
        `The service's storage does not answer for the moment; try again in ${OUTAGE_RETRY_AFTER_S} seconds.`,
        instance,
      ),
    };
  if (error instanceof HttpProblem) return { status: error.status, body: problem(error.status, error.title, error.detail, instance, error.errors) };
  const e = error as { code?: string; statusCode?: number; message?: string; validation?: unknown };
  switch (e.code) {
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return {
        status: 413,
        body: problem(
          413,
          'Upload too large',
          'The upload exceeds the limits of one job (total size or number of files). Split it into several jobs.',
          instance,
        ),
      };
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return { status: 400, body: problem(400, 'Bad Request', 'Send the files as multipart/form-data.', instance) };
  }
  if (e.validation) return { status: 400, body: problem(400, 'Bad Request', e.message ?? 'The request does not match the API.', instance) };
  // The multipart parser's own words for a body that is not well-formed: the request's fault, not the service's.
  if (
    typeof e.message === 'string' &&
    /^(Multipart: Boundary not found|Unexpected end of multipart data|Part terminated early|Malformed part header)/.test(e.message)
  ) {
    return {
      status: 400,
      body: problem(
        400,
        'Bad Request',
        `The multipart/form-data body is malformed (${e.message.split(' due to')[0]}); nothing was stored. Send it again whole, with a boundary in the Content-Type.`,
        instance,
      ),
    };
  }
  if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500)
    return { status: e.statusCode, body: problem(e.statusCode, 'Bad Request', e.message ?? 'The request was refused.', instance) };
  return { status: 500, body: problem(500, 'Internal Server Error', 'The service failed to handle the request; try again later.', instance) };
}

/**
 * The `comment` field of an upload: text of at most `max` characters, and no NUL, which PostgreSQL cannot store in
 * text (every store refuses it alike).
 * @throws HttpProblem 400 for a comment with a NUL character
 */
export function commentOf(value: unknown, max: number): string {
  const text = String(value);
  if (text.includes('\u0000')) throw new HttpProblem(400, 'Bad Request', 'The comment holds a NUL character; send it without control characters.');
  return text.slice(0, max);
}
