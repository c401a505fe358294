// OAuth 2.0 bearer access tokens (JWT) from a configured OpenID Connect issuer, beside personal access tokens:
// validated with jose against the keys the issuer publishes (jwks_uri from its discovery document), with the
// issuer and audience checked; organization, user and roles come from configured claims.
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from 'jose';
import { HttpProblem } from '../problem.js';
import { USER_ROLE, type OidcSettings, type Organization, type ServerConfig } from '../server-config.js';

/** Three base64url parts: a JWT, not a personal access token (those are one opaque string). */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

export interface IssuerMetadata {
  readonly issuer: string;
  readonly jwks_uri: string;
  readonly authorization_endpoint?: string;
  readonly token_endpoint?: string;
}

/** Reads the issuer's discovery document; its `issuer` must be the configured one. */
async function discoverIssuer(issuer: string): Promise<IssuerMetadata> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const response = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const metadata = (await response.json()) as IssuerMetadata;
  if (metadata.issuer !== issuer || typeof metadata.jwks_uri !== 'string')
    throw new Error(`${url} describes the issuer ${JSON.stringify(metadata.issuer)}, not ${JSON.stringify(issuer)}`);
  return metadata;
}

const unauthorized = (detail: string) => new HttpProblem(401, 'Unauthorized', detail);

/**
 * Verifies bearer JWTs for the issuer the configuration names (re-read per request; the issuer's keys are fetched
 * once per issuer and refreshed by jose when a token names an unknown key).
 */
export class OidcAuthenticator {
  private readonly keySets = new Map<string, Promise<ReturnType<typeof createRemoteJWKSet>>>();
  /** A failed discovery, per issuer: not tried again before `until`; the wait doubles up to a minute. */
  private readonly failures = new Map<string, { until: number; waitMs: number; error: Error }>();

  private keys(issuer: string): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const failed = this.failures.get(issuer);
    // While the issuer fails, tokens are refused from the remembered failure: junk tokens never turn into
    // traffic towards the issuer.
    if (failed && Date.now() < failed.until) return Promise.reject(failed.error);
    let keys = this.keySets.get(issuer);
    if (!keys) {
      keys = discoverIssuer(issuer).then((m) => createRemoteJWKSet(new URL(m.jwks_uri)));
      keys.then(
        () => this.failures.delete(issuer),
        (error: Error) => {
          this.keySets.delete(issuer);
          const waitMs = Math.min(60_000, failed ? failed.waitMs * 2 : 2_000);
          this.failures.set(issuer, { until: Date.now() + waitMs, waitMs, error });
        },
      );
      this.keySets.set(issuer, keys);
    }
    return keys;
  }

  /** The organization and user a JWT speaks for; 401 for a token that does not verify, 403 without the role or organization. */
  async principal(token: string, config: ServerConfig, now: Date): Promise<{ organization: Organization; user: string }> {
    const oidc = config.oidc;
    if (!oidc) throw unauthorized('The access token is not known. Create a new token.');
    let payload: JWTPayload;
    try {
      const keys = await this.keys(oidc.issuer);
      // `exp` is required: a token without one would never expire.
      ({ payload } = await jwtVerify(token, keys, { issuer: oidc.issuer, audience: oidc.audience, currentDate: now, requiredClaims: ['exp'] }));
    } catch (error) {
      if (error instanceof errors.JWTExpired)
        throw unauthorized(`The access token expired at ${new Date(Number(error.payload.exp) * 1000).toISOString()}. Sign in again.`);
      if (error instanceof errors.JWTClaimValidationFailed && error.reason === 'missing')
        throw unauthorized(`The access token has no "${error.claim}" claim; this service accepts only tokens that expire.`);
      if (error instanceof errors.JWTClaimValidationFailed)
        throw unauthorized(`The access token's "${error.claim}" claim is not what this service accepts (issuer ${oidc.issuer}, audience ${oidc.audience}).`);
      if (error instanceof errors.JOSEError) throw unauthorized(`The access token was not issued by ${oidc.issuer} (${error.code}).`);
      throw unauthorized(`The keys of ${oidc.issuer} could not be read (${(error as Error).message}); try again later.`);
    }
    const left = Number(payload.exp) - now.getTime() / 1000;
    if (left > oidc.maxTokenLifetimeS)
      throw unauthorized(
        `The access token is valid for ${Math.round(left)} s more; this service accepts tokens that expire within ${oidc.maxTokenLifetimeS} s (oidc.maxTokenLifetime). Ask the issuer for a shorter-lived token.`,
      );
    const user = payload[oidc.userClaim];
    const orgId = payload[oidc.organizationClaim];
    const raw = payload[oidc.rolesClaim];
    const roles = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(' ') : [];
    if (typeof user !== 'string' || !user) throw unauthorized(`The access token has no "${oidc.userClaim}" claim naming the user.`);
    if (!roles.includes(USER_ROLE))
      throw new HttpProblem(403, 'Forbidden', `The user ${user} does not hold the role ${USER_ROLE} on the signing application (claim "${oidc.rolesClaim}").`);
    const organization = typeof orgId === 'string' ? config.organizations.get(orgId) : undefined;
    if (!organization)
      throw new HttpProblem(
        403,
        'Forbidden',
        `The access token is for the organization ${JSON.stringify(orgId ?? null)} (claim "${oidc.organizationClaim}"), which this service does not serve.`,
      );
    return { organization, user };
  }
}

