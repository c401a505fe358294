// The settings the pipeline runs with: the options over signgate.config.json (the vendor, the key files, the rule
// severities, the report choices, the service address; the access token is read by the commands that go online). The vendor attribute types that the vendor API
// assemblies declare are read with the inputs (read-files.ts, vendor-attributes.ts).
import { resolve } from 'node:path';
import type { SeveritySetting } from '../../core/diagnostic.js';
import { UsageError } from '../../core/errors.js';
import type { ReportFormat } from '../../report/index.js';
import type { CheckSettings } from '../../rules/types.js';
import type { AccessTokenOptions } from '../access-token.js';
import { CONFIG_FILE_NAME, loadConfig, type CheckConfig } from '../config.js';
import { displayPath } from '../input-paths.js';
import { loadExpectedKey } from '../keys.js';

/** Default size limit of one upload job (the service's documented limit: about 40 MB). */
export const DEFAULT_MAX_UPLOAD_BYTES = 40_000_000;

export interface CheckOptions extends AccessTokenOptions {
  /** Build output folders, files or glob patterns (default: "paths" in the config file). */
  readonly paths?: readonly string[];
  /** Option public key files `<optionId>_public.snk` (default: "keys" in the config file). */
  readonly keys?: readonly string[];
  /** The vendor name: the attribute is `<Vendor>SignedAssemblyAttribute`. */
  readonly vendor?: string;
  /** Vendor API assembly name patterns (default `<Vendor>.*`). */
  readonly vendorApi?: readonly string[];
  /**
   * Vendor API assemblies (files, or folders to take the vendor-named DLLs from) that the add-in references but
   * that are not inputs: read only for the vendor attribute's declared type, so messages name it exactly.
   */
  readonly references?: readonly string[];
  /** Namespace of the vendor attribute (default the vendor name). */
  readonly vendorNamespace?: string;
  /** In an MSBuild build (the targets pass `--from-msbuild`): a project that references no vendor API needs no signing. */
  readonly inBuild?: boolean;
  /** Upload names are paths relative to this folder. */
  readonly root?: string;
  readonly maxUploadBytes?: number;
  /**
   * The service's address (…/<service-name>/v1.0), else "baseUrl" in the config file, else SIGNGATE_BASE_URL. Given
   * here, it takes check online (see `online`); from the config file or the environment, it serves sign alone.
   */
  readonly baseUrl?: string;
  /**
   * check: fetch the licenses from the service and cross-check them (needs an address and a token). Default: true
   * when `baseUrl` is given here or the config file says "online": true; false otherwise.
   */
  readonly online?: boolean;
  /** Config file (default: signgate.config.json from the working directory upward). */
  readonly config?: string;
  /** Report format and output file from the config file, when the options do not say (the caller writes the report). */
  readonly format?: ReportFormat;
  readonly output?: string;
  /**
   * Worker threads for the per-file work of check and audit; 0 runs it in the calling thread. Default: from
   * CHECK_POOL_THRESHOLD files on, one per idle core when at least two cores are idle.
   */
  readonly threads?: number;
  /** Rule severities over those of the config file's "rules" (`{ "loads-under-no-license": "note" }`). */
  readonly rules?: Readonly<Record<string, SeveritySetting>>;
  /**
   * `check` and `audit` in the calling thread hold the inputs in memory up to this many bytes together (default
   * DEFAULT_READ_AT_ONCE_BYTES). Larger sets are read file by file when parsed and again when checked, so memory
   * stays bounded whatever their size; the report is the same. A file that changes between the reads is an
   * SG_ERR_IO_READ error. `sign` always holds what it checks and uploads.
   */
  readonly readAtOnceBytes?: number;
}

/** What a check runs with, before any input is read (see prepareSettings). */
export interface PreparedSettings {
  readonly settings: CheckSettings;
  readonly severities: Record<string, SeveritySetting> | undefined;
  readonly format: ReportFormat;
  readonly output: string | undefined;
  readonly configPath: string | undefined;
  /** The inputs as given on the command line or in the config file (made absolute there), and the root folder. */
  readonly paths: readonly string[];
  readonly root: string | null;
  /** The vendor API assemblies named for their vendor attribute type (CheckOptions.references), read with the inputs. */
  readonly references: readonly string[];
  /** The config file as read (empty when there is none). */
  readonly config: CheckConfig;
  /** The service's address: the option, else "baseUrl" in the config file, else SIGNGATE_BASE_URL. */
  readonly baseUrl: string | undefined;
  /** Things the user should know that are not findings (a key pair given where a public key belongs). */
  readonly notes: readonly string[];
}

/**
 * What a check runs with, from the options over signgate.config.json: settings, keys, the inputs as given (not yet
 * read; empty when none are given) and the root, and the service address and token when given. `sign --archive`
 * takes its inputs from the archive and uses this alone; with `needsPaths`, no inputs is the first error, before any
 * other setting is asked for (what to check comes before how).
 * @throws UsageError SG_ERR_USAGE / SG_ERR_CONFIG; KeyError
 */
export function prepareSettings(options: CheckOptions, needsPaths = false): PreparedSettings {
  const { config, path: configPath } = loadConfig(options.config);
  const paths = options.paths?.length ? options.paths : (config.paths ?? []);
  if (needsPaths && !paths.length) {
    throw new UsageError('no files to check', `Name the build output folder, files or globs, or set "paths" in ${CONFIG_FILE_NAME}.`);
  }
  const vendor = options.vendor ?? config.vendor;
  if (!vendor)
    throw new UsageError('no vendor name', `Pass --vendor <Name> (the attribute is <Name>SignedAssemblyAttribute) or set "vendor" in ${CONFIG_FILE_NAME}.`);
  const keyPaths = options.keys?.length ? options.keys : (config.keys ?? []);
  if (keyPaths.length === 0)
    throw new UsageError('no key file', `Pass --key <optionId>_public.snk (several are allowed) or set "keys" in ${CONFIG_FILE_NAME}.`);
  const rootArg = options.root ?? config.root;
  const root = rootArg ? resolve(rootArg) : null;
  const environment = (options.env ?? process.env).SIGNGATE_BASE_URL || undefined;
  const baseUrl = options.baseUrl ?? config.baseUrl ?? environment;
  const keys = keyPaths.map(loadExpectedKey);
  const notes: string[] = [];
  const settings: CheckSettings = {
    vendor,
    vendorApi: options.vendorApi?.length ? options.vendorApi : (config.vendorApi ?? [`${vendor}.*`]),
    vendorNamespace: options.vendorNamespace ?? config.vendorNamespace ?? vendor,
    keys,
    ...(options.inBuild ? { inBuild: true } : {}),
    maxUploadBytes: options.maxUploadBytes ?? config.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    root: root ? displayPath(root) : null,
  };
  return {
    settings,
    severities: options.rules
      ? { ...(config.rules as Record<string, SeveritySetting> | undefined), ...options.rules }
      : (config.rules as Record<string, SeveritySetting> | undefined),
    format: options.format ?? config.format ?? 'text',
    output: options.output ?? config.output,
    configPath,
    paths,
    root,
    references: options.references ?? [],
    config,
    baseUrl,
    notes,
  };
}
