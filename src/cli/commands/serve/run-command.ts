// `signgate serve`: the reference signing service.
import { resolve } from 'node:path';
import type { Server } from 'node:http';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { isSignGateError, UsageError } from '../../../core/errors.js';
import { maskSecrets, urlForMessage } from '../../../core/secrets.js';
import { buildServer, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../../../server/http/app.js';
import { listenForMetrics } from '../../../server/http/metrics.js';
import { readyAnswer } from '../../../server/http/routes/health-routes.js';
import {
  createServiceLog,
  isLogLevel,
  LOG_LEVELS,
  logConsole,
  logCrashes,
  logProcessWarnings,
  type LogLevel,
  type ServiceLog,
} from '../../../server/service-log.js';
import { paceGarbageCollectionForJobs } from '../../../runtime/heap.js';
import { exposedFiles, exposedKeyPairs, watchServerConfigFile, type ServerConfig } from '../../../server/server-config.js';
import { dataDirRecordKeyPath } from '../../../server/record-key.js';
import { writeServePid } from '../../../server/backends/data-dir/serve-pid.js';
import { rateLimitOverrides } from '../../../server/identity/rate-limit.js';
import type { TokenKeeper } from '../../../server/ports.js';
import { DEFAULT_LEASE_MS, describeDatabase } from '../../../server/backends/postgres/database.js';
import { NODE_ROLES, type NodeRole } from '../../../server/jobs/job-worker.js';
import { ExitCode, exitCodeFor, type ExitCodeValue } from '../../exit-codes.js';
import { numberOption } from '../../options.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { commandWord, databaseFileOption, databaseOf, databaseOption, DEFAULT_DATA_DIR } from './service-options.js';

export interface ServeArgs extends CommonArgs {
  config: string;
  recordKey?: string;
  dataDir: string;
  port: number;
  host: string;
  shutdownTimeout: number;
  trustProxy?: string;
  idleTimeout: number;
  requestTimeout: number;
  rateLimitPerToken?: string;
  rateLimitPerAddress?: string;
  rateLimitLoopback?: boolean;
  database?: string;
  databaseFile?: string;
  blobStore?: string;
  role: NodeRole;
  leaseTimeout: number;
  signingWorkers?: number;
  logLevel?: LogLevel;
  metrics?: boolean;
  metricsListen?: string;
}

/** How long a shutdown waits for uploads in flight before abandoning them (they are cleaned up at the next start). */
const DEFAULT_SHUTDOWN_TIMEOUT_S = 30;

/**
 * `signgate serve`. From its first line to its last, everything it writes is a JSON object a line on standard output
 * (src/server/service-log.ts): the start, its warnings, the log of requests and jobs, and a start it refuses.
 */
async function runServe(args: ServeArgs): Promise<ExitCodeValue> {
  const fromEnvironment = process.env.SIGNGATE_LOG_LEVEL || undefined;
  const log = createServiceLog(args.logLevel ?? (isLogLevel(fromEnvironment) ? fromEnvironment : 'info'));
  logProcessWarnings(log);
  logConsole(log);
  logCrashes(log);
  try {
    if (args.logLevel === undefined && fromEnvironment !== undefined && !isLogLevel(fromEnvironment)) {
      throw new UsageError(`SIGNGATE_LOG_LEVEL=${JSON.stringify(fromEnvironment)} is not a log level`, `Set one of ${LOG_LEVELS.join(', ')}, or unset it.`);
    }
    return await serve(args, log, args.logLevel === undefined && fromEnvironment === undefined);
  } catch (error) {
    const hint = error instanceof UsageError && error.hint ? { hint: maskSecrets(error.hint) } : {};
    const code = isSignGateError(error) ? error.code : 'SG_ERR_INTERNAL';
    const stack = args.verbose && !isSignGateError(error) && error instanceof Error ? { stack: error.stack } : {};
    log.fatal({ code, ...hint, ...stack }, `the service did not start: ${maskSecrets(error instanceof Error ? error.message : String(error))}`);
    return exitCodeFor(error);
  }
}

/** A warning line for each secret file others on this machine may read: `field` and `what` name it, `can` says what a reader can do. */
function warnExposed(log: ServiceLog, field: 'keyPair' | 'recordKey', what: string, files: readonly { path: string; mode: string }[], can: string): void {
  for (const { path, mode } of files)
    log.warn(
      { [field]: path, mode },
      `${what} ${path} is readable by other users of this machine (mode ${mode}); anyone who can read it can ${can}: chmod 600 it (or restrict its ACL)`,
    );
}

/**
 * The signals that stop the service gracefully; SIGHUP reloads, on POSIX. Windows never delivers SIGQUIT (libuv
 * emulates only SIGINT, SIGBREAK, SIGHUP and SIGWINCH there): it gets SIGBREAK, Ctrl+Break, instead.
 */
const STOP_SIGNALS: readonly NodeJS.Signals[] = process.platform === 'win32' ? ['SIGTERM', 'SIGINT', 'SIGBREAK'] : ['SIGTERM', 'SIGINT', 'SIGQUIT'];
/** How often server.json is looked at when no request comes. */
const CONFIG_POLL_MS = 2000;

/** Starts the service and resolves once it stopped (SIGTERM, SIGINT, SIGQUIT); `levelFromConfig`: server.json's logLevel applies. */
async function serve(args: ServeArgs, log: ServiceLog, levelFromConfig: boolean): Promise<ExitCodeValue> {
  // Whatever the service writes (uploads, signed files, job records, temporary files) is its user's alone.
  process.umask(0o077);
  // Fewer full garbage collections while jobs' buffers pass through (src/runtime/heap.ts).
  paceGarbageCollectionForJobs();
  // server.json is read again when it changes (looked at by every request and every 2 s) and at SIGHUP: a valid new
  // configuration applies at once and its changes are logged; a broken one is refused and the last good one kept.
  const configFile = resolve(args.config);
  const watched = watchServerConfigFile(args.config, {
    changed: (changes, config) => {
      const kept =
        !levelFromConfig && changes.some((c) => c.startsWith('logLevel:')) ? ` (logLevel stays ${log.level}: --log-level or SIGNGATE_LOG_LEVEL wins)` : '';
      const say = () => log.info({ config: configFile, changes }, `configuration reloaded: ${changes.length ? changes.join('; ') : 'nothing changed'}${kept}`);
      // Said at the level that lets it through: before a level above info applies, after one at or below it.
      const quieter = levelFromConfig && log.levels.values[config.logLevel ?? 'info']! > log.levels.values.info!;
      if (quieter) say();
      if (levelFromConfig) log.level = config.logLevel ?? 'info';
      if (!quieter) say();
    },
    refused: (error) =>
      log.error(
        { config: configFile, code: isSignGateError(error) ? error.code : 'SG_ERR_CONFIG' },
        `configuration refused, the last good one is kept: ${maskSecrets(error.message)}`,
      ),
  });
  // SIGHUP reads server.json again (POSIX), from now on: a signal sent while the service still starts is not its end.
  if (process.platform !== 'win32') process.on('SIGHUP', () => watched.reload());
  if (levelFromConfig) log.level = watched.current().logLevel ?? 'info';
  warnExposed(log, 'keyPair', 'the key pair', exposedKeyPairs(watched.current()), 'sign as the vendor');
  // The record key the service signs checkpoints with: --record-key, else "recordKey", else the data directory's.
  const recordKeyFile = args.recordKey ? resolve(args.recordKey) : (watched.current().recordKeyFile ?? dataDirRecordKeyPath(resolve(args.dataDir)));
  warnExposed(log, 'recordKey', 'the record key', exposedFiles([recordKeyFile]), "sign checkpoints of the service's record as the service");
  for (const [option, seconds] of [
    ['--idle-timeout', args.idleTimeout],
    ['--request-timeout', args.requestTimeout],
  ] as const) {
    if (!Number.isFinite(seconds) || seconds <= 0)
      throw new UsageError(`${option} ${seconds} is not a positive number of seconds`, 'Pass a timeout in seconds, for example 30.');
  }
  const trustProxy = args.trustProxy
    ?.split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  const database = databaseOf(args);
  if (!Number.isFinite(args.leaseTimeout) || args.leaseTimeout <= 0)
    throw new UsageError(`--lease-timeout ${args.leaseTimeout} is not a positive number of seconds`, 'Pass a lease in seconds, for example 30.');
  const metrics = metricsOf(args, watched.current());
  const app = await buildServer({
    ...(database ? { database } : {}),
    ...(args.blobStore ? { blobStore: args.blobStore } : {}),
    role: args.role,
    leaseMs: args.leaseTimeout * 1000,
    config: watched.current,
    dataDir: resolve(args.dataDir),
    loggerInstance: log,
    ...(trustProxy?.length ? { trustProxy } : {}),
    timeouts: { idleMs: args.idleTimeout * 1000, requestMs: args.requestTimeout * 1000 },
    rateLimits: rateLimitOverrides({ perToken: args.rateLimitPerToken, perAddress: args.rateLimitPerAddress, loopback: args.rateLimitLoopback }),
    ...(args.signingWorkers === undefined ? {} : { signingWorkers: args.signingWorkers }),
    ...(args.recordKey ? { recordKeyFile: resolve(args.recordKey) } : {}),
    ...(metrics ? { metrics: metrics.apart ? 'apart' : 'route' } : {}),
  });
  let address: string;
  let metricsUrl: string | undefined;
  let metricsServer: Server | undefined;
  try {
    address = await app.listen({ port: args.port, host: args.host }).catch((error: unknown) => refusedListen(error, args.host, args.port, '--port', '--host'));
    if (metrics?.apart) {
      const { host, port } = metrics.apart;
      const refused = (error: unknown) => refusedListen(error, host, port, '--metrics-listen', '--metrics-listen');
      // The metrics listener is the operator's: its /readyz has every detail.
      const readyz = () => readyAnswer({ ...app.signgate.readiness, role: args.role }, true, '/readyz', app.log);
      ({ url: metricsUrl, server: metricsServer } = await listenForMetrics(app.signgate.metrics!, host, port, readyz).catch(refused));
    } else if (metrics) metricsUrl = `${address}/metrics`;
  } catch (error) {
    await app.close().catch(() => {});
    throw error;
  }
  // The stop signals are the service's from the moment it listens, before its start line says so.
  const stopped = new Promise<string>((done) => {
    const stop = (signal: string) => {
      app.log.info({ signal }, 'shutting down: no new requests, finishing uploads in flight');
      const deadline = setTimeout(() => {
        app.log.warn('shutdown timeout: abandoning uploads still in flight');
        app.server.closeAllConnections();
      }, args.shutdownTimeout * 1000);
      deadline.unref();
      // A scraper's kept-alive connection would keep the process alive: closed with the listener.
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      void app.close().then(() => done(signal));
    };
    for (const name of STOP_SIGNALS) process.once(name, () => stop(name));
    // On Windows SIGHUP means the console was closed: a graceful stop.
    if (process.platform === 'win32') process.once('SIGHUP', () => stop('SIGHUP'));
    // A node nobody sends requests to sees an edit too, and says so (the file's equivalent of SIGHUP on Windows).
    setInterval(() => watched.current(), CONFIG_POLL_MS).unref();
  });
  const where = `data in ${resolve(args.dataDir)}${database ? `, state in ${describeDatabase(database)}` : ''}${args.blobStore ? `, files in ${urlForMessage(args.blobStore.split('?')[0]!)}` : ''}`;
  const shown = { role: args.role, address, dataDir: resolve(args.dataDir), ...(metricsUrl ? { metrics: metricsUrl } : {}) };
  const andMetrics = metricsUrl ? `; metrics at ${metricsUrl}` : '';
  const apiOnly = args.role === 'api' ? '; signs nothing: run workers' : '';
  if (args.role === 'worker') log.info(shown, `signgate serve: signing worker, health at ${address}/healthz (${where})${andMetrics}`);
  else {
    log.info(shown, `signgate serve: API at ${address}${app.signgate.apiPrefix}, documentation at ${address}/docs (${where}${apiOnly})${andMetrics}`);
    for (const note of noTokensYet(args, watched.current(), app.signgate.tokens)) log.warn({ dataDir: resolve(args.dataDir) }, note);
  }
  // Who runs on this data directory, for the operator's commands that must not change it behind a service.
  const removePid = database ? undefined : writeServePid(resolve(args.dataDir));
  const signal = await stopped;
  removePid?.();
  log.info({ signal }, 'signgate serve stopped');
  return ExitCode.Ok;
}

/** A service whose data folder holds no tokens refuses every token (but OpenID Connect's): said at its start, with the cure. */
function noTokensYet(args: ServeArgs, config: ServerConfig, tokens: TokenKeeper): string[] {
  if (config.oidc || !tokens.holdsNone?.()) return [];
  const dataDir = commandWord(resolve(args.dataDir));
  const create = `signgate serve token create --config ${commandWord(resolve(args.config))} --data-dir ${dataDir} --org <organization> --user <user>`;
  return [`note: ${dataDir} holds no tokens yet: every token is refused until one is made for this data folder: ${create}`];
}

/**
 * Whether the service serves metrics, and where: --metrics (or --no-metrics) and --metrics-listen win over
 * server.json's `metrics`. `apart`: a listener of their own.
 * @throws UsageError for a --metrics-listen that is not host:port
 */
function metricsOf(args: ServeArgs, config: ServerConfig): { apart?: { host: string; port: number } } | undefined {
  const enabled = args.metrics ?? (args.metricsListen !== undefined || config.metrics.enabled);
  if (!enabled) return undefined;
  const listen = args.metricsListen ?? config.metrics.listen;
  if (listen === undefined) return {};
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(listen);
  if (!m || Number(m[3]) > 65535) {
    const hint = 'Pass an address and a port, for example 127.0.0.1:9464 (this machine only) or [::1]:9464.';
    throw new UsageError(`--metrics-listen ${JSON.stringify(listen)} is not host:port`, hint);
  }
  return { apart: { host: m[1] ?? m[2]!, port: Number(m[3]) } };
}

/**
 * A listener that could not open its port, said as what to do.
 * @throws UsageError for a port in use, a port the user may not open and an address not of this machine; else the error
 */
function refusedListen(error: unknown, host: string, port: number, portOption: string, hostOption: string): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    throw new UsageError(`port ${port} on ${host} is in use by another program`, `Stop that program, or pass another ${portOption} (0 picks a free one).`);
  }
  if (code === 'EACCES') {
    const hint = `Ports below 1024 need privileges: pass a ${portOption} of 1024 or above and put a proxy in front.`;
    throw new UsageError(`port ${port} on ${host} may not be opened by this user`, hint);
  }
  if (code === 'EADDRNOTAVAIL') {
    throw new UsageError(`${host} is not an address of this machine`, `Pass ${hostOption} 127.0.0.1 (this machine only) or 0.0.0.0 (every interface).`);
  }
  throw error;
}

