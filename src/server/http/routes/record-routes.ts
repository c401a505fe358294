// The signature record as a Merkle log: GET /record/checkpoint, /record/consistency and /record/public-key.
import type { FastifyInstance } from 'fastify';
import { formatVerifierKey } from '../../../record/checkpoint.js';
import { HttpProblem } from '../../problem.js';
import * as S from '../schemas.js';
import type { RouteContext } from './context.js';

export function registerRecordRoutes(api: FastifyInstance, ctx: Pick<RouteContext, 'recordLog'>): void {
  const recordLog = ctx.recordLog;
  api.get('/record/checkpoint', { schema: S.checkpointRoute }, async () => {
    await recordLog!.refresh();
    const size = recordLog!.size;
    return { checkpoint: await recordLog!.checkpoint(), size };
  });

  api.get<{ Querystring: { from: number; to: number } }>('/record/consistency', { schema: S.consistencyRoute }, async (request) => {
    const { from, to } = request.query;
    if (to > recordLog!.size) await recordLog!.refresh();
    if (from > to || to > recordLog!.size) {
      throw new HttpProblem(
        400,
        'Bad Request',
        `No consistency proof from ${from} to ${to} entries: the record holds ${recordLog!.size}, and from must not exceed to.`,
      );
    }
    return { from, to, proof: await recordLog!.consistency(from, to) };
  });

  api.get('/record/public-key', { schema: S.recordPublicKeyRoute }, async () => ({ publicKey: formatVerifierKey(recordLog!.key.verifier) }));
}
