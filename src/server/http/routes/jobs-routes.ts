// Signing jobs: POST /assemblies (an upload becomes a job), GET /assemblies (the organization's jobs) and
// GET /assemblies/:id/status (with a finished job's signature record entries and their proofs).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { acceptance } from '../../jobs/key-rotation.js';
import type { JobRecord } from '../../domain/job.js';
import type { JobRecordProof, RecordLog } from '../../record/record-checkpoint.js';
import { discardBody, UPLOAD_ENVELOPE_BYTES } from '../body-guard.js';
import { HttpProblem } from '../../problem.js';
import { receiveUpload, tooLarge } from '../receive-upload.js';
import { FILE_STATES } from '../../../core/file-states.js';
import { signatureRecordProof } from './record-routes.js';
import { EXAMPLE_CREATED_AT, EXAMPLE_JOB_ID, jobCreatedExample, jobId, jobLinks, problems } from './shared-schemas.js';
import { jobOf, linksOf, type RouteContext } from './context.js';

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

const uploadRoute = {
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

const listRoute = {
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

const statusRoute = {
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

export function registerJobRoutes(api: FastifyInstance, ctx: RouteContext): void {
  const { config, now, store, worker, memory, recordLog, idleMs } = ctx;
  const links = (request: Parameters<typeof linksOf>[1], id: string) => linksOf(ctx, request, id);

  api.post('/assemblies', { schema: uploadRoute }, async (request, reply) => {
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
      return reply
        .status(201)
        .header('idempotent-replayed', 'true')
        .send({ id: earlier.id, comment: earlier.comment, links: links(request, earlier.id) });
    }
    const pending = await store.reserve(org.id, limits.maxJobsPerOrganization);
    if (!pending) {
      throw new HttpProblem(
        409,
        'Job limit reached',
        `The organization keeps ${limits.maxJobsPerOrganization} jobs, the most it may keep. Delete finished jobs, then upload again.`,
      );
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

  api.get<{ Querystring: { offset?: number; limit?: number } }>('/assemblies', { schema: listRoute }, async (request) =>
    store.list(request.principal!.organization.id, request.query),
  );

  api.get<{ Params: { id: string } }>('/assemblies/:id/status', { schema: statusRoute }, async (request) => {
    const r = await jobOf(ctx, request);
    return {
      id: r.id,
      comment: r.comment,
      createdAt: r.createdAt,
      processingFinished: r.processingFinished,
      // Extension: the job's record entries, each with its inclusion proof in the checkpoint given with them.
      ...(r.processingFinished ? await recordProofOf(recordLog!, r.id, r.recordSeqs, request.log) : {}),
      assemblies: r.assemblies.map((a) => ({ fileName: a.fileName, fileProcessingState: a.fileProcessingState, messages: a.messages })),
    };
  });
}

/**
 * The Idempotency-Key of an upload: 1 to 128 characters of letters, digits and `._:-`; absent is undefined.
 * @throws HttpProblem 400 for a key of another shape
 */
function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined || !/^[A-Za-z0-9._:-]{1,128}$/.test(key))
    throw new HttpProblem(400, 'Bad Request', 'The Idempotency-Key header must be 1 to 128 letters, digits, dots, underscores, colons or hyphens.');
  return key;
}

/** A finished job's `signatureRecord` field, or nothing (no entries; a record that cannot be read is logged, not fatal to the status). */
async function recordProofOf(
  log: RecordLog,
  jobId: string,
  seqs: readonly number[] | undefined,
  logger: FastifyBaseLogger,
): Promise<{ signatureRecord?: JobRecordProof }> {
  try {
    const proof = await log.jobProof(jobId, seqs);
    return proof ? { signatureRecord: proof } : {};
  } catch (error) {
    logger.error({ job: jobId, err: { message: (error as Error).message } }, 'the signature record could not be read for the job status');
    return {};
  }
}
