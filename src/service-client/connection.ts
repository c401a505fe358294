// The one path of every request a client makes: the base URL checked once (HTTPS but for loopback, no user in it),
// the token remembered (and masked) once, JSON answers read within a bound and checked by their reader (answers.ts).
import { ServiceError } from '../core/errors.js';
import { maskSecrets, rememberSecret, urlForMessage } from '../core/secrets.js';
import type { AnswerReader } from './answers.js';
import { openTransport, type SendOptions, type ServiceClientOptions } from './http.js';
import { MAX_JSON_BODY_BYTES, readBodyCapped } from './service-errors.js';
import { cleanServiceText } from './text.js';

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * HTTPS is required except for loopback, so a token never crosses a network in clear text; a user or password
 * in the URL is refused (the service takes a bearer token) and never shown.
 * @throws ServiceError SG_ERR_HTTP_INSECURE
 */
export function assertSafeBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw insecureBaseUrl(urlForMessage(baseUrl), 'is not a URL (expected https://host/<service-name>/v1.0)');
  }
  if (!url.host) throw insecureBaseUrl(urlForMessage(baseUrl), 'has no host (expected https://host/<service-name>/v1.0)');
  if (url.username || url.password) {
    throw insecureBaseUrl(
      urlForMessage(baseUrl),
      'has a user or password part (not shown); the signing service takes a bearer token, not credentials in the URL: remove "user:password@" and pass the token with SIGNGATE_ACCESS_TOKEN or --access-token-file',
    );
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return url;
  throw insecureBaseUrl(url.origin, 'is not HTTPS; plain HTTP is allowed only to this machine (localhost)');
}

/** SG_ERR_HTTP_INSECURE for a base URL, `shown` without its user and password. */
function insecureBaseUrl(shown: string, what: string): ServiceError {
  return new ServiceError('SG_ERR_HTTP_INSECURE', `the base URL ${shown} ${what}`, { method: '', url: shown });
}

/** Joins the base URL and an API path. */
export function apiUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

function notJson(status: number, request: { method: string; url: string }, start: string, cause: unknown): ServiceError {
  return new ServiceError(
    'SG_ERR_HTTP_BAD_RESPONSE',
    `${request.method} ${request.url} answered ${status} with a body that is not JSON${start ? ` (it starts "${start}")` : ''}`,
    { ...request, status },
    { cause },
  );
}

/** Parses a JSON answer of at most `maxBytes` (MAX_JSON_BODY_BYTES unless a smaller bound is known). */
export async function readJson(response: Response, request: { method: string; url: string }, maxBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
  const bytes = await readBodyCapped(response, maxBytes, request);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (cause) {
    throw notJson(response.status, request, cleanServiceText(new TextDecoder().decode(bytes.subarray(0, 200)), 80), cause);
  }
}

/** The one path of every request to the service, over a base URL checked once and a token remembered once. */
export interface ServiceConnection {
  readonly baseUrl: string;
  /** An API path joined to the base URL. */
  url(path: string): string;
  /**
   * A link from the service, when it is on the base URL's origin; foreign links are ignored, and so are links that
   * carry a secret (a gateway's `?access_token=…`): they would be kept in the job ledger.
   */
  ownLink(link: string | undefined): string | undefined;
  /** One request with the retry policy (see openTransport): the successful response, its body unread. */
  exchange(method: string, url: string, opts: SendOptions): Promise<Response>;
  /** A GET of at most `maxBytes`, the bytes as the service sent them. */
  bytes(url: string, maxBytes: number, accept: string): Promise<Uint8Array>;
  /**
   * A request whose JSON answer, of at most `maxBytes` (MAX_JSON_BODY_BYTES by default), `read` checks and
   * normalises (answers.ts); an idempotent GET unless `opts` says otherwise.
   */
  json<T>(method: string, url: string, read: AnswerReader<T>, opts?: JsonRequestOptions): Promise<T>;
}

export interface JsonRequestOptions extends Partial<SendOptions> {
  readonly maxBytes?: number | undefined;
}

/**
 * Checks the base URL (see assertSafeBaseUrl) and remembers the token (masked wherever text leaves the process),
 * once, and gives the connection every request of a client goes through.
 * @throws ServiceError SG_ERR_HTTP_INSECURE
 */
export function openConnection(options: ServiceClientOptions): ServiceConnection {
  const base = assertSafeBaseUrl(options.baseUrl);
  // The token is masked wherever text leaves the process, from before the first request.
  rememberSecret(options.accessToken);
  const send = openTransport(options);
  const connection: ServiceConnection = {
    baseUrl: options.baseUrl,
    url: (path) => apiUrl(options.baseUrl, path),
    ownLink(link) {
      if (!link || maskSecrets(link) !== link) return undefined;
      try {
        const u = new URL(link, options.baseUrl);
        return u.origin === base.origin ? u.href : undefined;
      } catch {
        return undefined;
      }
    },
    exchange: (method, url, opts) => send(method, url, opts),
    async bytes(url, maxBytes, accept) {
      const response = await send('GET', url, { idempotent: true, headers: { accept } });
      return readBodyCapped(response, maxBytes, { method: 'GET', url });
    },
    async json(method, url, read, opts = {}) {
      const { maxBytes, ...sendOptions } = opts;
      const response = await send(method, url, { idempotent: true, headers: { accept: 'application/json' }, ...sendOptions });
      return read(await readJson(response, { method, url }, maxBytes), { method, url });
    },
  };
  return connection;
}
