// `signgate serve`: the reference signing service; `serve token create`: a new access token; `serve init`: a
// first configuration with a fresh sandbox key pair.
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { isSignGateError, UsageError } from '../../core/errors.js';
import type { Server } from 'node:http';
import { buildServer, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from '../../server/http/app.js';
import { listenForMetrics } from '../../server/http/metrics.js';
import { createServiceLog, isLogLevel, LOG_LEVELS, logCrashes, logProcessWarnings, type LogLevel, type ServiceLog } from '../../server/service-log.js';
import { paceGarbageCollectionForJobs } from '../../runtime/heap.js';
import { DEFAULT_SERVICE_NAME, exposedKeyPairs, USER_ROLE, watchServerConfigFile, type ServerConfig } from '../../server/server-config.js';
import { rateLimitOverrides } from '../../server/identity/rate-limit.js';
import { TokenStore, type TokenKeeper } from '../../server/identity/token-store.js';
import { DEFAULT_LEASE_MS, describeDatabase, openDatabase, openSignatureRecord } from '../../server/storage/open-stores.js';
import { recordFileLines, verifyRecordFileLines, type RecordVerification, type SignatureEntry } from '../../record/signature-record.js';
import { parseCheckpoint } from '../../record/checkpoint.js';
import { CheckpointContinuation } from '../../record/record-continuation.js';
import { recordCheckpoint, recordContinuation } from '../../server/storage/record-checkpoint.js';
import { loadRecordKey, readRecordKeyFile, readRecordPublicKey, RECORD_PUBLIC_KEY_FILE } from '../../server/storage/record-key.js';
import { recordKeyCommand } from './serve-record-key.js';
import { formatVerifierKey } from '../../record/checkpoint.js';
import { PgTokenStore } from '../../server/storage/postgres/pg-tokens.js';
import { NODE_ROLES, type NodeRole } from '../../server/jobs/store.js';
import { ExitCode, exitCodeFor, type ExitCodeValue } from '../exit-codes.js';
import { createStrongNameKeyPair, parseStrongNameKeyFile } from '../../strongname/key-blob.js';
import { PKCS11_PIN_ENV } from '../../strongname/pkcs11/uri.js';
import { openTokenKey } from '../../workflows/keys.js';
import { publicKeyToken } from '../../strongname/token.js';
import { AtomicFileWriter, displayPath, readerOf, readFirstLine, readInputFile, withInputFile, writeFileAtomic } from '../../workflows/files.js';
import { maskSecrets, urlForMessage } from '../../core/secrets.js';
import { resolveAccessToken } from '../../workflows/access-token.js';
import { numberOption } from '../options.js';
import type { Io } from '../output.js';
import type { CommonArgs } from './common.js';

interface ServeArgs extends CommonArgs {
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

/**
 * The data folder of every serve command that takes --data-dir (serve, token create and revoke, record): one default,
 * so that a token made without --data-dir is one the service started without it knows (from the same folder).
 */
export const DEFAULT_DATA_DIR = 'signgate-data';

/** A path as one word of a command line: quoted when it holds a space or a character a shell would act on. */
export function commandWord(word: string): string {
  if (/^[\w@%+=:,./\\-]+$/.test(word)) return word;
  return /["$`]/.test(word) ? `'${word.replace(/'/g, `'\\''`)}'` : `"${word}"`;
}

/** The token store of --database, or of the data directory; `close` ends a database connection. */
async function tokenKeeper(args: { dataDir: string; database?: string }): Promise<{ keeper: TokenKeeper; close: () => Promise<void> }> {
  if (!args.database) return { keeper: new TokenStore(resolve(args.dataDir)), close: async () => {} };
  const pool = await openDatabase(args.database);
  return { keeper: new PgTokenStore(pool), close: () => pool.end() };
}

/** --database, with --database-file and SIGNGATE_DATABASE_URL beside it (a password stays out of the process list). */
const databaseOption = {
  type: 'string',
  describe: 'PostgreSQL connection string: jobs, queue and tokens in the database for several nodes (a password here shows in process lists: prefer --database-file or $SIGNGATE_DATABASE_URL)',
} as const;
const databaseFileOption = { type: 'string', describe: 'A file whose first line is the PostgreSQL connection string (keep it readable by the service only)' } as const;

/**
 * The connection string from --database, the first line of --database-file, or SIGNGATE_DATABASE_URL.
 * @throws UsageError for both options at once, or a file that cannot be read or is empty (its content never shown)
 */
function databaseOf(args: { database?: string; databaseFile?: string }): string | undefined {
  if (args.database !== undefined && args.databaseFile !== undefined) throw new UsageError('--database and --database-file are both given', 'Pass one of them (prefer --database-file: a password on the command line shows in process lists).');
  if (args.databaseFile !== undefined) {
    return readFirstLine(resolve(args.databaseFile), displayPath(resolve(args.databaseFile)), 'Put the connection string (postgres://user:password@host:5432/database) on the first line of the file.');
  }
  return args.database ?? (process.env.SIGNGATE_DATABASE_URL || undefined);
}

interface TokenCreateArgs extends CommonArgs {
  config: string;
  dataDir: string;
  database?: string;
  databaseFile?: string;
  org: string;
  user: string;
  days: number;
}

/** How long a shutdown waits for uploads in flight before abandoning them (they are cleaned up at the next start). */
const DEFAULT_SHUTDOWN_TIMEOUT_S = 30;

/**
 * `signgate serve`. From its first line to its last, everything it writes is a JSON object a line on standard output
 * (src/server/service-log.ts): the start, its warnings, the log of requests and jobs, and a start it refuses.
 */
export async function runServe(args: ServeArgs): Promise<ExitCodeValue> {
  const fromEnvironment = process.env.SIGNGATE_LOG_LEVEL || undefined;
  const log = createServiceLog(args.logLevel ?? (isLogLevel(fromEnvironment) ? fromEnvironment : 'info'));
  logProcessWarnings(log);
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

/** Starts the service and resolves once it stopped (SIGTERM, SIGINT); `levelFromConfig`: server.json's logLevel applies. */
async function serve(args: ServeArgs, log: ServiceLog, levelFromConfig: boolean): Promise<ExitCodeValue> {
  // Whatever the service writes (uploads, signed files, job records, temporary files) is its user's alone.
  process.umask(0o077);
  // Fewer full garbage collections while jobs' buffers pass through (src/runtime/heap.ts).
  paceGarbageCollectionForJobs();
  const watched = watchServerConfigFile(args.config);
  if (levelFromConfig) log.level = watched.current().logLevel ?? 'info';
  for (const { path, mode } of exposedKeyPairs(watched.current())) {
    const what = `the key pair ${path} is readable by other users of this machine (mode ${mode})`;
    log.warn({ keyPair: path, mode }, `${what}; anyone who can read it can sign as the vendor: chmod 600 it (or restrict its ACL)`);
  }
  for (const [option, seconds] of [['--idle-timeout', args.idleTimeout], ['--request-timeout', args.requestTimeout]] as const) {
    if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`${option} ${seconds} is not a positive number of seconds`, 'Pass a timeout in seconds, for example 30.');
  }
  const trustProxy = args.trustProxy?.split(',').map((a) => a.trim()).filter(Boolean);
  const database = databaseOf(args);
  if (!Number.isFinite(args.leaseTimeout) || args.leaseTimeout <= 0) throw new UsageError(`--lease-timeout ${args.leaseTimeout} is not a positive number of seconds`, 'Pass a lease in seconds, for example 30.');
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
      ({ url: metricsUrl, server: metricsServer } = await listenForMetrics(app.signgate.metrics!, host, port).catch(refused));
    } else if (metrics) metricsUrl = `${address}/metrics`;
  } catch (error) {
    await app.close().catch(() => {});
    throw error;
  }
  const where = `data in ${resolve(args.dataDir)}${database ? `, state in ${describeDatabase(database)}` : ''}${args.blobStore ? `, files in ${urlForMessage(args.blobStore.split('?')[0]!)}` : ''}`;
  const shown = { role: args.role, address, dataDir: resolve(args.dataDir), ...(metricsUrl ? { metrics: metricsUrl } : {}) };
  const andMetrics = metricsUrl ? `; metrics at ${metricsUrl}` : '';
  const apiOnly = args.role === 'api' ? '; signs nothing: run workers' : '';
  if (args.role === 'worker') log.info(shown, `signgate serve: signing worker, health at ${address}/healthz (${where})${andMetrics}`);
  else {
    log.info(shown, `signgate serve: API at ${address}${app.signgate.apiPrefix}, documentation at ${address}/docs (${where}${apiOnly})${andMetrics}`);
    for (const note of noTokensYet(args, watched.current(), app.signgate.tokens)) log.warn({ dataDir: resolve(args.dataDir) }, note);
  }
  const signal = await new Promise<string>((done) => {
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
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
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

export async function runTokenCreate(args: TokenCreateArgs, io: Io): Promise<ExitCodeValue> {
  const config = watchServerConfigFile(args.config).current();
  const org = config.organizations.get(args.org);
  if (!org) throw new UsageError(`no organization ${JSON.stringify(args.org)} in ${args.config}`, `Known organizations: ${[...config.organizations.keys()].join(', ')}.`);
  const roles = org.users.get(args.user);
  if (!roles) throw new UsageError(`no user ${JSON.stringify(args.user)} in organization ${args.org}`, `Add the user to the organization's "users" in ${args.config} first.`);
  if (!Number.isInteger(args.days) || args.days < 1 || args.days > 366) throw new UsageError(`--days ${args.days} is not a whole number of days from 1 to 366`, 'Tokens have a fixed lifetime; make a new one when it expires.');
  const database = databaseOf(args);
  const dataDir = resolve(args.dataDir);
  const newFolder = !database && !existsSync(dataDir);
  const { keeper, close } = await tokenKeeper({ dataDir, ...(database ? { database } : {}) });
  let made;
  try {
    made = keeper.create(args.org, args.user, args.days);
    await made.stored;
  } finally {
    await close();
  }
  const { token, expiresAt } = made;
  io.out(token);
  io.err(`Token for ${args.user} in ${args.org}, valid until ${expiresAt}. It is shown only now; the service keeps only its hash.`);
  if (!database) {
    const kept = `Its hash is in ${join(dataDir, 'tokens.json')}${newFolder ? ', a data folder made just now' : ''}`;
    io.err(`${kept}: the service knows the token when it runs with --data-dir ${commandWord(dataDir)}.`);
  }
  if (!roles.includes(USER_ROLE)) io.err(`warning: ${args.user} does not hold the role ${USER_ROLE}; the token is refused until the role is granted.`);
  return ExitCode.Ok;
}

interface TokenRevokeArgs extends CommonArgs {
  config?: string;
  dataDir: string;
  database?: string;
  databaseFile?: string;
  token?: string;
  tokenFile?: string;
  org?: string;
  user?: string;
}

/** Revokes one token (--token, --token-file) or every token of a user (--org and --user); running services refuse it within seconds. */
export async function runTokenRevoke(args: TokenRevokeArgs, io: Io): Promise<ExitCodeValue> {
  // From a file, read as --access-token-file is: the token stays out of the process list and the shell history.
  const token = args.token ?? (args.tokenFile === undefined ? undefined : resolveAccessToken({ accessTokenFile: args.tokenFile, env: {} }));
  if (token === undefined && (args.org === undefined || args.user === undefined)) {
    throw new UsageError('serve token revoke needs --token-file (or --token), or --org and --user', 'Pass a file holding the token to revoke, or --org and --user to revoke every token of that user.');
  }
  const selector = token !== undefined ? { token } : { organization: args.org!, user: args.user! };
  // The service is named as `token create` names it: --config (checked when given), --data-dir or --database.
  if (args.config !== undefined) {
    const config = watchServerConfigFile(args.config).current();
    if (args.org !== undefined && !config.organizations.has(args.org)) throw new UsageError(`no organization ${JSON.stringify(args.org)} in ${args.config}`, `Known organizations: ${[...config.organizations.keys()].join(', ')}.`);
  }
  const database = databaseOf(args);
  // A data directory without a token store is not the service's: say so, and make nothing there.
  const store = join(resolve(args.dataDir), 'tokens.json');
  if (!database && !existsSync(store)) {
    throw new UsageError(
      `${displayPath(resolve(args.dataDir))} holds no tokens (no ${displayPath(store)}): it is not the data directory of a service that made tokens; nothing was revoked`,
      'Pass the --data-dir (or --database) the service runs with and `serve token create` was given: the token hashes are kept there.',
    );
  }
  const { keeper, close } = await tokenKeeper({ dataDir: args.dataDir, ...(database ? { database } : {}) });
  let count: number;
  try {
    count = await keeper.revoke(selector);
  } finally {
    await close();
  }
  const what = 'token' in selector ? 'the token' : `the tokens of ${args.user} in ${args.org}`;
  const where = database ? describeDatabase(database) : displayPath(resolve(args.dataDir));
  io.err(count ? `Revoked ${count} token(s): ${what}. Running services refuse them within seconds.` : `Nothing to revoke: ${what} is not known in ${where} or is already revoked; is it the --data-dir (or --database) the service runs with?`);
  return count ? ExitCode.Ok : ExitCode.Usage;
}

interface RecordArgs extends CommonArgs {
  dataDir: string;
  database?: string;
  databaseFile?: string;
  file?: string;
  output?: string;
  checkpoint?: string;
  publicKey?: string;
  recordKey?: string;
  config?: string;
}

/**
 * The record key a record command signs or shows with: --record-key, else the server.json --config names ("recordKey"),
 * else the data directory's. Only read: never made or rewritten here.
 */
function recordKeyOf(args: RecordArgs) {
  const hint = 'Pass the record key file the service signs with (--record-key, or --config with the server.json that names it as "recordKey"), or the data directory the service uses (--data-dir).';
  if (args.recordKey) return readRecordKeyFile(resolve(args.recordKey), hint);
  const configured = args.config ? watchServerConfigFile(args.config).current().recordKeyFile : undefined;
  return configured ? readRecordKeyFile(configured, hint) : loadRecordKey(resolve(args.dataDir));
}

/**
 * `serve record verify`: checks the signature record's chain (in the database, the data directory, or an exported
 * file) and prints how many entries verified and the head, or the first break; exit 0 intact, 1 broken.
 */
export async function runRecordVerify(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  // With --checkpoint: the checkpoint saved earlier, and the record key's public half that signed it.
  const saved = args.checkpoint === undefined ? undefined : { path: displayPath(resolve(args.checkpoint)), text: readInputFile(resolve(args.checkpoint), displayPath(resolve(args.checkpoint))).toString('utf8') };
  const verifier = () => {
    if (args.publicKey !== undefined) return readRecordPublicKey(args.publicKey);
    // The deployment's configured key ("recordKey", or --record-key) wins over a data directory's own .pub.
    if (args.recordKey !== undefined || (args.config !== undefined && watchServerConfigFile(args.config).current().recordKeyFile)) return recordKeyOf(args).verifier;
    if (args.file !== undefined) throw new UsageError('--checkpoint with --file needs --public-key', "Pass the service's record public key (its data directory's record-key.pub, or what `signgate serve record public-key` prints).");
    return readRecordPublicKey(join(resolve(args.dataDir), RECORD_PUBLIC_KEY_FILE));
  };
  if (args.file !== undefined) {
    if (database) throw new UsageError('--file and a database are both given', 'Pass --file to check an exported record, or --database to check the service\'s record, not both.');
    const path = resolve(args.file);
    // The checkpoint before the record: its size says which first entries its root covers, hashed as they are read.
    const continuation = saved && new CheckpointContinuation(parseCheckpoint(saved.text, verifier(), saved.path));
    const add = continuation && ((entry: SignatureEntry) => continuation.add(entry));
    const result = withInputFile(path, displayPath(path), (fd) => verifyRecordFileLines(recordFileLines(readerOf(fd)), displayPath(path), undefined, add));
    const problem = continuation && !result.break ? continuation.problem(displayPath(path), saved!.path) : undefined;
    return printVerification(displayPath(path), result, io, saved ? undefined : 'an exported record has no head: entries cut off its end at a line boundary cannot be noticed (pass --checkpoint with one you saved to notice them)', saved && { path: saved.path, problem });
  }
  const { record, close } = await openSignatureRecord({ dataDir: resolve(args.dataDir), ...(database ? { database } : {}) });
  try {
    const result = await record.verify();
    if (!saved || result.break) return printVerification(record.where, result, io);
    const problem = await recordContinuation(record, result, parseCheckpoint(saved.text, verifier(), saved.path), saved.path);
    return printVerification(record.where, result, io, undefined, { path: saved.path, problem });
  } finally {
    await close();
  }
}

function printVerification(where: string, result: RecordVerification, io: Io, note?: string, checkpoint?: { path: string; problem: string | undefined }): ExitCodeValue {
  if (result.break) {
    io.out(`signature record ${where}: BROKEN after ${result.entries} verified ${result.entries === 1 ? 'entry' : 'entries'}: ${result.break.message}`);
    io.err('Restore the record from a backup, or find out who changed it; the entries before the break are intact.');
    return ExitCode.Findings;
  }
  if (checkpoint?.problem) {
    io.out(`signature record ${where}: NOT A CONTINUATION of the checkpoint ${checkpoint.path}: ${checkpoint.problem}`);
    io.err('The record you hold is not the one the checkpoint was signed over, continued: find out who changed it, and restore it from a backup.');
    return ExitCode.Findings;
  }
  io.out(`signature record ${where}: ${result.entries} ${result.entries === 1 ? 'entry' : 'entries'}, chain intact${result.entries ? `, last entry ${result.head.seq} (hash ${result.head.hash})` : ''}${checkpoint ? `, continues the checkpoint ${checkpoint.path}` : ''}`);
  if (note) io.err(`note: ${note}`);
  return ExitCode.Ok;
}

/** `serve record checkpoint`: the record's checkpoint now, signed by the record key (made at the service's first start). */
export async function runRecordCheckpoint(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  const key = recordKeyOf(args);
  const { record, close } = await openSignatureRecord({ dataDir: resolve(args.dataDir), ...(database ? { database } : {}) });
  let text: string;
  try {
    text = await recordCheckpoint(record, key);
  } finally {
    await close();
  }
  if (args.output) {
    writeFileAtomic(resolve(args.output), [text]);
    io.err(`checkpoint of the signature record ${record.where} written to ${displayPath(resolve(args.output))}`);
  } else io.out(text.replace(/\n$/, ''));
  return ExitCode.Ok;
}

/** `serve record public-key`: the record key's public half, as verifiers pass it (a C2SP verifier key). */
export async function runRecordPublicKey(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  io.out(formatVerifierKey(recordKeyOf(args).verifier));
  return ExitCode.Ok;
}

/** `serve record export`: every entry of the record as JSON lines, to stdout or --output (atomically), for `audit --record`. */
export async function runRecordExport(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  const { record, close } = await openSignatureRecord({ dataDir: resolve(args.dataDir), ...(database ? { database } : {}) });
  let output: AtomicFileWriter | undefined;
  let count: number;
  try {
    // Written as the record is read, a batch at a time (a record may be larger than memory), put in place at the end.
    output = args.output === undefined ? undefined : new AtomicFileWriter(resolve(args.output));
    // Only a record that verifies is exported: an auditor must not be handed a broken chain as if it were whole.
    const verified = await record.verify();
    if (verified.break) throw new UsageError(`the signature record ${record.where} does not verify: ${verified.break.message}`, 'Run `signgate serve record verify` for the details; restore the record from a backup before exporting it.');
    count = await record.exportTo((lines) => {
      if (output) output.write(lines);
      else io.out(lines.replace(/\n$/, ''));
    });
    output?.commit();
  } catch (error) {
    output?.abort();
    throw error;
  } finally {
    await close();
  }
  if (args.output) {
    io.err(`${count} ${count === 1 ? 'entry' : 'entries'} of the signature record ${record.where} written to ${displayPath(resolve(args.output))}`);
  }
  return ExitCode.Ok;
}

interface InitArgs extends CommonArgs {
  dir: string;
  vendor: string;
  optionId: number;
  force: boolean;
  pkcs11?: string;
}

/** Writes server.json and a fresh key pair for one sandbox organization: a service that runs at once. */
export function runServeInit(args: InitArgs, io: Io): ExitCodeValue {
  const dir = resolve(args.dir);
  const configPath = join(dir, 'server.json');
  const keyName = args.pkcs11 === undefined ? `${args.optionId}_keypair.snk` : `${args.optionId}_public.snk`;
  // What add-in developers delay-sign with, beside the key pair (a key in a token: the only key file).
  const publicName = `${args.optionId}_public.snk`;
  for (const path of new Set([configPath, join(dir, keyName), join(dir, publicName)])) {
    if (existsSync(path) && !args.force) throw new UsageError(`${path} exists already`, 'Choose another --dir, or pass --force to replace it.');
  }
  // A key in a token: its public key comes from the module (before anything is written).
  const tokenKey = args.pkcs11 === undefined ? undefined : openTokenKey(args.pkcs11);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The private key: the service's user's alone.
  const pair = tokenKey ? undefined : createStrongNameKeyPair(2048);
  if (pair) writeFileAtomic(join(dir, keyName), pair, 0o600);
  const publicKey = tokenKey?.publicKey ?? parseStrongNameKeyFile(pair!).publicKey;
  writeFileAtomic(join(dir, publicName), publicKey.blob);
  const license = tokenKey ? { optionId: args.optionId, keyPair: args.pkcs11!, publicKey: keyName } : { optionId: args.optionId, keyPair: keyName };
  const config = {
    vendor: args.vendor,
    organizations: [{ id: 'sandbox', name: 'Sandbox organization', licenses: [license], users: [{ id: 'ci', roles: [USER_ROLE] }] }],
  };
  writeFileAtomic(configPath, new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`));
  io.out(configPath);
  io.err(
    [
      ...(tokenKey
        ? [
            `Wrote ${configPath} (vendor ${args.vendor}, organization "sandbox" with user "ci"): option ${args.optionId} signs with the ${tokenKey.publicKey.bitLength}-bit key in the PKCS#11 token (key token ${publicKeyToken(tokenKey.publicKey.blob)}).`,
            `Wrote its public key ${keyName} (from the token): give it to add-in developers. The service reads the PIN where the URI says (pin-source, or ${PKCS11_PIN_ENV}).`,
          ]
        : [
            `Wrote ${configPath} (vendor ${args.vendor}, organization "sandbox" with user "ci"), a new 2048-bit key pair ${keyName} for option ${args.optionId} and its public key ${publicName} (key token ${publicKeyToken(publicKey.blob)}).`,
            `Keep ${keyName} secret: it signs. Give add-in developers ${join(dir, publicName)}: they delay-sign with it (the service hands it out too: signgate licenses --public-key ${args.optionId}).`,
          ]),
      ...nextSteps(configPath, join(dir, 'data')),
    ].join('\n'),
  );
  return ExitCode.Ok;
}

/**
 * What to run after `serve init`, in order, each command as it can be pasted: the same --data-dir in the token's
 * command and the service's (it keeps the token hashes), then a call that uses the token.
 */
function nextSteps(configPath: string, dataDir: string): string[] {
  const service = `--config ${commandWord(configPath)} --data-dir ${commandWord(dataDir)}`;
  return [
    'Next, in this order (both commands name the same --data-dir: the service knows the tokens made for its data folder):',
    `  signgate serve token create ${service} --org sandbox --user ci`,
    `  signgate serve ${service} --port 8080`,
    'Then, in another terminal, with SIGNGATE_ACCESS_TOKEN set to the token the first command printed:',
    `  signgate licenses --base-url http://127.0.0.1:8080/${DEFAULT_SERVICE_NAME}/v1.0`,
  ];
}

const initCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, InitArgs> => ({
  command: 'init',
  describe: 'Write a server configuration with one sandbox organization and a fresh key pair (or a key in a PKCS#11 token: --pkcs11)',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('dir', { type: 'string', default: '.', describe: 'Folder for server.json, the key pair and its <optionId>_public.snk' })
      .option('vendor', { type: 'string', default: 'Contoso', describe: 'Vendor name (the attribute is <Vendor>SignedAssemblyAttribute)' })
      .option('option-id', { type: 'number', default: 12345, coerce: numberOption('option-id', { integer: true, min: 1 }), describe: 'License option id of the sandbox key' })
      .option('force', { type: 'boolean', default: false, describe: 'Replace existing files' })
      .option('pkcs11', {
        type: 'string',
        describe: 'Sign with this key in a PKCS#11 token instead of a new key pair: pkcs11:token=<label>;object=<key label>?module-path=<module.so>&pin-source=file:<pin file> (the PIN never on the command line); writes <optionId>_public.snk from the token',
      })
      .example('$0 serve init --dir service --pkcs11 "pkcs11:token=signing;object=option-12345?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/signgate/token.pin"', 'a configuration whose option signs in a token') as unknown as Argv<InitArgs>,
  handler: (args: ArgumentsCamelCase<InitArgs>) => setExit(runServeInit(args, io)),
});

const tokenCreateCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, TokenCreateArgs> => ({
  command: 'create',
  describe: 'Create a personal access token for a user (printed once; only its hash is stored)',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', { type: 'string', demandOption: true, describe: 'Server configuration (schemas/server-config.schema.json)' })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('org', { type: 'string', demandOption: true, describe: 'Organization id' })
      .option('user', { type: 'string', demandOption: true, describe: 'User id' })
      .option('days', { type: 'number', default: 30, coerce: numberOption('days', { integer: true, min: 1, max: 366 }), describe: 'Lifetime in days (tokens cannot be prolonged)' }) as unknown as Argv<TokenCreateArgs>,
  handler: async (args: ArgumentsCamelCase<TokenCreateArgs>) => setExit(await runTokenCreate(args, io)),
});

const tokenRevokeCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, TokenRevokeArgs> => ({
  command: 'revoke',
  describe: 'Revoke a token, or every token of a user; running services refuse it within seconds',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', { type: 'string', describe: 'Server configuration, as token create takes it (checked when given)' })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service (as token create and serve were given)' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('token-file', { type: 'string', describe: 'A file whose first line is the token to revoke' })
      .option('token', { type: 'string', describe: 'The token to revoke (shows in process lists: prefer --token-file)' })
      .conflicts('token', 'token-file')
      .option('org', { type: 'string', describe: 'Organization id (with --user: revoke all of the user\'s tokens)' })
      .option('user', { type: 'string', describe: 'User id' })
      .example('$0 serve token revoke --config service/server.json --data-dir service/data --token-file token.txt', 'one token, naming the service as token create did')
      .example('$0 serve token revoke --data-dir /var/lib/signgate --org sandbox --user ci', "every token of user ci")
      .example('$0 serve token revoke --database postgres://signgate@db/signgate --token-file old-token.txt', 'one token, on every node of a PostgreSQL deployment') as unknown as Argv<TokenRevokeArgs>,
  handler: async (args: ArgumentsCamelCase<TokenRevokeArgs>) => setExit(await runTokenRevoke(args, io)),
});

const recordOptions = (y: Argv<CommonArgs>) =>
  y
    .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service (its record: signature-record.jsonl)' })
    .option('database', databaseOption)
    .option('database-file', databaseFileOption);

/** The options that name the record key of record verify, checkpoint and public-key. */
const recordKeyOptions = <T>(y: Argv<T>) =>
  y
    .option('record-key', { type: 'string', describe: 'The record key file the service signs with (its "recordKey"); default: the one --config names, else the data directory\'s record-key.pem' })
    .option('config', { type: 'string', describe: 'The service\'s server.json: its "recordKey" names the record key file' });

const recordVerifyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'verify',
  describe: "Check the signature record's hash chain and print the first break (exit 0 intact, 1 broken)",
  builder: (y: Argv<CommonArgs>) =>
    recordKeyOptions(recordOptions(y))
      .option('file', { type: 'string', describe: 'Check an exported record (serve record export) instead of the service\'s' })
      .option('checkpoint', { type: 'string', describe: 'A checkpoint saved earlier (serve record checkpoint, or a job\'s): the record must continue it (no rollback, truncation or rewrite)' })
      .option('public-key', { type: 'string', describe: "The record key that signed the checkpoint: a file (the data directory's record-key.pub, the default) or the key itself" })
      .example('$0 serve record verify --file record.jsonl --checkpoint saved.checkpoint --public-key record-key.pub', 'an export, against a checkpoint saved earlier')
      .example('$0 serve record verify --data-dir /var/lib/signgate', 'the record of a one-node service')
      .example('SIGNGATE_DATABASE_URL=postgres://signgate@db/signgate $0 serve record verify', 'the record of a PostgreSQL deployment') as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordVerify(args, io)),
});

const recordExportCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'export',
  describe: 'Write the signature record as JSON lines (for signgate audit --record), after checking its chain',
  builder: (y: Argv<CommonArgs>) =>
    recordOptions(y)
      .option('output', { alias: 'o', type: 'string', describe: 'Write to this file (atomically) instead of stdout' })
      .example('$0 serve record export --data-dir /var/lib/signgate -o record.jsonl', 'then: signgate audit release/ --record record.jsonl') as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordExport(args, io)),
});

const recordCheckpointCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'checkpoint',
  describe: 'Print the signed checkpoint of the signature record (its size and Merkle root): save it, and verify later records against it',
  builder: (y: Argv<CommonArgs>) =>
    recordKeyOptions(recordOptions(y))
      .option('output', { alias: 'o', type: 'string', describe: 'Write to this file (atomically) instead of stdout' })
      .example('$0 serve record checkpoint --data-dir /var/lib/signgate -o 2025-06.checkpoint', 'then later: serve record verify --checkpoint 2025-06.checkpoint') as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordCheckpoint(args, io)),
});

const recordPublicKeyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'public-key',
  describe: "Print the record key's public half (name+keyid+key), which verifies the record's checkpoints",
  builder: (y: Argv<CommonArgs>) => recordKeyOptions(recordOptions(y)) as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordPublicKey(args, io)),
});

const runCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, ServeArgs> => ({
  command: '$0',
  describe: 'Run the reference signing service',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', { type: 'string', demandOption: true, describe: 'Server configuration (schemas/server-config.schema.json; `signgate serve init` writes one)' })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Where jobs and token hashes are kept' })
      .option('port', { type: 'number', default: 8080, coerce: numberOption('port', { integer: true, min: 0, max: 65535 }), describe: 'TCP port (0 picks a free one)' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on (0.0.0.0 for every interface; put TLS in front)' })
      .option('shutdown-timeout', { type: 'number', default: DEFAULT_SHUTDOWN_TIMEOUT_S, coerce: numberOption('shutdown-timeout', { min: 0 }), describe: 'Seconds to wait for uploads in flight on SIGTERM/SIGINT' })
      .option('trust-proxy', { type: 'string', describe: 'Addresses or CIDR ranges of the reverse proxy, comma-separated, whose X-Forwarded-For/-Host/-Proto are believed (default: none)' })
      .option('idle-timeout', { type: 'number', default: DEFAULT_IDLE_TIMEOUT_MS / 1000, coerce: numberOption('idle-timeout', { min: 0.001 }), describe: 'Seconds an upload may send nothing before it is answered 408 and closed' })
      .option('request-timeout', { type: 'number', default: DEFAULT_REQUEST_TIMEOUT_MS / 1000, coerce: numberOption('request-timeout', { min: 0.001 }), describe: 'Seconds a whole request may take to arrive' })
      .option('rate-limit-per-token', { type: 'string', describe: 'Requests per access token as <max>/<seconds>, or off (default: the configuration\'s rateLimits, else 300/60)' })
      .option('rate-limit-per-address', { type: 'string', describe: 'Requests per client address as <max>/<seconds>, or off (default: the configuration\'s, else 600/60)' })
      .option('rate-limit-loopback', { type: 'boolean', describe: 'Count requests from 127.0.0.0/8 and ::1 too (default: not counted)' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('blob-store', { type: 'string', describe: 'With --database: job files in S3-compatible object storage, s3://bucket/prefix?endpoint=URL&region=NAME (credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile)' })
      .option('role', { type: 'string', choices: NODE_ROLES, default: 'all', describe: 'api: accept, list and serve jobs; worker: sign queued jobs; all: both (api and worker need --database)' })
      .option('lease-timeout', { type: 'number', default: DEFAULT_LEASE_MS / 1000, coerce: numberOption('lease-timeout', { min: 0.1 }), describe: 'With --database: seconds after which the job of a worker (or the upload of an API node) that stopped answering is taken over' })
      .option('signing-workers', { type: 'number', coerce: numberOption('signing-workers', { integer: true, min: 0, max: 256 }), describe: 'Threads that sign, as many jobs at once (default: signingWorkers of the configuration, else one per core; 0: in the service thread)' })
      .option('record-key', { type: 'string', describe: 'The record key file every node of the deployment signs checkpoints with (serve record key create makes it); default: "recordKey" of the configuration, else the data directory\'s record-key.pem' })
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
      .example('SIGNGATE_DATABASE_URL=postgres://signgate@db/signgate $0 serve --config server.json --data-dir /mnt/shared --role api', 'an API node of several (docs/deploy.md)')
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

export const serveCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, ServeArgs> => ({
  command: 'serve',
  describe: 'Run the reference signing service (API under /<service-name>/v1.0, documentation at /docs); serve init, serve token create, serve record verify',
  builder: (y: Argv<CommonArgs>) =>
    y
      .command(initCommand(io, setExit))
      .command({
        command: 'token',
        describe: 'Create or revoke personal access tokens (serve token create, serve token revoke)',
        builder: (t: Argv<CommonArgs>) => t.command(tokenCreateCommand(io, setExit)).command(tokenRevokeCommand(io, setExit)).demandCommand(1, 'Name a token command: create or revoke.'),
        handler: () => {},
      })
      .command({
        command: 'record',
        describe: 'The signature record: an entry for every file the service signed (serve record verify, serve record export)',
        builder: (t: Argv<CommonArgs>) => t.command(recordVerifyCommand(io, setExit)).command(recordExportCommand(io, setExit)).command(recordCheckpointCommand(io, setExit)).command(recordPublicKeyCommand(io, setExit)).command(recordKeyCommand(io, setExit)).demandCommand(1, 'Name a record command: verify, export, checkpoint, public-key or key.'),
        handler: () => {},
      })
      .command(runCommand(io, setExit))
      .example('$0 serve init --dir service', 'a first configuration with a fresh sandbox key pair')
      .example('$0 serve token create --config service/server.json --data-dir service/data --org sandbox --user ci --days 30', 'make a token (the same --data-dir as the service)')
      .example('$0 serve token revoke --org sandbox --user ci', "revoke all of a user's tokens")
      .example('$0 serve record verify --data-dir service/data', 'check the signature record') as unknown as Argv<ServeArgs>,
  handler: () => {},
});
