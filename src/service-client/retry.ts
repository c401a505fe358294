// When the client retries a request, and how long it waits: capped exponential backoff that honours Retry-After.
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
