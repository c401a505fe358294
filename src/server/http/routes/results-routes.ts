// A job's result package and the job's end: GET /assemblies/:id (the signed files as a ZIP) and DELETE /assemblies/:id.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_RESULT_FILE } from '../../domain/job-folder.js';
import { HttpProblem } from '../../problem.js';
import { jobId, problems } from './shared-schemas.js';
import { jobOf, type RouteContext } from './context.js';

const downloadRoute = {
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

const deleteRoute = {
  operationId: 'deleteJob',
  tags: ['assemblies'],
  summary: 'Delete a job and everything stored for it',
  params: jobId,
  response: { 204: { description: 'Deleted', type: 'null' }, ...problems(401, 403, 404) },
} as const;

export function registerResultRoutes(api: FastifyInstance, ctx: RouteContext): void {
  const { store, worker, memory } = ctx;
  api.get<{ Params: { id: string } }>('/assemblies/:id', { schema: downloadRoute }, async (request, reply) => {
    const r = await jobOf(ctx, request);
    if (!r.processingFinished)
      throw new HttpProblem(409, 'Not ready', `Job ${r.id} is still being processed; poll its status until processingFinished is true.`);
    // The package as it was written, when this process still has it; else from the store.
    const kept = memory?.package(r.organization, r.id, r.resultFile ?? DEFAULT_RESULT_FILE);
    if (kept) reply.header('content-length', kept.bytes);
    const result = kept ? Readable.from(kept.chunks, { objectMode: false }) : await store.files.openResult(r);
    return reply.type('application/zip').header('content-disposition', `attachment; filename="${r.id}.zip"`).send(result);
  });

  api.delete<{ Params: { id: string } }>('/assemblies/:id', { schema: deleteRoute }, async (request, reply) => {
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
}
