// The personal access token from an option, a file or the environment: apart from the service client, so that
// an offline check does not load the client. A secret kept in a file (the token, the service's connection string)
// is the file's first line: out of process lists and shell histories.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../core/errors.js';
import { rememberSecret } from '../core/secrets.js';
import { decodeText, describeNonPrintable } from '../core/text-encoding.js';
import { readError } from './files.js';

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
      // Which character, never the token: "a space at character 41".
      throw new UsageError(
        `the access token from ${where} holds ${describeNonPrintable(token) ?? 'a character a token cannot hold'} (${token.length} characters); a token is one word of printable ASCII`,
        'Put the personal access token alone on the first line of the file (UTF-8, or UTF-16 as Windows PowerShell writes it, are both read), without spaces or quotes.',
      );
    }
    rememberSecret(token);
    return token;
  };
  if (options.accessToken) return check(options.accessToken.trim(), '--access-token');
  if (options.accessTokenFile) {
    const file = options.accessTokenFile;
    return check(readFirstLine(file, 'Put the personal access token on the first line of the file.'), file);
  }
  const fromEnv = (options.env ?? process.env).SIGNGATE_ACCESS_TOKEN?.trim();
  return fromEnv ? check(fromEnv, 'SIGNGATE_ACCESS_TOKEN') : undefined;
}

/** A scheme of two letters or more and a colon (`postgres:`), not a drive letter (`C:`). */
const URL_LIKE = /^([a-z][a-z0-9+.-]+):/i;

/**
 * The first line of a file that is not blank, trimmed (UTF-8, UTF-16 with a byte-order mark as Windows PowerShell 5.1
 * and Notepad write it, CRLF allowed): how a token or a connection string is read from a file that keeps it out of process lists. The file is shown as the user named it
 * (`path`, relative to the working directory), or, when `path` looks like a URL, by its scheme alone; its content
 * never is.
 * @throws UsageError when the file holds no such line (`hint` says what belongs there); SignGateError SG_ERR_IO_READ
 */
export function readFirstLine(path: string, hint: string): string {
  let text: string;
  try {
    text = decodeText(readFileSync(resolve(path))).text;
  } catch (cause) {
    // A connection string given where its file belongs is no file name to repeat: only its scheme is shown.
    const scheme = URL_LIKE.exec(path)?.[1];
    throw readError(cause, scheme ? `a ${scheme}: URL where a file name belongs (not shown)` : path);
  }
  const first = text
    .split(/\r?\n/)
    .find((line) => line.trim() !== '')
    ?.trim();
  if (!first) throw new UsageError(`${path} is empty`, hint);
  return first;
}
