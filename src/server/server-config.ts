// The reference service's configuration: organizations, their license options (key pairs) and users with roles.
// Read with ajv against schemas/server-config.schema.json; re-read when the file changes, so that removing a
// user's role takes effect at once without a restart.
import { decodeText } from '../core/text-encoding.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { UsageError } from '../core/errors.js';
import { parseStrongNameKeyFile, type StrongNameKeyFile } from '../strongname/key-blob.js';
import { isPkcs11Uri } from '../strongname/pkcs11/uri.js';
import { readPkcs11PinFilesWith } from '../strongname/pkcs11/pin.js';
import { openPkcs11Key, pkcs11KeyWithPublicKey, type Pkcs11KeyPair } from '../strongname/pkcs11/signer.js';
import { publicKeyToken } from '../strongname/key-token.js';
import type { LogLevel } from './service-log.js';

// The rate limits of the configuration (identity/rate-limit.ts counts them).
/** At most `max` requests per `windowSeconds`; null: no limit of this kind. */
export interface RateLimit {
  readonly max: number;
  readonly windowSeconds: number;
}

export interface RateLimitSettings {
  /** Per access token (keyed by the token's SHA-256, never by the token itself). */
  readonly perToken: RateLimit | null;
  /** Per client address (the address fastify sees, after trustProxy). */
  readonly perAddress: RateLimit | null;
  /** Requests from 127.0.0.0/8 and ::1 are counted too; by default they are not (the embedded service, tests, `npm start`). */
  readonly loopback: boolean;
}

/**
 * The defaults when neither the configuration nor the caller says otherwise. The vendor does not publish its
 * limits; these leave a client that polls every second far below them.
 */
export const DEFAULT_RATE_LIMITS: RateLimitSettings = {
  perToken: { max: 300, windowSeconds: 60 },
  perAddress: { max: 600, windowSeconds: 60 },
  loopback: false,
};

export interface OidcSettings {
  /** The issuer's identifier, exactly as tokens carry it in `iss`; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  /** The audience tokens must carry in `aud` (the API's resource identifier). */
  readonly audience: string;
  /** Claim naming the organization (default `org`). */
  readonly organizationClaim: string;
  /** Claim holding the roles, an array or a space-separated string (default `roles`). */
  readonly rolesClaim: string;
  /** Claim naming the user (default `sub`). */
  readonly userClaim: string;
  /** The public client the documentation page's Authorize button uses (authorization code with PKCE). */
  readonly clientId?: string;
  /** Scopes the Authorize button asks for (default `openid`). */
  readonly scopes: readonly string[];
  /** A token must expire (`exp`) within this many seconds of being presented (default a day). */
  readonly maxTokenLifetimeS: number;
}

export interface ServerConfigFile {
  serviceName?: string;
  vendor: string;
  vendorApi?: string[];
  vendorNamespace?: string;
  signingWorkers?: number;
  recordKey?: string;
  logLevel?: LogLevel;
  metrics?: { enabled: boolean; listen?: string };
  limits?: { maxUploadBytes?: number; maxJobsPerOrganization?: number; maxFilesPerJob?: number; keyWaitSeconds?: number; jobRetention?: string };
  rateLimits?: { perToken?: RateLimit | false; perAddress?: RateLimit | false; loopback?: boolean };
  oidc?: {
    issuer: string;
    audience: string;
    organizationClaim?: string;
    rolesClaim?: string;
    userClaim?: string;
    clientId?: string;
    scopes?: string[];
    maxTokenLifetime?: number;
  };
  organizations: {
    id: string;
    name?: string;
    licenses: { optionId: number; keyPair: string; publicKey?: string; previousKeys?: { keyPair: string; publicKey?: string }[] }[];
    users: { id: string; roles: string[] }[];
  }[];
}

/** A key of an option: the one it signs new jobs with, or one it had before (License.previous). */
export interface OptionKey {
  readonly key: StrongNameKeyFile;
  /** The public key token (16 hex digits). */
  readonly token: string;
  /**
   * Where the key lives, for the signature record: the key pair file as the configuration names it (relative to
   * server.json), or the pkcs11: URI without its PIN attributes.
   */
  readonly keyLocation: string;
  /** The key pair file it was read from (absent for a key in a PKCS#11 token). */
  readonly keyPairPath?: string;
}

export interface License extends OptionKey {
  readonly optionId: number;
  /**
   * The option's earlier keys (`previousKeys`): they sign only the jobs accepted while they were the option's key,
   * so that a job in flight when the key changes finishes with the key it was accepted with.
   */
  readonly previous: readonly OptionKey[];
}

