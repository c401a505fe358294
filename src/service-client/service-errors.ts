// The service's answers that are no success, turned into errors that say what to do: a problem+json body's words with
// advice per status, a network failure named by its cause, a body too long or not JSON. Never the token.
import { ServiceError } from '../core/errors.js';
import { cleanServiceText } from './text.js';

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
export async function readBodyCapped(response: Response, maxBytes: number, request: { method: string; url: string }): Promise<Uint8Array> {
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
export async function statusError(method: string, url: string, response: Response): Promise<ServiceError> {
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

export function networkError(method: string, url: string, timeoutMs: number, cause: unknown): ServiceError {
  if (timedOut(cause)) return new ServiceError('SG_ERR_HTTP_TIMEOUT', `${method} ${url} did not answer within ${timeoutMs} ms`, { method, url }, { cause });
  return new ServiceError('SG_ERR_HTTP_UNREACHABLE', `${method} ${url} failed: ${describeNetworkFailure(url, cause)}`, { method, url }, { cause });
}

const timedOut = (cause: unknown) => ['TimeoutError', 'AbortError'].includes((cause as Error)?.name);

/** Why a request got no answer, for a retry line that names the request itself: no URL, the service not by address. */
export function retryReason(url: string, timeoutMs: number, cause: unknown): string {
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
