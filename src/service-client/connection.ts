// The one path of every request a client makes: the base URL checked once, the token remembered (and masked) once,
// JSON answers read within a bound and checked by their reader (answers.ts).
import { maskSecrets, rememberSecret } from '../core/secrets.js';
import type { AnswerReader } from './answers.js';
import { apiUrl, assertSafeBaseUrl, send, type SendOptions, type ServiceClientOptions } from './http.js';
import { readBodyCapped, readJson } from './service-errors.js';

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
  /** One request with the retry policy (see send): the successful response, its body unread. */
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
    exchange: (method, url, opts) => send(options, method, url, opts),
    async bytes(url, maxBytes, accept) {
      const response = await send(options, 'GET', url, { idempotent: true, headers: { accept } });
      return readBodyCapped(response, maxBytes, { method: 'GET', url });
    },
    async json(method, url, read, opts = {}) {
      const { maxBytes, ...sendOptions } = opts;
      const response = await send(options, method, url, { idempotent: true, headers: { accept: 'application/json' }, ...sendOptions });
      return read(await readJson(response, { method, url }, maxBytes), { method, url });
    },
  };
  // The token is masked wherever text leaves the process, from before the first request.
  rememberSecret(options.accessToken);
  return connection;
}
