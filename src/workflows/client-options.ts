// The service client's options, built one way for sign, sign --archive, check --online, jobs and licenses: the address,
// the token, and how long to wait between the attempts of a request (SIGNGATE_RETRY_DELAYS, else the client's default
// schedule). Types only from the client, so that an offline check does not load it.
import { UsageError } from '../core/errors.js';
import type { ClientOptions } from '../service-client/client.js';
import { DEFAULT_RETRY, type RetryInfo, type RetryPolicy } from '../service-client/http.js';

/** What a command adds to the address and the token. */
export interface ClientChoices {
  /** Defaults to process.env (SIGNGATE_RETRY_DELAYS). */
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Called before each retry of a request. */
  readonly onRetry?: ((info: RetryInfo) => void) | undefined;
  /** The folder separator in uploaded file names (the client's default: `\\`). */
  readonly nameSeparator?: '\\' | '/' | undefined;
}

/**
 * The client's options for the service at `baseUrl` with `accessToken`.
 * @throws UsageError SG_ERR_USAGE for a SIGNGATE_RETRY_DELAYS that is no list of waits
 */
export function clientOptions(service: { readonly baseUrl: string; readonly accessToken: string }, choices: ClientChoices = {}): ClientOptions {
  const retry = retryPolicy(choices.env);
  return {
    baseUrl: service.baseUrl,
    accessToken: service.accessToken,
    ...(retry ? { retry } : {}),
    ...(choices.onRetry ? { onRetry: choices.onRetry } : {}),
    ...(choices.nameSeparator ? { nameSeparator: choices.nameSeparator } : {}),
  };
}

/**
 * The waits between the attempts of a request, when SIGNGATE_RETRY_DELAYS sets them: milliseconds separated by commas,
 * one per retry (`1000,5000,30000`: three retries; `none` or an empty value: no retry). Unset: 4 retries, 0.5 s
 * doubling to 30 s. A Retry-After of the service still sets its wait, up to 30 s.
 * @throws UsageError SG_ERR_USAGE for a value that is no such list
 */
function retryPolicy(env: NodeJS.ProcessEnv = process.env): RetryPolicy | undefined {
  const text = env.SIGNGATE_RETRY_DELAYS;
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.toLowerCase() === 'none') return { ...DEFAULT_RETRY, retries: 0, delaysMs: [] };
  const parts = trimmed.split(',').map((p) => p.trim());
  if (!parts.every((p) => /^\d{1,7}$/.test(p))) {
    throw new UsageError(
      `SIGNGATE_RETRY_DELAYS is ${JSON.stringify(text.slice(0, 60))}, not a list of waits`,
      'Give the wait before each retry in milliseconds, separated by commas (for example 1000,5000,30000), or none for no retry.',
    );
  }
  const delaysMs = parts.map(Number);
  return { ...DEFAULT_RETRY, retries: delaysMs.length, delaysMs };
}
