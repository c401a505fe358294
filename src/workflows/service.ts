// The service address and access token from options, the config file and the environment, and a client over them.
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { createServiceClient, type ServiceClient } from '../service-client/client.js';
import type { RetryInfo } from '../service-client/http.js';
import { loadConfig } from './config.js';
import { displayPath, readInputFile } from './files.js';

export interface AccessTokenOptions {
  /** The token itself (shows in process lists: prefer a file or the environment). */
  readonly accessToken?: string;
  /** A file whose first line is the token. */
  readonly accessTokenFile?: string;
  /** Defaults to process.env (SIGNGATE_ACCESS_TOKEN). */
  readonly env?: NodeJS.ProcessEnv;
}

/** Printable ASCII without spaces: what an HTTP header value may carry as a bearer token. */
const TOKEN_SHAPE = /^[\x21-\x7e]+$/;

/**
 * The token from `accessToken`, the first line of `accessTokenFile`, or SIGNGATE_ACCESS_TOKEN. Its value is
 * never put into an error message.
 * @throws UsageError SG_ERR_USAGE for an empty file or a token with spaces or control characters
 */
export function resolveAccessToken(options: AccessTokenOptions): string | undefined {
  const check = (token: string, where: string) => {
    if (!TOKEN_SHAPE.test(token)) {
      throw new UsageError(`the access token from ${where} contains spaces or control characters (${token.length} characters)`, 'A personal access token is one word: put it alone on the first line of the file.');
    }
    return token;
  };
  if (options.accessToken) return check(options.accessToken.trim(), '--access-token');
  if (options.accessTokenFile) {
    const shown = displayPath(resolve(options.accessTokenFile));
    const text = readInputFile(resolve(options.accessTokenFile), shown).toString('utf8').replace(/^\uFEFF/, '');
    const first = text.split(/\r?\n/).find((line) => line.trim() !== '')?.trim() ?? '';
    if (!first) throw new UsageError(`${shown} is empty`, 'Put the personal access token on the first line of the file.');
    return check(first, shown);
  }
  const fromEnv = (options.env ?? process.env).SIGNGATE_ACCESS_TOKEN?.trim();
  return fromEnv ? check(fromEnv, 'SIGNGATE_ACCESS_TOKEN') : undefined;
}

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
  return createServiceClient({ baseUrl, accessToken, ...(options.onRetry ? { onRetry: options.onRetry } : {}) });
}
