// The HTTP layer of the service client: base URL rules, a timeout on every request, retries with backoff for
// idempotent requests, and problem+json errors turned into advice. Never prints or logs the token.
import { ServiceError } from '../core/errors.js';
import { maskSecrets, rememberSecret, urlForMessage } from '../core/secrets.js';
import type { AnswerReader } from './answers.js';
import { cleanServiceText } from './text.js';

/** What the client says before it retries a request. */
export interface RetryInfo {
  readonly method: string;
  readonly url: string;
  readonly attempt: number;
  readonly delayMs: number;
  /** Why, without the request or the service's address (the retry line names the URL once): `status 503`, `connection refused …`. */
  readonly reason: string;
}

export interface ServiceClientOptions {
  /** Ends in /<service-name>/v1.0. */
  readonly baseUrl: string;
  /** Sent as a Bearer token; never printed, logged or put into an error. */
  readonly accessToken: string;
  readonly fetch?: typeof globalThis.fetch;
  /** Per request (default 60 s; uploads and downloads get this much per attempt). */
  readonly timeoutMs?: number;
  readonly retry?: RetryPolicy;
  /** Called before each retry, for progress output. */
  readonly onRetry?: (info: RetryInfo) => void;
  /** Waits between retries (tests shorten it). */
  readonly sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;

// When to retry, and how long to wait: capped exponential backoff that honours Retry-After.

export interface RetryPolicy {
  /** Attempts after the first one. */
  readonly retries: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** The wait before each retry, in order, instead of the doubling from baseDelayMs (a Retry-After still wins). */
  readonly delaysMs?: readonly number[];
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** Statuses worth another try for idempotent requests. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Seconds or an HTTP date, as Retry-After allows; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The wait before attempt `attempt` (1 = the first retry). */
export function retryDelayMs(attempt: number, policy: RetryPolicy, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const listed = policy.delaysMs?.[attempt - 1];
  if (listed !== undefined) return Math.min(listed, policy.maxDelayMs);
  return Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * HTTPS is required except for loopback, so a token never crosses a network in clear text; a user or password
 * in the URL is refused (the service takes a bearer token) and never shown.
 * @throws ServiceError SG_ERR_HTTP_INSECURE
 */
function assertSafeBaseUrl(baseUrl: string): URL {
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
function apiUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

const ADVICE: Record<number, string> = {
  401: 'the access token is missing, unknown or expired; create a new token (tokens cannot be prolonged)',
  403: 'the user lacks the role User on the signing application, or the organization holds no license',
  404: 'no such job in your organization (or a wrong base URL)',
  409: 'the organization keeps the maximum number of jobs (delete old ones with `signgate jobs prune`), or the result is not ready yet',
  413: 'the upload is larger than the service accepts; split it with `signgate sign --split`',
  429: 'the service asks to slow down; try again later',
  503: "the service's storage does not answer for the moment (retried as it asked); try again later",
  507: 'the service has no room to store the job now: its operator must free space on its data disk; try again later',
};

/** Most a JSON answer or error body may hold: status documents of thousands of files stay far below it. */
export const MAX_JSON_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Reads a response body up to `maxBytes`, cancelling the stream beyond it.
 * @throws ServiceError SG_ERR_HTTP_BAD_RESPONSE when the body is longer
 */
async function readBodyCapped(response: Response, maxBytes: number, request: { method: string; url: string }): Promise<Uint8Array> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const tooLong = () =>
    new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${request.method} ${request.url} answered a body of more than ${maxBytes} bytes; the answer was dropped`, {
      ...request,
      status: response.status,
    });
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLong();
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return new Uint8Array(0);
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > maxBytes) {
      await response.body.cancel().catch(() => {});
      throw tooLong();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

interface ServiceWords {
  /** One line of what the service said, control characters removed; undefined when it said nothing usable. */
  readonly said?: string;
  readonly title?: string;
  readonly detail?: string;
}

const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * The service's own words in an error body, whatever its shape: problem+json (with `errors` as a list per file
 * or as ASP.NET's object of field -> messages), JSON with `message` or `error`, or plain text.
 */
async function readServiceWords(response: Response, request: { method: string; url: string }): Promise<ServiceWords> {
  let text: string;
  try {
    text = new TextDecoder().decode(await readBodyCapped(response, MAX_ERROR_BODY_BYTES, request));
  } catch {
    return {};
  }
  if (!text.trim()) return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    // Plain text or HTML: show the text, without markup.
    const plain = cleanServiceText(text.replace(/<[^>]*>/g, ' '), 500);
    return plain ? { said: plain } : {};
  }
  if (typeof body === 'string') return { said: cleanServiceText(body, 500) };
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? cleanServiceText(v, 500) : undefined);
  const title = str(b.title);
  const detail = str(b.detail);
  const message = str(b.message) ?? str(b.error_description) ?? str(b.error) ?? str((b.error as Record<string, unknown> | undefined)?.message);
  const parts: string[] = [];
  if (title) parts.push(title);
  if (detail) parts.push(detail);
  if (message && message !== title && message !== detail) parts.push(message);
  const errors = b.errors;
  if (Array.isArray(errors)) {
    const perFile = errors
      .slice(0, 20)
      .map((e) => {
        if (typeof e === 'string') return cleanServiceText(e, 300);
        const o = (e ?? {}) as Record<string, unknown>;
        const name = str(o.fileName) ?? str(o.name) ?? str(o.field);
        const what = str(o.detail) ?? str(o.message) ?? str(o.title);
        return [name, what].filter(Boolean).join(': ');
      })
      .filter(Boolean);
    if (perFile.length) parts.push(perFile.join('; '));
  } else if (errors && typeof errors === 'object') {
    // ASP.NET Core's ValidationProblemDetails: { "errors": { "files": ["…"], "comment": ["…"] } }
    const fields = Object.entries(errors as Record<string, unknown>)
      .slice(0, 20)
      .map(
        ([field, list]) => `${cleanServiceText(field, 100)}: ${(Array.isArray(list) ? list : [list]).map((m) => cleanServiceText(String(m), 300)).join(' ')}`,
      );
    if (fields.length) parts.push(fields.join('; '));
  }
  return { ...(parts.length ? { said: parts.join(': ') } : {}), ...(title ? { title } : {}), ...(detail ? { detail } : {}) };
}

/** A request id the client repeats from an answer: 1 to 128 of A–Z a–z 0–9 . _ : - (as the service gives them). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** ` (request id …)` when the answer carries a well-formed X-Request-Id (its operator finds the log lines by it), else ''. */
function requestIdNote(response: Response): string {
  const id = response.headers.get('x-request-id');
  return id && REQUEST_ID.test(id) ? ` (request id ${id})` : '';
}

/** Turns an error status into a ServiceError whose message says what the service said and what to do. */
async function statusError(method: string, url: string, response: Response): Promise<ServiceError> {
  const note = requestIdNote(response);
  const words = await readServiceWords(response, { method, url });
  const wrongBase = response.status === 404 && !/\/assemblies\/[^/]+/.test(new URL(url).pathname);
  // A 401 whose detail says what to do (this service's: why the token was refused, and to create one) is said once,
  // in the service's words; our advice is for a service that says less ("Unauthorized", "The token has expired.").
  if (response.status === 401 && words.detail && /\bcreate\b|\bnew (?:token|one)\b/i.test(words.detail))
    return new ServiceError('SG_ERR_HTTP_STATUS', `${method} ${url} answered 401${words.title ? ` (${words.title})` : ''}: ${words.detail}${note}`, {
      method,
      url,
      status: response.status,
      ...(words.title ? { title: words.title } : {}),
      detail: words.detail,
    });
  const advice = wrongBase
    ? `the base URL does not lead to the signing API: it must end in /<service-name>/v1.0 (for example https://signing.example.com/assembly-signing/v1.0)`
    : (ADVICE[response.status] ?? (response.status >= 500 ? 'the service failed; try again later' : 'the request was refused; see what the service said'));
  return new ServiceError('SG_ERR_HTTP_STATUS', `${method} ${url} answered ${response.status}${words.said ? ` (${words.said})` : ''}: ${advice}${note}`, {
    method,
    url,
    status: response.status,
    ...(words.title ? { title: words.title } : {}),
    ...(words.detail ? { detail: words.detail } : {}),
  });
}

function networkError(method: string, url: string, timeoutMs: number, cause: unknown): ServiceError {
  if (timedOut(cause)) return new ServiceError('SG_ERR_HTTP_TIMEOUT', `${method} ${url} did not answer within ${timeoutMs} ms`, { method, url }, { cause });
  return new ServiceError('SG_ERR_HTTP_UNREACHABLE', `${method} ${url} failed: ${describeNetworkFailure(url, cause)}`, { method, url }, { cause });
}

const timedOut = (cause: unknown) => ['TimeoutError', 'AbortError'].includes((cause as Error)?.name);

/** Why a request got no answer, for a retry line that names the request itself: no URL, the service not by address. */
function retryReason(url: string, timeoutMs: number, cause: unknown): string {
  return timedOut(cause) ? `no answer within ${timeoutMs} ms` : describeNetworkFailure(url, cause, 'the service');
}

/** The errors under `error` (its `cause` chain, and an AggregateError's errors), nearest first. */
function causeChain(error: unknown): { code?: string; message?: string }[] {
  const out: { code?: string; message?: string }[] = [];
  const queue: unknown[] = [error];
  while (queue.length && out.length < 20) {
    const e = queue.shift() as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined;
    if (!e || typeof e !== 'object') continue;
    out.push({ ...(typeof e.code === 'string' ? { code: e.code } : {}), ...(typeof e.message === 'string' ? { message: e.message } : {}) });
    if (e.cause !== undefined) queue.push(e.cause);
    if (Array.isArray(e.errors)) queue.push(...e.errors);
  }
  return out;
}

const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_OSSL_|HOSTNAME_MISMATCH)/;

/**
 * Why a request never got an answer, from the error's cause chain (fetch itself says only "fetch failed"): the
 * cause by name with its code, the service's origin, and what to do.
 */
function describeNetworkFailure(url: string, error: unknown, origin = new URL(url).origin): string {
  const target = new URL(url);
  const chain = causeChain(error);
  const coded = chain.find((e) => e.code && e.code !== 'ERR_INVALID_ARG_TYPE');
  const code = coded?.code ?? '';
  const tls = chain.find((e) => (e.code && TLS_CODE.test(e.code)) || /certificate|\bTLS\b|\bSSL\b/i.test(e.message ?? ''));
  if (code === 'ECONNREFUSED')
    return `connection refused (ECONNREFUSED) by ${origin}: nothing listens there; start the service, or check the host and port in the base URL`;
  if (code === 'ENOTFOUND')
    return `the name ${target.hostname} could not be resolved (ENOTFOUND): check the host name in the base URL (and the DNS or proxy settings of this machine)`;
  if (code === 'EAI_AGAIN')
    return `the name ${target.hostname} could not be resolved now (EAI_AGAIN: the DNS server did not answer): check the network of this machine, then try again`;
  if (tls?.code === 'ERR_SSL_WRONG_VERSION_NUMBER')
    return `${origin} does not answer in TLS (ERR_SSL_WRONG_VERSION_NUMBER): is it plain HTTP on that port? Check the scheme and port of the base URL`;
  if (tls)
    return `the TLS connection to ${origin} failed (${tls.code ?? 'TLS'}: ${(tls.message ?? 'no detail').split('\n')[0]!.trim()}): check the base URL's host name and the service's certificate; a certificate from your own CA needs NODE_EXTRA_CA_CERTS=<ca.pem>`;
  if (['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'].includes(code))
    return `${origin} did not answer in time (${code}): check that the host and port are right and that no firewall drops the connection, then try again`;
  if (['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code))
    return `the connection to ${origin} was cut (${code}): the service or a proxy between closed it; try again, and if it keeps happening, look at the service's or proxy's log`;
  if (['EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'].includes(code))
    return `${origin} cannot be reached from this machine (${code}): check the host in the base URL and the network`;
  if (chain.some((e) => e.message === 'bad port'))
    return `port ${target.port} of ${origin} is one that fetch refuses to use (a "bad port" of the Fetch standard): run the service on another port`;
  const deepest = [...chain].reverse().find((e) => e.message && e.message !== 'fetch failed');
  return `${deepest?.message ?? 'network error'}${code ? ` (${code})` : ''}, reaching ${origin}: check the base URL and the network`;
}

export interface SendOptions {
  readonly body?: RequestInit['body'];
  readonly headers?: Record<string, string>;
  /** Retry on network errors and 408/429/5xx (GET and DELETE). */
  readonly idempotent: boolean;
  /** For a non-idempotent request: retry only when the service refused it with these statuses before accepting it. */
  readonly retryStatuses?: readonly number[];
  /** A new body for each attempt (streams cannot be sent twice). */
  readonly makeBody?: () => RequestInit['body'];
}

const MAX_REDIRECTS = 5;

/**
 * One fetch that follows redirects itself: never from HTTPS to plain HTTP (the body would travel in clear),
 * and the token goes only to the base URL's origin.
 */
async function fetchFollowing(
  options: ServiceClientOptions,
  method: string,
  url: string,
  init: RequestInit,
  headers: Record<string, string>,
): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const base = new URL(options.baseUrl);
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    const sameOrigin = target.origin === base.origin;
    const response = await fetchImpl(target, {
      ...init,
      method,
      redirect: 'manual',
      headers: { ...headers, ...(sameOrigin ? { authorization: `Bearer ${options.accessToken}` } : {}) },
    });
    const location = response.headers.get('location');
    if (![301, 302, 303, 307, 308].includes(response.status) || !location) return response;
    await response.body?.cancel().catch(() => {});
    if (hop >= MAX_REDIRECTS)
      throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url} redirected more than ${MAX_REDIRECTS} times`, { method, url });
    const next = new URL(location, target);
    if (next.protocol !== 'https:' && !(next.protocol === 'http:' && target.protocol === 'http:')) {
      throw new ServiceError('SG_ERR_HTTP_INSECURE', `${method} ${url} redirected to ${next.origin}, which is not HTTPS; the redirect was not followed`, {
        method,
        url,
      });
    }
    if (init.body !== undefined && next.origin !== base.origin) {
      throw new ServiceError(
        'SG_ERR_HTTP_BAD_RESPONSE',
        `${method} ${url} redirected an upload to another origin (${next.origin}); the files were not sent there`,
        { method, url },
      );
    }
    target = next;
  }
}

/**
 * Sends one request with the policy above and returns the successful response (body unread).
 * @throws ServiceError SG_ERR_HTTP_* after the last attempt
 */
export async function send(options: ServiceClientOptions, method: string, url: string, opts: SendOptions): Promise<Response> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const policy = options.retry ?? DEFAULT_RETRY;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined;
    let failure: ServiceError | undefined;
    let reason = '';
    try {
      const body = opts.makeBody ? opts.makeBody() : opts.body;
      response = await fetchFollowing(
        options,
        method,
        url,
        { ...(body !== undefined ? { body, duplex: 'half' } : {}), signal: AbortSignal.timeout(timeoutMs) } as RequestInit,
        { ...opts.headers },
      );
    } catch (cause) {
      if (cause instanceof ServiceError) throw cause;
      failure = networkError(method, url, timeoutMs, cause);
      reason = retryReason(url, timeoutMs, cause);
    }
    if (response?.ok) return response;
    const retryable = response
      ? (opts.idempotent && isRetryableStatus(response.status)) || (opts.retryStatuses ?? []).includes(response.status)
      : opts.idempotent;
    if (!retryable || attempt >= policy.retries) throw failure ?? (await statusError(method, url, response!));
    const delayMs = retryDelayMs(attempt + 1, policy, response ? parseRetryAfter(response.headers.get('retry-after')) : undefined);
    await response?.body?.cancel().catch(() => {});
    options.onRetry?.({ method, url, attempt: attempt + 1, delayMs, reason: response ? `status ${response.status}` : reason });
    await sleep(delayMs);
  }
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
async function readJson(response: Response, request: { method: string; url: string }, maxBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
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
