// Route schemas: fastify validates and serializes with them, and the OpenAPI document is generated from them.

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
const problems = (...codes: number[]) =>
  Object.fromEntries(
    [...codes, 429].map((c) => [
      c,
      { description: DESCRIPTIONS[c], content: { 'application/problem+json': { schema: { $ref: 'Problem#' }, example: PROBLEM_EXAMPLES[c] } } },
    ]),
  );

// The signature record's routes and the status's extension field: record-schemas.ts.
import { FILE_STATES } from '../../core/file-states.js';
import { checkpointRouteBase, consistencyRouteBase, recordPublicKeyRouteBase, signatureRecordProof } from './record-schemas.js';

export const EXAMPLE_JOB_ID = '3f1c2a9e-8b7d-4c55-9a0e-2d6f4b1e7c30';
const EXAMPLE_CREATED_AT = '2026-11-23T09:41:07.512Z';

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

const jobId = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'Job id (UUID)' } } } as const;
const message = {
  title: 'JobMessage',
  type: 'object',
  required: ['dateTime', 'messageType', 'message'],
  properties: {
    dateTime: { type: 'string', format: 'date-time' },
    messageType: { title: 'MessageType', type: 'string', enum: ['Info', 'Warning', 'Error'] },
    message: { type: 'string' },
  },
} as const;

export const licensesRoute = {
  operationId: 'listLicenses',
  tags: ['licenses'],
  summary: "The license options of the caller's organization",
  description:
    "Each optionId names the key file `<optionId>_public.snk` the organization may delay-sign with. An empty list means nothing can be signed. `publicKeyToken` is an extension of this service (the vendor's service does not send it): a client compares its key files with it before it uploads.",
  response: {
    200: {
      description: 'License entries',
      type: 'array',
      items: {
        title: 'License',
        type: 'object',
        required: ['optionId'],
        properties: {
          optionId: { type: 'integer' },
          publicKeyToken: {
            type: 'string',
            pattern: '^[0-9a-f]{16}$',
            description:
              "Extension of this service: the public key token of the option's current key (16 lower-case hex digits), the token of `<optionId>_public.snk`",
          },
        },
      },
      examples: [[{ optionId: 12345, publicKeyToken: '5d004f218731cd20' }]],
    },
    ...problems(401, 403),
  },
} as const;

const optionId = {
  type: 'object',
  required: ['optionId'],
  properties: { optionId: { type: 'integer', minimum: 0, description: 'License option id' } },
} as const;

export const publicKeyRoute = {
  operationId: 'getOptionPublicKey',
  tags: ['licenses'],
  summary: "The option's public key file `<optionId>_public.snk` (an extension of this service)",
  description:
    "The public key blob of the option's current key, as `sn -p` writes it: the file add-in developers delay-sign with. Its public key token is the `publicKeyToken` of GET /licenses. 404 for an option the organization does not hold.",
  params: optionId,
  produces: ['application/octet-stream'],
  response: {
    200: {
      description: 'The public key file (.snk public key blob)',
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    },
    ...problems(401, 403),
    404: problemResponse(404, 'The organization holds no such license option', {
      type: 'about:blank',
      title: 'Not Found',
      status: 404,
      detail: 'The organization contoso holds no license option 99999; it holds 12345.',
    }),
  },
} as const;

export const uploadBody = {
  type: 'object',
  description: 'One file part per assembly (files[0], files[1], …); the part filename is the path relative to the root directory with /.',
  required: ['files[0]'],
  properties: {
    'files[0]': { type: 'string', format: 'binary' },
    'files[1]': { type: 'string', format: 'binary' },
    comment: { type: 'string', description: 'Optional comment shown with the job' },
  },
  // A multipart body shown as its parts: each file part carries the file's bytes under its relative path.
  examples: [{ 'files[0]': 'Contoso.Addin.dll', 'files[1]': 'Addins/Contoso.Addin.Helpers.dll', comment: 'Release 1.4.0' }],
} as const;

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

export const uploadRoute = {
  operationId: 'uploadAssemblies',
  tags: ['assemblies'],
  summary: 'Upload delay-signed assemblies; signing is attempted for every file',
  consumes: ['multipart/form-data'],
  response: {
    201: {
      description: 'The job was created; poll its status',
      title: 'JobCreated',
      type: 'object',
      required: ['id', 'links'],
      properties: {
        id: { type: 'string' },
        comment: { type: ['string', 'null'] },
        links: { title: 'JobLinks', ...jobLinks },
      },
      examples: [jobCreatedExample('assemblies')],
    },
    ...problems(400, 401, 403, 408, 409, 413),
  },
} as const;

