// The organization's license options: GET /licenses and GET /licenses/:optionId/public-key.
import type { FastifyInstance } from 'fastify';
import { HttpProblem } from '../../problem.js';
import { problemResponse, problems } from './shared-schemas.js';

const licensesRoute = {
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

const publicKeyRoute = {
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

export function registerLicenseRoutes(api: FastifyInstance): void {
  // The current key of each option (after a key rotation, the key new jobs are signed with).
  api.get('/licenses', { schema: licensesRoute }, async (request) =>
    request.principal!.organization.licenses.map((l) => ({ optionId: l.optionId, publicKeyToken: l.token })),
  );

  api.get<{ Params: { optionId: number } }>('/licenses/:optionId/public-key', { schema: publicKeyRoute }, async (request, reply) => {
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
