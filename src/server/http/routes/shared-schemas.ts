// What the API's route schemas share: the problem details every error answer refers to (one schema, added once), the
// problem responses with their examples, and the job's id, links and example values. Each resource's own schemas are
// in its routes file; fastify validates and serializes with them, and the OpenAPI document is generated from them.

/**
 * RFC 9457 problem details, one shared schema (fastify's addSchema) that every error response refers to, so the
 * OpenAPI document holds it once under components.schemas and a generated client has one Problem type.
 */
export const problemSchema = {
  $id: 'Problem',
  title: 'Problem',
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    requestId: { type: 'string', description: "The request's id, as in the answer's X-Request-Id header and in the service's log lines (reqId)" },
    errors: { type: 'array', items: { title: 'ProblemFileError', type: 'object', properties: { fileName: { type: 'string' }, detail: { type: 'string' } } } },
  },
} as const;

/** A problem response of `status` with its own description, and an example body (ours unless one is given). */
export const problemResponse = (status: number, description: string, example: Record<string, unknown> | undefined = PROBLEM_EXAMPLES[status]) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' }, ...(example ? { example } : {}) } },
});

// Every route may answer 429 (rate-limit.ts).
export const problems = (...codes: number[]) =>
  Object.fromEntries(
    [...codes, 429].map((c) => [
      c,
      { description: DESCRIPTIONS[c], content: { 'application/problem+json': { schema: { $ref: 'Problem#' }, example: PROBLEM_EXAMPLES[c] } } },
    ]),
  );

export const EXAMPLE_JOB_ID = '3f1c2a9e-8b7d-4c55-9a0e-2d6f4b1e7c30';

export const EXAMPLE_CREATED_AT = '2026-11-23T09:41:07.512Z';

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: not multipart, bad or duplicate file names (one entry per file in errors)',
  401: 'No valid token: missing, unknown or expired',
  403: 'The user lacks the role User, or the organization holds no license',
  404: 'No such job in your organization',
  408: 'The upload stopped sending for longer than the idle timeout; nothing was kept and the job slot is free',
  409: 'Job limit reached, or the result is not ready',
  413: 'The upload is larger than one job may be',
  429: 'Too many requests from this access token or address; wait the seconds given in Retry-After',
};

/** One problem body per status, as the service sends it (examples in the OpenAPI document). */
const PROBLEM_EXAMPLES: Record<number, Record<string, unknown>> = {
  400: {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: 'Some file names are not accepted.',
    errors: [{ fileName: '../Contoso.Addin.dll', detail: 'The name leaves the root directory (..).' }],
  },
  401: { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Send a personal access token: Authorization: Bearer <token>.' },
  403: { type: 'about:blank', title: 'Forbidden', status: 403, detail: 'The organization contoso holds no license option, so nothing can be signed.' },
  404: { type: 'about:blank', title: 'Not Found', status: 404, detail: `There is no job ${EXAMPLE_JOB_ID}.` },
  408: { type: 'about:blank', title: 'Request Timeout', status: 408, detail: 'The upload sent nothing for 30 s and was abandoned; send it again.' },
  409: {
    type: 'about:blank',
    title: 'Conflict',
    status: 409,
    detail: `Job ${EXAMPLE_JOB_ID} is still being processed; download its result when processingFinished is true.`,
  },
  413: {
    type: 'about:blank',
    title: 'Upload too large',
    status: 413,
    detail: 'The upload exceeds 40000000 bytes, the most one job may hold. Split the files into several jobs.',
  },
  429: { type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'Rate limit exceeded, retry in 12 seconds' },
};

export const jobId = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'Job id (UUID)' } } } as const;

/** The links of a created job: its status, its result (from `/assemblies` or `/archives`) and its delete. */
export const jobLinks = { type: 'object', properties: { status: { type: 'string' }, download: { type: 'string' }, delete: { type: 'string' } } } as const;

/** The example body of a 201 for a job whose result is downloaded from `/<download>/{id}`. */
export function jobCreatedExample(download: 'assemblies' | 'archives') {
  const api = 'http://127.0.0.1:8080/assembly-signing/v1.0';
  return {
    id: EXAMPLE_JOB_ID,
    comment: 'Release 1.4.0',
    links: {
      status: `${api}/assemblies/${EXAMPLE_JOB_ID}/status`,
      download: `${api}/${download}/${EXAMPLE_JOB_ID}`,
      delete: `${api}/assemblies/${EXAMPLE_JOB_ID}`,
    },
  };
}
