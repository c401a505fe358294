// The service address and access token from options, the config file and the environment, and a client over them.
import { UsageError } from '../core/errors.js';
import { resolveAccessToken, type AccessTokenOptions } from './access-token.js';
import { createServiceClient, type ServiceClient } from '../service-client/client.js';
import type { RetryInfo } from '../service-client/http.js';
import { loadConfig } from './config.js';
import { clientOptions } from './client-options.js';

export interface ServiceOptions extends AccessTokenOptions {
  /** The service's base URL (…/<service-name>/v1.0); else "baseUrl" in the config file, else SIGNGATE_BASE_URL. */
  readonly baseUrl?: string;
  /** A config file with "baseUrl" (default: signgate.config.json from the working directory upward). */
  readonly config?: string;
  /** Called before each retry of a request. */
  readonly onRetry?: (info: RetryInfo) => void;
}

/**
 * A service client from options, the config file and the environment.
 * @throws UsageError SG_ERR_USAGE without an address or a token
 */
export function connect(options: ServiceOptions): ServiceClient {
  const baseUrl = options.baseUrl ?? loadConfig(options.config).config.baseUrl ?? (options.env ?? process.env).SIGNGATE_BASE_URL;
  if (!baseUrl) throw new UsageError('no service address', 'Pass --base-url, set "baseUrl" in signgate.config.json, or set SIGNGATE_BASE_URL.');
  const accessToken = resolveAccessToken(options);
  if (!accessToken) throw new UsageError('no access token', 'Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN.');
  return createServiceClient(clientOptions({ baseUrl, accessToken }, options));
}
