// The API's documentation: the OpenAPI document made from the route schemas (GET <api>/openapi.json, left out of
// itself) and the page that shows it (/docs), never inside another origin's frame. Registered before the routes it
// describes: the document holds the routes registered after it.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { docsOAuth } from '../../identity/oidc.js';
import { uploadBody } from './jobs-routes.js';
import { problemSchema } from './shared-schemas.js';
import { archiveBody } from './archives-routes.js';

/** The documentation's OAuth sign-in (docsOAuth), when an OpenID Connect issuer and a public client are configured. */
type DocsOAuth = Awaited<ReturnType<typeof docsOAuth>>;

export async function registerDocs(app: FastifyInstance, apiPrefix: string, oauth: DocsOAuth): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Assembly signing service (signgate reference implementation)',
        version: '1.0',
        description: 'Upload delay-signed .NET assemblies, follow the job, download the signed files. Authorize with a personal access token.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Personal access token' }, ...(oauth ? { oauth2: oauth.scheme } : {}) },
      },
      security: [{ bearerAuth: [] }, ...(oauth ? [{ oauth2: oauth.scopes }] : [])],
      tags: [
        { name: 'licenses', description: "The organization's license options: which `<optionId>_public.snk` it may delay-sign with" },
        { name: 'assemblies', description: 'Signing jobs: upload, status, result package, deletion' },
        { name: 'archives', description: 'The archive path: one ZIP of the project in, one ZIP with every file and a log per file back' },
        { name: 'record', description: "The signature record as a Merkle log: signed checkpoints, consistency proofs, the record key's public half" },
      ],
    },
    // The upload body is read as a multipart stream, so fastify does not validate it; describe it for the docs only.
    transform: ({ schema, url, route }) => {
      const out = { ...(schema as object) } as Record<string, unknown>;
      if (route.method === 'POST' && url === `${apiPrefix}/assemblies`) out.body = uploadBody;
      if (route.method === 'POST' && url === `${apiPrefix}/archives`) out.body = archiveBody;
      if (url === `${apiPrefix}/openapi.json`) out.hide = true;
      return { schema: out, url };
    },
    // Shared schemas (problemSchema) appear in components.schemas under their $id, the name generated clients use.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  app.addSchema(problemSchema);
  // validatorUrl null: the page must not call the public validator (no network beyond this service).
  // The page builds its document's address from its own, query included: /docs/?x would load /docs/?x/./json.
  // A query on the page itself (not on the OAuth redirect page, which needs its own) is dropped by a redirect.
  app.addHook('onRequest', async (request, reply) => {
    const [path, query] = request.url.split('?', 2);
    if (query !== undefined && (path === '/docs' || path === '/docs/')) return reply.redirect('/docs/', 302);
  });
  // The documentation page and its OAuth redirect page are never shown inside another origin's frame.
  app.addHook('onSend', async (request, reply) => {
    if (request.url === '/docs' || request.url.startsWith('/docs/') || request.url.startsWith('/docs?')) {
      reply.header('x-frame-options', 'DENY');
      if (!reply.getHeader('content-security-policy')) reply.header('content-security-policy', "frame-ancestors 'none'");
    }
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: false, tryItOutEnabled: true, validatorUrl: null },
    // The top bar's box for exploring another document's URL serves no user of this one, and on a phone it is
    // narrower than the URL it shows: left out.
    theme: { css: [{ filename: 'signgate.css', content: '.swagger-ui .topbar .download-url-wrapper { display: none; }' }] },
    ...(oauth ? { initOAuth: oauth.initOAuth } : {}),
  });
  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
