// Rate limits: per access token and per client address, with @fastify/rate-limit's store and counting.
// A request over either limit is answered 429 (problem+json) with Retry-After in seconds. The limits are read
// per request, so a changed configuration file takes effect at once; options given to buildServer win.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UsageError } from '../../core/errors.js';
import { HttpProblem } from '../problem.js';
import type { RateLimit, RateLimitSettings } from '../server-config.js';
import { bearerToken, hashToken } from '../domain/tokens.js';

const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

function bearerKey(request: FastifyRequest): string | undefined {
  const token = bearerToken(request.headers.authorization);
  return token ? `token:${hashToken(token)}` : undefined;
}

/**
 * Registers the per-address limit for every route of `app` registered after this call, and returns the per-token
 * check, which the caller runs once a request's token is known to be valid: a token that does not authenticate is
 * counted by its address alone, so that junk tokens cannot crowd real tokens' counters out of the store.
 * `settings` is called per request.
 */
export async function registerRateLimits(
  app: FastifyInstance,
  settings: () => RateLimitSettings,
): Promise<(request: FastifyRequest, reply: FastifyReply) => Promise<void>> {
  await app.register(rateLimit, { global: false });
  type Check = (request: FastifyRequest) => Promise<{ isAllowed: boolean; isExceeded?: boolean; max?: number; ttlInSeconds?: number; remaining?: number }>;
  const create = (app as unknown as { createRateLimit(options: object): Check }).createRateLimit.bind(app);
  const limiter = (kind: 'perToken' | 'perAddress', key: (r: FastifyRequest) => string | undefined): Check =>
    create({
      keyGenerator: (r: FastifyRequest) => key(r) ?? '',
      // Nothing to count (no token), no limit of this kind, or loopback while loopback is exempt.
      allowList: (r: FastifyRequest, k: string) => k === '' || settings()[kind] === null || (!settings().loopback && LOOPBACK.test(r.ip)),
      max: () => settings()[kind]?.max ?? 0,
      timeWindow: () => (settings()[kind]?.windowSeconds ?? 1) * 1000,
    });
  const enforce = async (what: string, check: Check, request: FastifyRequest, reply: FastifyReply) => {
    const result = await check(request);
    if (result.isAllowed || !result.isExceeded) return;
    const seconds = Math.max(1, result.ttlInSeconds ?? 1);
    reply.header('retry-after', String(seconds));
    reply.header('x-ratelimit-limit', String(result.max));
    reply.header('x-ratelimit-remaining', '0');
    throw new HttpProblem(
      429,
      'Too Many Requests',
      `More than ${result.max} requests from this ${what} in the current window. Wait ${seconds} s (Retry-After), then try again.`,
    );
  };
  const perAddress = limiter('perAddress', (r) => `ip:${r.ip}`);
  const perToken = limiter('perToken', bearerKey);
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply) => enforce('address', perAddress, request, reply));
  return (request, reply) => enforce('access token', perToken, request, reply);
}

/**
 * Parses `<max>/<seconds>` (for example `120/60`), or `off`.
 * @returns null for `off`; undefined for an unreadable value (the caller names it)
 */
export function parseRateLimit(text: string): RateLimit | null | undefined {
  if (/^(?:off|0)$/i.test(text.trim())) return null;
  const match = /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*s?$/.exec(text.trim());
  if (!match) return undefined;
  const max = Number(match[1]);
  const windowSeconds = Number(match[2]);
  return max >= 1 && windowSeconds > 0 ? { max, windowSeconds } : undefined;
}

/**
 * The overrides `signgate serve` options give: each value `<max>/<seconds>` or `off`; absent ones are left out.
 * @throws UsageError naming the option and the value
 */
export function rateLimitOverrides(options: {
  perToken?: string | undefined;
  perAddress?: string | undefined;
  loopback?: boolean | undefined;
}): Partial<RateLimitSettings> {
  const out: { -readonly [K in keyof RateLimitSettings]?: RateLimitSettings[K] } = {};
  for (const [kind, option] of [
    ['perToken', '--rate-limit-per-token'],
    ['perAddress', '--rate-limit-per-address'],
  ] as const) {
    const text = options[kind];
    if (text === undefined) continue;
    const parsed = parseRateLimit(text);
    if (parsed === undefined)
      throw new UsageError(`${option} ${JSON.stringify(text)} is not <max>/<seconds> or off`, `For example ${option} 120/60 (120 requests a minute).`);
    out[kind] = parsed;
  }
  if (options.loopback !== undefined) out.loopback = options.loopback;
  return out;
}
