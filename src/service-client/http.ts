// The HTTP layer of the service client: base URL rules, a timeout on every request, retries with backoff for
// idempotent requests, and problem+json errors turned into advice. Never prints or logs the token.
import { ServiceError } from '../core/errors.js';
import { DEFAULT_RETRY, isRetryableStatus, parseRetryAfter, retryDelayMs, type RetryPolicy } from './retry-timing.js';

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
  readonly onRetry?: (info: { method: string; url: string; attempt: number; delayMs: number; reason: string }) => void;
  /** Waits between retries (tests shorten it). */
  readonly sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * HTTPS is required except for loopback, so a token never crosses a network in clear text.
 * @throws ServiceError SG_ERR_HTTP_INSECURE
 */
export function assertSafeBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ServiceError('SG_ERR_HTTP_INSECURE', `the base URL ${JSON.stringify(baseUrl)} is not a URL (expected https://host/<service-name>/v1.0)`, { method: '', url: baseUrl });
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && LOOPBACK.test(url.hostname)) return url;
  throw new ServiceError('SG_ERR_HTTP_INSECURE', `the base URL ${url.origin} is not HTTPS; plain HTTP is allowed only to this machine (localhost)`, { method: '', url: url.origin });
}

/** Joins the base URL and an API path. */
export function apiUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

const ADVICE: Record<number, string> = {
  401: 'the access token is missing, unknown or expired; create a new token (tokens cannot be prolonged)',
  403: 'the user lacks the role User on the signing application, or the organization holds no license',
  404: 'no such job in your organization (or a wrong base URL)',
  409: 'the organization keeps the maximum number of jobs (delete old ones with `signgate jobs prune`), or the result is not ready yet',
  413: 'the upload is larger than the service accepts; split it with `signgate sign --split`',
  429: 'the service asks to slow down; try again later',
};

async function readProblem(response: Response): Promise<{ title?: string; detail?: string; errors?: { fileName: string; detail: string }[] }> {
  try {
    const body = (await response.json()) as { title?: unknown; detail?: unknown; errors?: unknown };
    return {
      ...(typeof body.title === 'string' ? { title: body.title } : {}),
      ...(typeof body.detail === 'string' ? { detail: body.detail } : {}),
      ...(Array.isArray(body.errors) ? { errors: body.errors as { fileName: string; detail: string }[] } : {}),
    };
  } catch {
    return {};
  }
}

/** Turns an error status into a ServiceError whose message says what to do. */
export async function statusError(method: string, url: string, response: Response): Promise<ServiceError> {
  const problem = await readProblem(response);
  const said = [problem.title, problem.detail].filter(Boolean).join(': ');
  const perFile = problem.errors?.length ? `; ${problem.errors.map((e) => `${e.fileName}: ${e.detail}`).join('; ')}` : '';
  const advice = ADVICE[response.status] ?? (response.status >= 500 ? 'the service failed; try again later' : 'the request was refused');
  return new ServiceError('SG_ERR_HTTP_STATUS', `${method} ${url} answered ${response.status}${said ? ` (${said})` : ''}${perFile}: ${advice}`, {
    method,
    url,
    status: response.status,
    ...(problem.title ? { title: problem.title } : {}),
    ...(problem.detail ? { detail: problem.detail } : {}),
  });
}

function networkError(method: string, url: string, timeoutMs: number, cause: unknown): ServiceError {
  const name = (cause as Error)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new ServiceError('SG_ERR_HTTP_TIMEOUT', `${method} ${url} did not answer within ${timeoutMs} ms`, { method, url }, { cause });
  }
  const reason = ((cause as { cause?: { code?: string } })?.cause?.code ?? (cause as Error)?.message) || 'network error';
  return new ServiceError('SG_ERR_HTTP_UNREACHABLE', `${method} ${url} failed: ${reason}; check the base URL and the network`, { method, url }, { cause });
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

/**
 * Sends one request with the policy above and returns the successful response (body unread).
 * @throws ServiceError SG_ERR_HTTP_* after the last attempt
 */
export async function send(options: ServiceClientOptions, method: string, url: string, opts: SendOptions): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const policy = options.retry ?? DEFAULT_RETRY;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  for (let attempt = 0; ; attempt++) {
    let response: Response | undefined;
    let failure: ServiceError | undefined;
    try {
      const body = opts.makeBody ? opts.makeBody() : opts.body;
      response = await fetchImpl(url, {
        method,
        headers: { authorization: `Bearer ${options.accessToken}`, ...opts.headers },
        ...(body !== undefined ? { body, duplex: 'half' } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      } as RequestInit);
    } catch (cause) {
      failure = networkError(method, url, timeoutMs, cause);
    }
    if (response?.ok) return response;
    const retryable = response
      ? (opts.idempotent && isRetryableStatus(response.status)) || (opts.retryStatuses ?? []).includes(response.status)
      : opts.idempotent;
    if (!retryable || attempt >= policy.retries) throw failure ?? (await statusError(method, url, response!));
    const delayMs = retryDelayMs(attempt + 1, policy, response ? parseRetryAfter(response.headers.get('retry-after')) : undefined);
    await response?.body?.cancel().catch(() => {});
    options.onRetry?.({ method, url, attempt: attempt + 1, delayMs, reason: response ? `status ${response.status}` : failure!.message });
    await sleep(delayMs);
  }
}

/** A GET or DELETE with retries that parses a JSON answer. */
export async function requestJson(options: ServiceClientOptions, method: 'GET' | 'DELETE', path: string): Promise<{ url: string; body: unknown }> {
  const url = apiUrl(options.baseUrl, path);
  const response = await send(options, method, url, { idempotent: true, headers: { accept: 'application/json' } });
  try {
    return { url, body: await response.json() };
  } catch (cause) {
    throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url} answered ${response.status} with a body that is not JSON`, { method, url, status: response.status }, { cause });
  }
}