/** What a page needs to sign in at the issuer itself (authorization code with PKCE): the /exchange page uses it. */
export interface InteractiveSignIn {
  readonly issuer: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly authorizationEndpoint: string;
  readonly tokenEndpoint: string;
}

/** The OpenAPI oauth2 security scheme with the authorization-code flow. */
export interface OAuthScheme {
  readonly type: 'oauth2';
  readonly description: string;
  readonly flows: { readonly authorizationCode: { readonly authorizationUrl: string; readonly tokenUrl: string; readonly scopes: Record<string, string> } };
}

/**
 * What the documentation page needs for its Authorize button: the OpenAPI oauth2 scheme (authorization code) with
 * the issuer's endpoints, and swagger-ui's initOAuth (the public client, PKCE). Undefined without a configured
 * client, or when the issuer cannot be reached at start (logged; bearer tokens are still accepted).
 */
export async function docsOAuth(
  oidc: OidcSettings | undefined,
  log: { warn: (o: object, m: string) => void },
): Promise<{ scheme: OAuthScheme; scopes: string[]; initOAuth: Record<string, unknown>; signIn: InteractiveSignIn } | undefined> {
  if (!oidc?.clientId) return undefined;
  let metadata: IssuerMetadata;
  try {
    metadata = await discoverIssuer(oidc.issuer);
  } catch (error) {
    log.warn(
      { issuer: oidc.issuer, err: { message: (error as Error).message } },
      'the OpenID Connect issuer cannot be reached: the documentation page offers personal access tokens only',
    );
    return undefined;
  }
  if (!metadata.authorization_endpoint || !metadata.token_endpoint) return undefined;
  const scopes = [...oidc.scopes];
  return {
    scheme: {
      type: 'oauth2' as const,
      description: `Sign in at ${oidc.issuer} (authorization code with PKCE)`,
      flows: {
        authorizationCode: {
          authorizationUrl: metadata.authorization_endpoint,
          tokenUrl: metadata.token_endpoint,
          scopes: Object.fromEntries(scopes.map((s) => [s, s])),
        },
      },
    },
    scopes,
    initOAuth: { clientId: oidc.clientId, usePkceWithAuthorizationCodeGrant: true, scopes },
    signIn: {
      issuer: oidc.issuer,
      clientId: oidc.clientId,
      scopes,
      authorizationEndpoint: metadata.authorization_endpoint,
      tokenEndpoint: metadata.token_endpoint,
    },
  };
}