export const listRoute = {
  operationId: 'listJobs',
  tags: ['assemblies'],
  summary: "The organization's kept jobs",
  description: "Without parameters every kept job, as the vendor's contract says; `offset` and `limit` page through them (an addition of this service).",
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      offset: { type: 'integer', minimum: 0, description: 'Jobs to skip, oldest first (default 0)' },
      limit: { type: 'integer', minimum: 1, maximum: 10000, description: 'Most jobs to return (default all)' },
    },
  },
  response: {
    200: {
      description: 'Jobs, oldest first',
      type: 'array',
      items: {
        title: 'JobSummary',
        type: 'object',
        required: ['id', 'createdAt', 'processingFinished', 'fileCount'],
        properties: {
          id: { type: 'string' },
          comment: { type: ['string', 'null'] },
          createdAt: { type: 'string', format: 'date-time' },
          processingFinished: { type: 'boolean' },
          fileCount: { type: 'integer' },
        },
      },
      examples: [[{ id: EXAMPLE_JOB_ID, comment: 'Release 1.4.0', createdAt: EXAMPLE_CREATED_AT, processingFinished: true, fileCount: 2 }]],
    },
    ...problems(401, 403),
  },
} as const;

export const statusRoute = {
  operationId: 'getJobStatus',
  tags: ['assemblies'],
  summary: 'Status of one job',
  params: jobId,
  response: {
    200: {
      description: 'processingFinished stays false until every file has a final state (Signed or Error)',
      title: 'JobStatus',
      type: 'object',
      required: ['id', 'createdAt', 'processingFinished', 'assemblies'],
      properties: {
        id: { type: 'string' },
        comment: { type: ['string', 'null'] },
        createdAt: { type: 'string', format: 'date-time' },
        processingFinished: { type: 'boolean' },
        signatureRecord: signatureRecordProof,
        assemblies: {
          type: 'array',
          items: {
            title: 'AssemblyStatus',
            type: 'object',
            required: ['fileName', 'fileProcessingState', 'messages'],
            properties: {
              fileName: { type: 'string' },
              fileProcessingState: { title: 'FileProcessingState', type: 'string', enum: [...FILE_STATES] },
              messages: { type: 'array', items: message },
            },
          },
        },
      },
      examples: [
        {
          id: EXAMPLE_JOB_ID,
          comment: 'Release 1.4.0',
          createdAt: EXAMPLE_CREATED_AT,
          processingFinished: true,
          assemblies: [
            {
              fileName: 'Contoso.Addin.dll',
              fileProcessingState: 'Signed',
              messages: [
                {
                  dateTime: '2026-11-23T09:41:08.020Z',
                  messageType: 'Info',
                  message: 'Signed with option 12345 (Contoso.Addin 1.4.0.0, key token 0c3a5c8f71d2e9b4).',
                },
              ],
            },
            { fileName: 'Addins/Contoso.Addin.Helpers.dll', fileProcessingState: 'Signed', messages: [] },
          ],
        },
      ],
    },
    ...problems(401, 403, 404),
  },
} as const;

export const downloadRoute = {
  operationId: 'downloadJobResult',
  tags: ['assemblies'],
  summary: 'Download the result package (ZIP): every file at its path, signed where signing succeeded, plus signing-log.txt',
  params: jobId,
  produces: ['application/zip'],
  response: {
    200: { description: 'The result package', content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } } },
    ...problems(401, 403, 404, 409),
  },
} as const;

export const deleteRoute = {
  operationId: 'deleteJob',
  tags: ['assemblies'],
  summary: 'Delete a job and everything stored for it',
  params: jobId,
  response: { 204: { description: 'Deleted', type: 'null' }, ...problems(401, 403, 404) },
} as const;

export const checkpointRoute = { ...checkpointRouteBase, response: { ...checkpointRouteBase.response, ...problems(401, 403) } } as const;
export const consistencyRoute = { ...consistencyRouteBase, response: { ...consistencyRouteBase.response, ...problems(400, 401, 403) } } as const;
export const recordPublicKeyRoute = { ...recordPublicKeyRouteBase, response: { ...recordPublicKeyRouteBase.response, ...problems(401, 403) } } as const;
