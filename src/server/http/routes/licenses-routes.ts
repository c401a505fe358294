// The organization's license options: GET /licenses and GET /licenses/:optionId/public-key.
import type { FastifyInstance } from 'fastify';
import { HttpProblem } from '../../problem.js';
import * as S from '../schemas.js';

export function registerLicenseRoutes(api: FastifyInstance): void {
  // The current key of each option (after a key rotation, the key new jobs are signed with).
  api.get('/licenses', { schema: S.licensesRoute }, async (request) =>
    request.principal!.organization.licenses.map((l) => ({ optionId: l.optionId, publicKeyToken: l.token })),
  );

  api.get<{ Params: { optionId: number } }>('/licenses/:optionId/public-key', { schema: S.publicKeyRoute }, async (request, reply) => {
    const org = request.principal!.organization;
    const license = org.licenses.find((l) => l.optionId === request.params.optionId);
    if (!license) {
      const held = org.licenses.length ? `it holds ${org.licenses.map((l) => l.optionId).join(', ')}` : 'it holds none';
      throw new HttpProblem(404, 'Not Found', `The organization ${org.id} holds no license option ${request.params.optionId}; ${held}.`);
    }
    return reply
      .type('application/octet-stream')
      .header('content-disposition', `attachment; filename="${license.optionId}_public.snk"`)
      .send(Buffer.from(license.key.publicKey.blob));
  });
}
