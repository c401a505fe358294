// How long a command waits between the attempts of a request to the service: SIGNGATE_RETRY_DELAYS, else the client's
// default schedule. One reading for sign, sign --archive, check --online, jobs and licenses.
import { UsageError } from '../core/errors.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../service-client/http.js';

/**
 * The waits between the attempts of a request, when SIGNGATE_RETRY_DELAYS sets them: milliseconds separated by commas,
 * one per retry (`1000,5000,30000`: three retries; `none` or an empty value: no retry). Unset: 4 retries, 0.5 s
 * doubling to 30 s. A Retry-After of the service still sets its wait, up to 30 s.
 * @throws UsageError SG_ERR_USAGE for a value that is no such list
 */
export function retryPolicy(env: NodeJS.ProcessEnv = process.env): RetryPolicy | undefined {
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
