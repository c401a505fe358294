// The HTTP transport of the service client: a timeout on every request, redirects followed safely, and retries with
// backoff for idempotent requests; the errors are service-errors.ts's. Never prints or logs the token.
import { ServiceError } from '../core/errors.js';
import { networkError, retryReason, statusError } from './service-errors.js';

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
export function isRetryableStatus(status: number): boolean {
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

/** One request with the retry policy: the successful response, its body unread. */
export type Transport = (method: string, url: string, opts: SendOptions) => Promise<Response>;

/** What every request of one client shares, resolved once from its options. */
interface TransportSettings {
  readonly fetch: typeof globalThis.fetch;
  readonly base: URL;
  readonly authorization: string;
  readonly timeoutMs: number;
  readonly policy: RetryPolicy;
  readonly sleep: (ms: number) => Promise<void>;
  readonly onRetry: ((info: RetryInfo) => void) | undefined;
}

/**
 * The transport of one client: the fetch, the base URL's origin, the token's header, the timeout and the retry policy
 * decided once; each call sends one request with that policy (see the doc comment of this file).
 * @throws ServiceError SG_ERR_HTTP_* from a call, after the last attempt
 */
export function openTransport(options: ServiceClientOptions): Transport {
  const settings: TransportSettings = {
    fetch: options.fetch ?? globalThis.fetch,
    base: new URL(options.baseUrl),
    authorization: `Bearer ${options.accessToken}`,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    policy: options.retry ?? DEFAULT_RETRY,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    onRetry: options.onRetry,
  };
  return (method, url, opts) => sendWith(settings, method, url, opts);
}

/**
 * One fetch that follows redirects itself: never from HTTPS to plain HTTP (the body would travel in clear),
 * and the token goes only to the base URL's origin.
 */
async function fetchFollowing(settings: TransportSettings, method: string, url: string, init: RequestInit, headers: Record<string, string>): Promise<Response> {
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    const sameOrigin = target.origin === settings.base.origin;
    const response = await settings.fetch(target, {
      ...init,
      method,
      redirect: 'manual',
      headers: { ...headers, ...(sameOrigin ? { authorization: settings.authorization } : {}) },
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
    if (init.body !== undefined && next.origin !== settings.base.origin) {
      throw new ServiceError(
        'SG_ERR_HTTP_BAD_RESPONSE',
        `${method} ${url} redirected an upload to another origin (${next.origin}); the files were not sent there`,
        { method, url },
      );
    }
    target = next;
  }
}

/** Sends one request with the policy and returns the successful response (body unread). */
async function sendWith(settings: TransportSettings, method: string, url: string, opts: SendOptions): Promise<Response> {
  const { timeoutMs, policy } = settings;
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined;
    let failure: ServiceError | undefined;
    let reason = '';
    try {
      const body = opts.makeBody ? opts.makeBody() : opts.body;
      response = await fetchFollowing(
        settings,
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
    settings.onRetry?.({ method, url, attempt: attempt + 1, delayMs, reason: response ? `status ${response.status}` : reason });
    await settings.sleep(delayMs);
  }
}