export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly licenses: readonly License[];
  /** User id to roles. */
  readonly users: ReadonlyMap<string, readonly string[]>;
}

export interface ServerConfig {
  readonly serviceName: string;
  readonly vendor: string;
  readonly vendorApi: readonly string[];
  readonly vendorNamespace: string;
  readonly maxUploadBytes: number;
  readonly maxJobsPerOrganization: number;
  readonly maxFilesPerJob: number;
  /** How long a job waits for a signing key no worker can use before its files end Error (limits.keyWaitSeconds). */
  readonly keyWaitSeconds: number;
  /** Finished jobs older than this many milliseconds are deleted (limits.jobRetention); undefined: kept. */
  readonly jobRetentionMs: number | undefined;
  /** Requests per token and per address (rate-limit.ts); the defaults leave loopback clients unlimited. */
  readonly rateLimits: RateLimitSettings;
  /** Signing threads (read at start); undefined: one per core. */
  readonly signingWorkers: number | undefined;
  /** The record key file every node signs checkpoints with ("recordKey", absolute; read at start); undefined: the data directory's. */
  readonly recordKeyFile?: string;
  /** The log's level (read at start by `signgate serve`); undefined: info, unless the command line or environment says. */
  readonly logLevel: LogLevel | undefined;
  /** GET /metrics (read at start): on the service's port, or on a listener of its own at `listen` (host:port). */
  readonly metrics: { readonly enabled: boolean; readonly listen?: string };
  /** Bearer JWTs from this OpenID Connect issuer are accepted besides personal access tokens (oidc.ts). */
  readonly oidc?: OidcSettings;
  readonly organizations: ReadonlyMap<string, Organization>;
}

export const DEFAULT_SERVICE_NAME = 'assembly-signing';
/** The longest an OpenID Connect access token may still be valid when it is presented: a day. */
export const DEFAULT_MAX_TOKEN_LIFETIME_S = 86_400;
export const DEFAULT_MAX_UPLOAD_BYTES = 40_000_000;
export const DEFAULT_MAX_JOBS = 9999;
export const DEFAULT_MAX_FILES = 1000;
/** A job waits this long for a signing key no worker can use (a token away, a wrong PIN) before its files end Error. */
export const DEFAULT_KEY_WAIT_S = 600;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A duration as the configuration and `serve jobs prune --older-than` write it: a whole number and one unit, s, m,
 * h or d (30d, 12h, 90m, 45s); undefined for anything else.
 */
