// Who calls the API: a personal access token (domain/tokens.ts, kept by a backend) or an OpenID Connect bearer token (oidc.ts), checked
// before any route of the API runs, then counted against the caller's rate limit.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { looksLikeJwt, OidcAuthenticator } from '../identity/oidc.js';
import { type TokenKeeper } from '../ports.js';
import { bearerToken, tokenIdOf } from '../domain/tokens.js';
import { OPERATOR_ROLE, USER_ROLE, type ServerConfig } from '../server-config.js';
import { HttpProblem } from '../problem.js';

export interface AuthenticationOptions {
  readonly config: () => ServerConfig;
  readonly now: () => Date;
  readonly tokens: TokenKeeper;
  /** The per-token rate limit (registerRateLimits), once the token is known to be good. */
  readonly limitToken: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/**
 * The API's onRequest hook: sets `request.principal`, or refuses the request.
 * @throws HttpProblem 401 for a missing, unknown, revoked or expired token; 403 for a user without the role
 */
export function authenticator(options: AuthenticationOptions): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const { config, now, tokens, limitToken } = options;
  const oidc = new OidcAuthenticator();
  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    await identify(request);
    // Counted per token once the token is known to be good (junk is counted by address alone).
    await limitToken(request, reply);
  };
  const identify = async (request: FastifyRequest) => {
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new HttpProblem(401, 'Unauthorized', 'Send a personal access token: Authorization: Bearer <token>.');
    // A JWT is an OAuth 2.0 access token from the configured OpenID Connect issuer (oidc.ts).
    if (config().oidc && looksLikeJwt(token)) {
      request.principal = { ...(await oidc.principal(token, config(), now())), tokenId: null };
      return;
    }
    const stored = await tokens.find(token);
    if (!stored && tokens.holdsNone?.()) {
      // Said without the folder's path (the caller is not known yet); `signgate serve` prints it at start.
      throw new HttpProblem(
        401,
        'Unauthorized',
        'The access token is not known. This service holds no tokens at all in its data folder, so the token was made for another one: ' +
          'create a token with `signgate serve token create --data-dir <folder>` naming the folder the service runs with ' +
          '(`signgate serve` prints it at start).',
      );
    }
    if (!stored) throw new HttpProblem(401, 'Unauthorized', 'The access token is not known. Create a new token.');
    if (stored.revokedAt) throw new HttpProblem(401, 'Unauthorized', `The access token was revoked on ${stored.revokedAt}. Create a new token.`);
    if (Date.parse(stored.expiresAt) <= now().getTime()) {
      throw new HttpProblem(401, 'Unauthorized', `The access token expired on ${stored.expiresAt}. Tokens cannot be prolonged: create a new one.`);
    }
    const organization = config().organizations.get(stored.organization);
    const roles = organization?.users.get(stored.user);
    if (!organization || !roles?.includes(USER_ROLE)) {
      throw new HttpProblem(403, 'Forbidden', `The user ${stored.user} does not hold the role ${USER_ROLE} on the signing application.`);
    }
    request.principal = { organization, user: stored.user, tokenId: tokenIdOf(stored.hash) };
  };
  return authenticate;
}

/**
 * Whether a request comes from the service's operator: a personal access token, known, neither revoked nor expired,
 * of a user with the role Operator in its organization (for /readyz's details). Never throws: anything else is no.
 */
export function operatorCheck(options: Pick<AuthenticationOptions, 'config' | 'now' | 'tokens'>): (request: FastifyRequest) => Promise<boolean> {
  const { config, now, tokens } = options;
  return async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (!token || looksLikeJwt(token)) return false;
    try {
      const stored = await tokens.find(token);
      if (!stored || stored.revokedAt || Date.parse(stored.expiresAt) <= now().getTime()) return false;
      return config().organizations.get(stored.organization)?.users.get(stored.user)?.includes(OPERATOR_ROLE) ?? false;
    } catch {
      return false;
    }
  };
}
