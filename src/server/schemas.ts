// Route schemas: fastify validates and serializes with them, and the OpenAPI document is generated from them.

export const problem = {
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', properties: { fileName: { type: 'string' }, detail: { type: 'string' } } } },
  },
} as const;

// Every route may answer 429 (rate-limit.ts).
const problems = (...codes: number[]) =>
  Object.fromEntries([...codes, 429].map((c) => [c, { description: DESCRIPTIONS[c], content: { 'application/problem+json': { schema: problem } } }]));

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

const jobId = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'Job id (UUID)' } } } as const;
const message = {
  type: 'object',
  required: ['dateTime', 'messageType', 'message'],
  properties: { dateTime: { type: 'string', format: 'date-time' }, messageType: { type: 'string', enum: ['Info', 'Warning', 'Error'] }, message: { type: 'string' } },
} as const;

export const licensesRoute = {
  operationId: 'listLicenses',
  tags: ['licenses'],
  summary: "The license options of the caller's organization",
  description: 'Each optionId names the key file `<optionId>_public.snk` the organization may delay-sign with. An empty list means nothing can be signed.',
  response: {
    200: { description: 'License entries', type: 'array', items: { type: 'object', required: ['optionId'], properties: { optionId: { type: 'integer' } } } },
    ...problems(401, 403),
  },
} as const;

export const uploadBody = {
  type: 'object',
  description: 'One file part per assembly (files[0], files[1], …); the part filename is the path relative to the root directory with /.',
  properties: {
    'files[0]': { type: 'string', format: 'binary' },
    'files[1]': { type: 'string', format: 'binary' },
    comment: { type: 'string', description: 'Optional comment shown with the job' },
  },
} as const;

export const uploadRoute = {
  operationId: 'uploadAssemblies',
  tags: ['assemblies'],
  summary: 'Upload delay-signed assemblies; signing is attempted for every file',
  consumes: ['multipart/form-data'],
  response: {
    201: {
      description: 'The job was created; poll its status',
      type: 'object',
      required: ['id', 'links'],
      properties: {
        id: { type: 'string' },
        comment: { type: ['string', 'null'] },
        links: { type: 'object', properties: { status: { type: 'string' }, download: { type: 'string' }, delete: { type: 'string' } } },
      },
    },
    ...problems(400, 401, 403, 408, 409, 413),
  },
} as const;

export const listRoute = {
  operationId: 'listJobs',
  tags: ['assemblies'],
  summary: "The organization's kept jobs",
  description: 'Without parameters every kept job, as the vendor\'s contract says; `offset` and `limit` page through them (an addition of this service).',
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
        type: 'object',
        required: ['id', 'createdAt', 'processingFinished', 'fileCount'],
        properties: { id: { type: 'string' }, comment: { type: ['string', 'null'] }, createdAt: { type: 'string', format: 'date-time' }, processingFinished: { type: 'boolean' }, fileCount: { type: 'integer' } },
      },
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
      type: 'object',
      required: ['id', 'createdAt', 'processingFinished', 'assemblies'],
      properties: {
        id: { type: 'string' },
        comment: { type: ['string', 'null'] },
        createdAt: { type: 'string', format: 'date-time' },
        processingFinished: { type: 'boolean' },
        assemblies: {
          type: 'array',
          items: {
            type: 'object',
            required: ['fileName', 'fileProcessingState', 'messages'],
            properties: { fileName: { type: 'string' }, fileProcessingState: { type: 'string', enum: ['Pending', 'Processing', 'Signed', 'Error'] }, messages: { type: 'array', items: message } },
          },
        },
      },
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