export function durationMs(text: string): number | undefined {
  const m = /^([1-9][0-9]{0,8})([smhd])$/.exec(text.trim());
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

/** A duration in the largest unit that writes it whole (2592000000 -> 30d). */
export function durationText(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${Math.round(ms / 1000)}s`;
}

/** The role a user needs for every request. */
export const USER_ROLE = 'User';
/** The role whose personal access token reads /readyz's details (organizations, options, PIN counters, waiting jobs). */
export const OPERATOR_ROLE = 'Operator';

const schema = JSON.parse(readFileSync(new URL('../../schemas/server-config.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile<ServerConfigFile>(schema);

function describe(error: ErrorObject): string {
  const where = error.instancePath ? error.instancePath.slice(1).split('/').join('.') : '(top level)';
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return `unknown key ${JSON.stringify(params.additionalProperty)} in ${where}`;
  if (error.keyword === 'required') return `${where} needs ${JSON.stringify(params.missingProperty)}`;
  if (error.keyword === 'enum') return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  return `${where} ${error.message}`;
}

/**
 * Validates a server configuration object; key pair paths are relative to `baseDir`.
 * @throws UsageError SG_ERR_CONFIG naming the place and what is wrong
 */
export function parseServerConfig(raw: unknown, baseDir: string, shownAs = 'server config'): ServerConfig {
  if (!validate(raw))
    throw new UsageError(`${shownAs}: ${(validate.errors ?? []).map(describe).join('; ')}`, 'See schemas/server-config.schema.json.', 'SG_ERR_CONFIG');
  const organizations = new Map<string, Organization>();
  for (const org of raw.organizations) {
    if (organizations.has(org.id))
      throw new UsageError(`${shownAs}: organization ${JSON.stringify(org.id)} is listed twice`, 'Give every organization its own id.', 'SG_ERR_CONFIG');
    const licenses = org.licenses.map((l): License => {
      const where = `${shownAs}: organization ${org.id}, option ${l.optionId}`;
      const current = optionKey(l, baseDir, where);
      const previous = (l.previousKeys ?? []).map((p, i) => optionKey(p, baseDir, `${where}, previousKeys[${i}]`));
      for (const p of previous) {
        if (p.token === current.token)
          throw new UsageError(
            `${where}: previousKeys names the option's current key (token ${p.token})`,
            'previousKeys lists the keys the option had before keyPair: remove the current one from it.',
            'SG_ERR_CONFIG',
          );
      }
      return { optionId: l.optionId, ...current, previous };
    });
    organizations.set(org.id, { id: org.id, name: org.name ?? org.id, licenses, users: new Map(org.users.map((u) => [u.id, u.roles])) });
  }
  return {
    serviceName: raw.serviceName ?? DEFAULT_SERVICE_NAME,
    vendor: raw.vendor,
    vendorApi: raw.vendorApi ?? [`${raw.vendor}.*`],
    vendorNamespace: raw.vendorNamespace ?? raw.vendor,
    maxUploadBytes: raw.limits?.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    maxJobsPerOrganization: raw.limits?.maxJobsPerOrganization ?? DEFAULT_MAX_JOBS,
    maxFilesPerJob: raw.limits?.maxFilesPerJob ?? DEFAULT_MAX_FILES,
    keyWaitSeconds: raw.limits?.keyWaitSeconds ?? DEFAULT_KEY_WAIT_S,
    jobRetentionMs: raw.limits?.jobRetention === undefined ? undefined : durationMs(raw.limits.jobRetention),
    rateLimits: {
      perToken: raw.rateLimits?.perToken === false ? null : (raw.rateLimits?.perToken ?? DEFAULT_RATE_LIMITS.perToken),
      perAddress: raw.rateLimits?.perAddress === false ? null : (raw.rateLimits?.perAddress ?? DEFAULT_RATE_LIMITS.perAddress),
      loopback: raw.rateLimits?.loopback ?? DEFAULT_RATE_LIMITS.loopback,
    },
    signingWorkers: raw.signingWorkers,
    ...(raw.recordKey !== undefined ? { recordKeyFile: resolve(baseDir, raw.recordKey) } : {}),
    logLevel: raw.logLevel,
    metrics: raw.metrics ?? { enabled: false },
    ...(raw.oidc
      ? {
          oidc: {
            issuer: raw.oidc.issuer,
            audience: raw.oidc.audience,
            organizationClaim: raw.oidc.organizationClaim ?? 'org',
            rolesClaim: raw.oidc.rolesClaim ?? 'roles',
            userClaim: raw.oidc.userClaim ?? 'sub',
            ...(raw.oidc.clientId ? { clientId: raw.oidc.clientId } : {}),
            scopes: raw.oidc.scopes ?? ['openid'],
            maxTokenLifetimeS: raw.oidc.maxTokenLifetime ?? DEFAULT_MAX_TOKEN_LIFETIME_S,
          },
        }
      : {}),
    organizations,
  };
}

/**
 * A key of a license (its keyPair, or an entry of its previousKeys): a key pair file, or a key in a PKCS#11 token.
 * @throws UsageError SG_ERR_CONFIG naming the place and what is wrong
 */
function optionKey(l: { keyPair: string; publicKey?: string }, baseDir: string, where: string): OptionKey {
  if (isPkcs11Uri(l.keyPair)) {
    const key = tokenKey(l, baseDir, where);
    return { key, token: publicKeyToken(key.publicKey.blob), keyLocation: withoutPinAttributes(l.keyPair) };
  }
  if (l.publicKey !== undefined)
    throw new UsageError(
      `${where}: publicKey is given beside the key pair file ${l.keyPair}`,
      'publicKey goes with a pkcs11: keyPair only; a key pair file holds its public key.',
      'SG_ERR_CONFIG',
    );
  const path = resolve(baseDir, l.keyPair);
  let key: StrongNameKeyFile;
  try {
    key = parseStrongNameKeyFile(readFileSync(path));
  } catch (cause) {
    throw new UsageError(`${where}: ${path}: ${(cause as Error).message}`, 'keyPair must be a key pair made by sn -k.', 'SG_ERR_CONFIG');
  }
  if (key.kind !== 'key-pair')
    throw new UsageError(
      `${where}: ${path} holds only a public key`,
      'The service signs: keyPair must be the key pair (sn -k), not the public key.',
      'SG_ERR_CONFIG',
    );
  return { key, token: publicKeyToken(key.publicKey.blob), keyLocation: l.keyPair, keyPairPath: path };
}

/** A pkcs11: URI without `pin-source` and `pin-value` (the record names where a key is, never how to unlock it). */
export function withoutPinAttributes(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  const query = uri
    .slice(q + 1)
    .split('&')
    .filter((a) => a !== '' && !/^pin-(source|value)=/i.test(a));
  return query.length ? `${uri.slice(0, q)}?${query.join('&')}` : uri.slice(0, q);
}

