// GET /licenses: the option ids of the caller's organization (service-api.md). Never logs the token.
import { ServiceError } from '../core/errors.js';
import { rememberSecret } from '../core/secrets.js';
import { assertSafeBaseUrl, requestJson, type ServiceClientOptions } from './http.js';

/**
 * The organization's licensed option ids. Accepts numbers or numeric strings and ignores unknown fields.
 * @throws ServiceError SG_ERR_HTTP_* (401 token, 403 role or license, unreachable, timeout, bad body)
 */
export async function getLicenses(options: ServiceClientOptions): Promise<number[]> {
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
      throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${url}: license entry ${i} has optionId ${JSON.stringify(raw)}, not a number`, { method: 'GET', url });
    }
    return id;
  });
}
