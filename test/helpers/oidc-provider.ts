// A real OpenID Connect provider (the oidc-provider package) on 127.0.0.1 for the tests: JWT access tokens for
// one resource (the signing API), with the organization and roles as claims chosen per client (client
// credentials) or per account (authorization code with PKCE from the documentation page).
import { createServer, type Server } from 'node:http';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export const AUDIENCE = 'https://signing.test/assembly-signing';

/** Claims per client id (client credentials) or account id (interactive sign-in). */
const CLAIMS: Record<string, { org?: string; roles?: string[] }> = {
  ci: { org: 'sandbox', roles: ['User'] },
  short: { org: 'sandbox', roles: ['User'] },
  norole: { org: 'sandbox', roles: ['Reader'] },
  otherorg: { org: 'elsewhere', roles: ['User'] },
  alice: { org: 'sandbox', roles: ['User'] },
};

export interface TestIssuer {
  readonly issuer: string;
  /** A JWT access token for the API from the client credentials grant of `clientId`. */
  token(clientId: keyof typeof CLAIMS): Promise<string>;
  /** A JWT with these claims signed with the issuer's own key (what a misconfigured issuer might hand out). */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** Starts a provider; `redirectUris` are those of the public client `docs` (authorization code with PKCE). */
export async function startIssuer(redirectUris: string[] = ['http://127.0.0.1/unused']): Promise<TestIssuer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const secretClient = (id: string) => ({
    client_id: id,
    client_secret: `${id}-secret-of-the-test`,
    grant_types: ['client_credentials'],
    redirect_uris: [],
    response_types: [],
    scope: 'sign',
  });
  // Keys of its own, so that a token of another test issuer fails on its signature, not only on its iss claim.
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      ...['ci', 'short', 'norole', 'otherorg'].map(secretClient),
      {
        client_id: 'docs',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: redirectUris,
        scope: 'openid sign',
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'sign'],
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => AUDIENCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, _resource, client) => ({
          scope: 'sign',
          audience: AUDIENCE,
          accessTokenFormat: 'jwt',
          accessTokenTTL: client.clientId === 'short' ? 1 : 300,
        }),
      },
    },
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    extraTokenClaims: (_ctx, token) => {
      const t = token as { clientId?: string; accountId?: string };
      const who = t.accountId ?? t.clientId ?? '';
      return { ...(CLAIMS[who] ?? {}), ...(t.accountId ? {} : { sub: who }) };
    },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    sign: (claims) => new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt' }).sign(privateKey),
    token: async (clientId) => {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${clientId}:${clientId}-secret-of-the-test`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'sign', resource: AUDIENCE }),
      });
      const body = (await response.json()) as { access_token?: string; error_description?: string };
      if (!body.access_token) throw new Error(`the test issuer gave no token: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