/**
 * The key of a `pkcs11:` keyPair: with `publicKey`, that file's key, and the token is first asked when it signs;
 * without, the public key read from the token now.
 * @throws UsageError SG_ERR_CONFIG naming the option and what is wrong (never the PIN)
 */
function tokenKey(license: { keyPair: string; publicKey?: string }, baseDir: string, where: string): Pkcs11KeyPair {
  // The PIN of a pin-source file is read from disk at each login of the service's process.
  readPkcs11PinFilesWith((path) => decodeText(readFileSync(path)).text);
  try {
    if (license.publicKey === undefined) return openPkcs11Key(license.keyPair);
    const path = resolve(baseDir, license.publicKey);
    const file = parseStrongNameKeyFile(readFileSync(path));
    if (file.publicKey.isEcmaKey) throw new Error(`${path} holds the ECMA neutral key`);
    return pkcs11KeyWithPublicKey(license.keyPair, file.publicKey);
  } catch (cause) {
    const hint =
      license.publicKey === undefined
        ? 'Fix the token, the URI or the PIN (docs/deploy.md, "Keys in a PKCS#11 token"), or add "publicKey": "<optionId>_public.snk" so that the service starts while the token is away.'
        : "publicKey must be the option's public key file (sn -p, or what serve init --pkcs11 writes).";
    throw new UsageError(`${where}: ${(cause as Error).message}`, hint, 'SG_ERR_CONFIG');
  }
}

/** What a watched configuration tells its owner: a new configuration taken, or a changed file refused. */
export interface ConfigEvents {
  /** A new configuration applies from now on; `changes` says what differs (configChanges), empty when nothing does. */
  changed?(changes: readonly string[], config: ServerConfig): void;
  /** The file changed but cannot be used (not JSON, not valid, a key that cannot be read): the last good one is kept. */
  refused?(error: Error): void;
}

/** A configuration file read once and again when it changes. */
export interface WatchedConfig {
  /** The configuration now: the file is looked at (its modification time, size and inode) once per turn of the event loop. */
  current(): ServerConfig;
  /** Reads the file now, changed or not (SIGHUP): `changed` or `refused` says what came of it. */
  reload(): void;
}

/** Reads a config file; `current()` re-reads it when it changes; `events` hears of each new or refused configuration. */
export function watchServerConfigFile(path: string, events: ConfigEvents = {}): WatchedConfig {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw new UsageError(
      `the server configuration ${absolute} does not exist`,
      'Pass --config with the server.json that `signgate serve init --dir <folder>` writes (it prints its path), or write one (schemas/server-config.schema.json).',
      'SG_ERR_CONFIG',
    );
  }
  const load = () => {
    let raw: unknown;
    try {
      // A byte-order mark is what Windows editors write: not an error.
      raw = JSON.parse(readFileSync(absolute, 'utf8').replace(/^\uFEFF/, ''));
    } catch (cause) {
      throw new UsageError(`${absolute}: ${(cause as Error).message}`, 'Pass --config with a valid JSON server configuration.', 'SG_ERR_CONFIG');
    }
    return parseServerConfig(raw, dirname(absolute), absolute);
  };
  // Modification time, size and inode: two edits within one tick of the file system's clock share a
  // modification time, and an editor that saves by renaming makes a new inode.
  const stampOf = () => {
    const s = statSync(absolute);
    return `${s.mtimeMs}:${s.ctimeMs}:${s.size}:${s.ino}`;
  };
  let stamp = stampOf(); // before reading: a change while it is read is seen at the next call
  let config = load();
  // The stamp of a file that was refused: not read again (nor reported again) until it changes once more.
  let refusedStamp: string | undefined;
  const take = (now: string) => {
    try {
      const next = load();
      const changes = configChanges(config, next);
      config = next;
      stamp = now;
      refusedStamp = undefined;
      events.changed?.(changes, next);
    } catch (error) {
      // A file being rewritten or broken keeps the last good configuration.
      refusedStamp = now;
      events.refused?.(error as Error);
    }
  };
  // Looked at once per turn of the event loop: the calls of one request see one configuration, and a request after
  // an edit sees the edit.
  let looked = false;
  return {
    current: () => {
      if (looked) return config;
      looked = true;
      setImmediate(() => (looked = false));
      let now: string;
      try {
        now = stampOf();
      } catch {
        return config; // the file is away for a moment (an editor's save): the last good one
      }
      if (now !== stamp && now !== refusedStamp) take(now);
      return config;
    },
    reload: () => {
      let now: string;
      try {
        now = stampOf();
      } catch (error) {
        events.refused?.(error as Error);
        return;
      }
      take(now);
    },
  };
}

