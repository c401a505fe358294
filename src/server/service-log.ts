// The service's log: one JSON object a line (pino) on standard output, written synchronously (a kill -9 loses no
// line), from `signgate serve`'s first line to its last: the start, warnings, requests, jobs, a refused start, a
// crash, and Node's own process warnings. The level is the operator's (trace … fatal, or silent). Tokens, cookies
// and a URL's query never reach it.
import { format } from 'node:util';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { maskSecrets } from '../core/secrets.js';

/** pino's levels, from the most to the least said; `silent` writes nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** The log of a `signgate serve` process (pino's logger; its level may be changed). */
export type ServiceLog = Logger;

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value);
}

/** A URL as the log and answers show it: without its query (a token sent as ?access_token=… must not be kept). */
export function withoutQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[query not logged]`;
}

/**
 * What keeps secrets out of the service's log: fastify logs req.headers at most, @fastify/multipart logs busboy's
 * options (with all headers) at trace level; the request is logged without its URL's query.
 */
export const SERVICE_LOG_OPTIONS = {
  serializers: {
    req: (req: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) => ({
      method: req.method,
      url: withoutQuery(req.url),
      host: req.host,
      remoteAddress: req.ip,
      remotePort: req.socket?.remotePort,
    }),
  },
  redact: {
    paths: [
      'req.headers.authorization',
      'req.headers.cookie',
      'headers.authorization',
      'busboyOptions.headers.authorization',
      'busboyOptions.headers.cookie',
      '*.headers.authorization',
    ],
    censor: '[redacted]',
  },
} satisfies LoggerOptions;

/** The log of a `signgate serve` process: JSON lines on standard output, written as they are made. */
export function createServiceLog(level: LogLevel): ServiceLog {
  return pino({ ...SERVICE_LOG_OPTIONS, level }, pino.destination({ dest: 1, sync: true }));
}

/**
 * Node's process warnings (deprecations, a dependency's notices) as log lines at warn level instead of its
 * plain-text lines on standard error. Left alone when warnings are off (--no-warnings, NODE_NO_WARNINGS=1).
 * The AWS SDK's notice that its releases after January 2027 need Node 22 is not repeated on every start of a node
 * that uses object storage: the SDK this package installs supports Node 20, and docs/deploy.md says which Node to run.
 */
export function logProcessWarnings(log: ServiceLog): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (process.listenerCount('warning') === 0) return;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'DeprecationWarning' && process.noDeprecation) return;
    log.warn({ warning: { name: warning.name, code: (warning as NodeJS.ErrnoException).code } }, warning.message);
  });
}

/**
 * What a library writes with `console` (the AWS SDK's socket and timeout notices during an object storage outage,
 * for one) as log lines of the same level with `"source": "console"`, instead of plain text on standard output or
 * error: every line the process writes is one JSON object. Secrets the text may hold are masked.
 */
export function logConsole(log: ServiceLog): void {
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]) =>
      log[level]({ source: 'console' }, maskSecrets(format(...args)));
  console.debug = to('debug');
  console.trace = to('debug');
  console.log = to('info');
  console.info = to('info');
  console.warn = to('warn');
  console.error = to('error');
}

/**
 * An error that escaped everything (a bug) as the log's last line, at fatal level, instead of Node's stack on
 * standard error; the process then ends with code 1 as Node's own handler would.
 */
export function logCrashes(log: ServiceLog): void {
  const crash = (error: unknown, origin: string) => {
    log.fatal({ err: error instanceof Error ? error : { message: String(error) }, origin }, 'the service crashed');
    process.exit(1);
  };
  process.on('uncaughtException', crash);
}
