// The small HTTP layer of the service client: base URL rules, timeouts, problem+json errors with advice.
import { ServiceError } from '../core/errors.js';

export interface ServiceClientOptions {
  /** Ends in /<service-name>/v1.0. */
  readonly baseUrl: string;
  /** Sent as a Bearer token; never printed, logged or put into an error. */
  readonly accessToken: string;
  readonly fetch?: typeof globalThis.fetch;
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * HTTPS is required except for loopback, so a token never crosses a network in clear text.
 * @throws ServiceError SG_ERR_HTTP_INSECURE, UsageError-like SG_ERR_USAGE for a malformed URL
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
  409: 'the organization keeps the maximum number of jobs, or the result is not ready; delete old jobs with `signgate jobs prune`',
  413: 'the upload is larger than the service accepts; split it with `signgate sign --split`',
  429: 'the service asks to slow down; try again later',
};

/** Reads a problem+json body, if there is one, without failing on anything else. */
async function readProblem(response: Response): Promise<{ title?: string; detail?: string }> {
  try {
    const body = (await response.json()) as { title?: unknown; detail?: unknown };
    return {
      ...(typeof body.title === 'string' ? { title: body.title } : {}),
      ...(typeof body.detail === 'string' ? { detail: body.detail } : {}),
    };
  } catch {
    return {};
  }
}

/** Sends one request and parses a JSON answer; error statuses become ServiceError with advice. */
export async function requestJson(options: ServiceClientOptions, method: string, path: string): Promise<{ url: string; body: unknown }> {
  const url = apiUrl(options.baseUrl, path);
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: Response;
  try {
    response = await fetchImpl(url, { method, headers: { authorization: `Bearer ${options.accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (cause) {
    const name = (cause as Error)?.name;
    if (name === 'TimeoutError' || name === 'AbortError') {
      throw new ServiceError('SG_ERR_HTTP_TIMEOUT', `${method} ${url} did not answer within ${timeoutMs} ms`, { method, url }, { cause });
    }
    const reason = ((cause as { cause?: { code?: string } })?.cause?.code ?? (cause as Error)?.message) || 'network error';
    throw new ServiceError('SG_ERR_HTTP_UNREACHABLE', `${method} ${url} failed: ${reason}; check the base URL and the network`, { method, url }, { cause });
  }
  if (!response.ok) {
    const problem = await readProblem(response);
    const said = [problem.title, problem.detail].filter(Boolean).join(': ');
    const advice = ADVICE[response.status] ?? (response.status >= 500 ? 'the service failed; try again later' : 'the request was refused');
    throw new ServiceError('SG_ERR_HTTP_STATUS', `${method} ${url} answered ${response.status}${said ? ` (${said})` : ''}: ${advice}`, {
      method,
      url,
      status: response.status,
      ...problem,
    });
  }
  try {
    return { url, body: await response.json() };
  } catch (cause) {
    throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url} answered ${response.status} with a body that is not JSON`, { method, url, status: response.status }, { cause });
  }
}
