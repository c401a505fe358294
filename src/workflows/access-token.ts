// The personal access token from an option, a file or the environment: apart from the service client, so that
// an offline check does not load the client.
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { rememberSecret } from '../core/secrets.js';
import { readFirstLine } from './files.js';
import { displayPath } from './input-paths.js';

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
      throw new UsageError(
        `the access token from ${where} contains spaces or control characters (${token.length} characters)`,
        'A personal access token is one word: put it alone on the first line of the file.',
      );
    }
    rememberSecret(token);
    return token;
  };
  if (options.accessToken) return check(options.accessToken.trim(), '--access-token');
  if (options.accessTokenFile) {
    const shown = displayPath(resolve(options.accessTokenFile));
    return check(readFirstLine(resolve(options.accessTokenFile), shown, 'Put the personal access token on the first line of the file.'), shown);
  }
  const fromEnv = (options.env ?? process.env).SIGNGATE_ACCESS_TOKEN?.trim();
  return fromEnv ? check(fromEnv, 'SIGNGATE_ACCESS_TOKEN') : undefined;
}
