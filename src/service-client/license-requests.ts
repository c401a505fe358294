// GET /licenses: the option ids of the caller's organization and, where the service reports it (signgate's
// extension), each option's public key token; GET /licenses/{optionId}/public-key: the option's public key file
// (service-api.md). Never logs the token.
import { ServiceError } from '../core/errors.js';
import { rememberSecret } from '../core/secrets.js';
import { apiUrl, assertSafeBaseUrl, readBodyCapped, requestJson, send, type ServiceClientOptions } from './http.js';
import { cleanServiceText } from './text.js';

/** One license entry of GET /licenses. */
export interface LicenseEntry {
  readonly optionId: number;
  /**
   * The option's public key token (16 lower-case hex digits) from the `publicKeyToken` field, signgate's extension:
   * null when the service does not report it, or reports something that is not a token (see `publicKeyTokenProblem`).
   */
  readonly publicKeyToken: string | null;
  /** What was wrong with a `publicKeyToken` the service sent (cleaned service text), when it was not a token. */
  readonly publicKeyTokenProblem?: string;
}

/**
 * The organization's licensed option ids. Accepts numbers or numeric strings and ignores unknown fields.
 * @throws ServiceError SG_ERR_HTTP_* (401 token, 403 role or license, unreachable, timeout, bad body)
 */
export async function getLicenses(options: ServiceClientOptions): Promise<number[]> {
  return (await getLicenseEntries(options)).map((e) => e.optionId);
}

/**
 * The organization's license entries: each option id, and its public key token when the service reports one. A
 * `publicKeyToken` that is not 16 hex digits is no token (null, with the problem said): it never fails the call.
 * @throws ServiceError SG_ERR_HTTP_* (401 token, 403 role or license, unreachable, timeout, bad body)
 */
export async function getLicenseEntries(options: ServiceClientOptions): Promise<LicenseEntry[]> {
  assertSafeBaseUrl(options.baseUrl);
  rememberSecret(options.accessToken);
  const { url, body } = await requestJson(options, 'GET', '/licenses');
  if (!Array.isArray(body)) {
    throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${url} returned ${typeof body}, not a JSON array of license entries`, { method: 'GET', url });
  }
  return body.map((entry, i) => {
    const raw = (entry as { optionId?: unknown } | null)?.optionId;
    const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(id)) {
      throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${url}: license entry ${i} has optionId ${JSON.stringify(raw)}, not a number`, {
        method: 'GET',
        url,
      });
    }
    return { optionId: id, ...keyTokenOf((entry as { publicKeyToken?: unknown }).publicKeyToken) };
  });
}

/** A `publicKeyToken` field as the client takes it: 16 hex digits (any case) are the token; anything else is none. */
function keyTokenOf(raw: unknown): Pick<LicenseEntry, 'publicKeyToken' | 'publicKeyTokenProblem'> {
  if (raw === undefined || raw === null) return { publicKeyToken: null };
  if (typeof raw === 'string' && /^[0-9a-f]{16}$/i.test(raw)) return { publicKeyToken: raw.toLowerCase() };
  const shown = cleanServiceText(typeof raw === 'string' ? JSON.stringify(raw) : String(JSON.stringify(raw) ?? typeof raw), 60);
  return { publicKeyToken: null, publicKeyTokenProblem: `publicKeyToken ${shown} is not 16 hex digits` };
}

/** Most bytes a public key file may have: a 16384-bit RSA key's blob is about 2 KB. */
const MAX_PUBLIC_KEY_BYTES = 64 * 1024;

/**
 * The option's public key file (`<optionId>_public.snk`: the public key blob) from GET
 * /licenses/{optionId}/public-key, signgate's extension. The bytes are as the service sent them: the caller checks
 * them. 404 means the organization does not hold the option, or the service does not offer the endpoint.
 * @throws ServiceError SG_ERR_HTTP_* (404 with `status`, 401, 403, unreachable, timeout, a body over 64 KiB)
 */
export async function getOptionPublicKey(options: ServiceClientOptions, optionId: number): Promise<Uint8Array> {
  assertSafeBaseUrl(options.baseUrl);
  rememberSecret(options.accessToken);
  if (!Number.isSafeInteger(optionId) || optionId < 0) throw new RangeError(`optionId must be a whole number of at least 0, not ${optionId}`);
  const url = apiUrl(options.baseUrl, `/licenses/${optionId}/public-key`);
  const response = await send(options, 'GET', url, { idempotent: true, headers: { accept: 'application/octet-stream' } });
  return readBodyCapped(response, MAX_PUBLIC_KEY_BYTES, { method: 'GET', url });
}