/** A list's change in words: what was added and what removed, or nothing. */
function listChange(what: string, before: readonly string[], after: readonly string[]): string[] {
  const added = after.filter((x) => !before.includes(x));
  const removed = before.filter((x) => !after.includes(x));
  return [...(added.length ? [`${what} added: ${added.join(', ')}`] : []), ...(removed.length ? [`${what} removed: ${removed.join(', ')}`] : [])];
}

/**
 * What differs between two configurations, one line each, naming ids, roles, limits and public key tokens (never a
 * secret or a path of a key): for the log line of a reload. Settings read only at start are said to wait for a restart.
 */
export function configChanges(before: ServerConfig, after: ServerConfig): string[] {
  const changes: string[] = [];
  const value = (name: string, a: unknown, b: unknown, restart = false) => {
    if (JSON.stringify(a) !== JSON.stringify(b))
      changes.push(
        `${name}: ${JSON.stringify(a) ?? 'unset'} -> ${JSON.stringify(b) ?? 'unset'}${restart ? ' (read at start: applies at the next start)' : ''}`,
      );
  };
  value('logLevel', before.logLevel, after.logLevel);
  value('vendor', before.vendor, after.vendor);
  value('vendorApi', before.vendorApi, after.vendorApi);
  value('limits.maxUploadBytes', before.maxUploadBytes, after.maxUploadBytes);
  value('limits.maxJobsPerOrganization', before.maxJobsPerOrganization, after.maxJobsPerOrganization);
  value('limits.maxFilesPerJob', before.maxFilesPerJob, after.maxFilesPerJob);
  value('limits.keyWaitSeconds', before.keyWaitSeconds, after.keyWaitSeconds);
  value('limits.jobRetention', before.jobRetentionMs && durationText(before.jobRetentionMs), after.jobRetentionMs && durationText(after.jobRetentionMs));
  value('rateLimits', before.rateLimits, after.rateLimits);
  value('oidc.issuer', before.oidc?.issuer, after.oidc?.issuer);
  value('serviceName', before.serviceName, after.serviceName, true);
  value('signingWorkers', before.signingWorkers, after.signingWorkers, true);
  value('metrics', before.metrics, after.metrics, true);
  if (before.recordKeyFile !== after.recordKeyFile) changes.push('recordKey changed (read at start: applies at the next start)');
  changes.push(...listChange('organizations', [...before.organizations.keys()], [...after.organizations.keys()]));
  for (const [id, org] of after.organizations) {
    const old = before.organizations.get(id);
    if (!old) continue;
    const options = (o: Organization) => o.licenses.map((l) => String(l.optionId));
    changes.push(...listChange(`${id}: options`, options(old), options(org)));
    for (const license of org.licenses) {
      const was = old.licenses.find((l) => l.optionId === license.optionId);
      if (was && (was.token !== license.token || was.keyLocation !== license.keyLocation))
        changes.push(`${id}: option ${license.optionId}'s key: public key token ${was.token} -> ${license.token}`);
    }
    changes.push(...listChange(`${id}: users`, [...old.users.keys()], [...org.users.keys()]));
    for (const [user, roles] of org.users) {
      const had = old.users.get(user);
      if (had && JSON.stringify([...had].sort()) !== JSON.stringify([...roles].sort()))
        changes.push(`${id}: ${user}'s roles: ${had.length ? had.join(', ') : 'none'} -> ${roles.length ? roles.join(', ') : 'none'}`);
    }
  }
  return changes;
}

/**
 * Those of `paths` that others on this machine may read (POSIX mode bits for group or others), each with its mode;
 * a file that is not there is none. Always empty on Windows, where files have ACLs instead.
 */
export function exposedFiles(paths: Iterable<string>): { path: string; mode: string }[] {
  if (process.platform === 'win32') return [];
  return [...new Set(paths)].flatMap((path) => {
    try {
      const mode = statSync(path).mode & 0o777;
      return mode & 0o077 ? [{ path, mode: mode.toString(8).padStart(4, '0') }] : [];
    } catch {
      return [];
    }
  });
}

/** The key pair files of a configuration that others on this machine may read (exposedFiles). */
export function exposedKeyPairs(config: ServerConfig): { path: string; mode: string }[] {
  return exposedFiles(
    [...config.organizations.values()].flatMap((o) => o.licenses.flatMap((l) => [l, ...l.previous].flatMap((k) => (k.keyPairPath ? [k.keyPairPath] : [])))),
  );
}