export const runCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, ServeArgs> => ({
  command: '$0',
  describe: 'Run the reference signing service',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', {
        type: 'string',
        demandOption: true,
        describe: 'Server configuration (schemas/server-config.schema.json; `signgate serve init` writes one)',
      })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Where jobs and token hashes are kept' })
      .option('port', {
        type: 'number',
        default: 8080,
        coerce: numberOption('port', { integer: true, min: 0, max: 65535 }),
        describe: 'TCP port (0 picks a free one)',
      })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on (0.0.0.0 for every interface; put TLS in front)' })
      .option('shutdown-timeout', {
        type: 'number',
        default: DEFAULT_SHUTDOWN_TIMEOUT_S,
        coerce: numberOption('shutdown-timeout', { min: 0 }),
        describe: 'Seconds to wait for uploads in flight on SIGTERM/SIGINT',
      })
      .option('trust-proxy', {
        type: 'string',
        describe: 'Addresses or CIDR ranges of the reverse proxy, comma-separated, whose X-Forwarded-For/-Host/-Proto are believed (default: none)',
      })
      .option('idle-timeout', {
        type: 'number',
        default: DEFAULT_IDLE_TIMEOUT_MS / 1000,
        coerce: numberOption('idle-timeout', { min: 0.001 }),
        describe: 'Seconds an upload may send nothing before it is answered 408 and closed',
      })
      .option('request-timeout', {
        type: 'number',
        default: DEFAULT_REQUEST_TIMEOUT_MS / 1000,
        coerce: numberOption('request-timeout', { min: 0.001 }),
        describe: 'Seconds a whole request may take to arrive',
      })
      .option('rate-limit-per-token', {
        type: 'string',
        describe: "Requests per access token as <max>/<seconds>, or off (default: the configuration's rateLimits, else 300/60)",
      })
      .option('rate-limit-per-address', {
        type: 'string',
        describe: "Requests per client address as <max>/<seconds>, or off (default: the configuration's, else 600/60)",
      })
      .option('rate-limit-loopback', { type: 'boolean', describe: 'Count requests from 127.0.0.0/8 and ::1 too (default: not counted)' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('blob-store', {
        type: 'string',
        describe:
          'With --database: job files in S3-compatible object storage, s3://bucket/prefix?endpoint=URL&region=NAME (credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)',
      })
      .option('role', {
        type: 'string',
        choices: NODE_ROLES,
        default: 'all',
        describe: 'api: accept, list and serve jobs; worker: sign queued jobs; all: both (api and worker need --database)',
      })
      .option('lease-timeout', {
        type: 'number',
        default: DEFAULT_LEASE_MS / 1000,
        coerce: numberOption('lease-timeout', { min: 0.1 }),
        describe: 'With --database: seconds after which the job of a worker (or the upload of an API node) that stopped answering is taken over',
      })
      .option('signing-workers', {
        type: 'number',
        coerce: numberOption('signing-workers', { integer: true, min: 0, max: 256 }),
        describe: 'Threads that sign, as many jobs at once (default: signingWorkers of the configuration, else one per core; 0: in the service thread)',
      })
      .option('record-key', {
        type: 'string',
        describe:
          'The record key file every node of the deployment signs checkpoints with (serve record key create makes it); default: "recordKey" of the configuration, else the data directory\'s record-key.pem',
      })
      .option('log-level', {
        type: 'string',
        choices: LOG_LEVELS,
        describe: 'Log level: debug adds status polls, warn leaves out what went well (default: $SIGNGATE_LOG_LEVEL, else logLevel of server.json, else info)',
      })
      .option('metrics', {
        type: 'boolean',
        describe: "Serve GET /metrics (Prometheus text, no token) on the service's port (default: server.json's metrics, else off)",
      })
      .option('metrics-listen', {
        type: 'string',
        describe: "Serve the metrics on a listener of their own, host:port (127.0.0.1:9464), not on the service's port",
      })
      .example('$0 serve --config server.json --data-dir /var/lib/signgate --port 8443', 'run the service')
      .example('$0 serve --config server.json --trust-proxy 127.0.0.1', 'run it behind a reverse proxy on this machine')
      .example(
        'SIGNGATE_DATABASE_URL=postgres://signgate@db/signgate $0 serve --config server.json --data-dir /mnt/shared --role api',
        'an API node of several (docs/deploy.md)',
      )
      .example(
        '$0 serve --config server.json --data-dir /var/lib/signgate --database-file /etc/signgate/database.txt',
        'the connection string from a file, out of process lists',
      )
      .example(
        '$0 serve --config server.json --metrics-listen 127.0.0.1:9464 --log-level warn',
        'metrics for a Prometheus on this machine, a quieter log',
      ) as unknown as Argv<ServeArgs>,
  handler: async (args: ArgumentsCamelCase<ServeArgs>) => setExit(await runServe(args)),
});
