// `signgate check`: the pre-flight gate. Settings come from the command line over signgate.config.json.

import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { SeveritySetting } from '../../core/diagnostic.js';
import { UsageError } from '../../core/errors.js';
import { ReportFormats, formatReport, type ReportFormat } from '../../report/index.js';
import { checkExitCode, runCheck } from '../../rules/runner.js';
import type { CheckInput, CheckSettings, ExpectedKey } from '../../rules/types.js';
import { getLicenses } from '../../service-client/licenses.js';
import { publicKeyToken } from '../../strongname/token.js';
import { loadConfig, CONFIG_FILE_NAME } from '../config.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { displayPath, expandInputs, readInputFile, writeFileAtomic } from '../files.js';
import type { Io } from '../output.js';
import { loadKeyFile, type CommonArgs } from './common.js';
import { Chalk } from 'chalk';

/** Default size limit of one upload job (service-api.md: about 40 MB). */
export const DEFAULT_MAX_UPLOAD_BYTES = 40_000_000;

export interface CheckArgs extends CommonArgs {
  paths?: string[];
  key?: string[];
  vendor?: string;
  vendorApi?: string[];
  vendorNamespace?: string;
  root?: string;
  format?: ReportFormat;
  output?: string;
  baseUrl?: string;
  accessToken?: string;
  accessTokenFile?: string;
  config?: string;
  maxUploadBytes?: number;
}

const OPTION_ID = /^(\d+)_public\.snk$/i;

/** The option id a key file's name carries (`12345_public.snk`, any case of `_public`). */
export function optionIdFromKeyFile(path: string): number | null {
  const m = OPTION_ID.exec(basename(path));
  return m ? Number(m[1]) : null;
}

function loadExpectedKey(path: string): ExpectedKey {
  const key = loadKeyFile(path);
  return { optionId: optionIdFromKeyFile(path), source: displayPath(resolve(path)), publicKey: key.publicKey, token: publicKeyToken(key.publicKey.blob) };
}

/** The token from --access-token, --access-token-file or SIGNGATE_ACCESS_TOKEN; never printed. */
export function resolveAccessToken(args: { accessToken?: string; accessTokenFile?: string }): string | undefined {
  if (args.accessToken) return args.accessToken;
  if (args.accessTokenFile) {
    const shown = displayPath(resolve(args.accessTokenFile));
    const token = readInputFile(resolve(args.accessTokenFile), shown).toString('utf8').trim();
    if (!token) throw new UsageError(`${shown} is empty`, 'Put the personal access token on the first line of the file.');
    return token;
  }
  return process.env.SIGNGATE_ACCESS_TOKEN || undefined;
}

export interface PreparedCheck {
  readonly settings: CheckSettings;
  readonly inputs: CheckInput[];
  readonly severities: Record<string, SeveritySetting> | undefined;
  readonly format: ReportFormat;
  readonly output: string | undefined;
  readonly configPath: string | undefined;
  readonly baseUrl: string | undefined;
  readonly token: string | undefined;
}

/**
 * Everything a check needs, from the command line over signgate.config.json: settings, keys, inputs with
 * their upload names, and the service address and token when given. Shared by `check` and `sign`.
 */
export async function prepareCheck(args: CheckArgs): Promise<PreparedCheck> {
  const { config, path: configPath } = loadConfig(args.config);
  const vendor = args.vendor ?? config.vendor;
  if (!vendor) throw new UsageError('no vendor name', `Pass --vendor <Name> (the attribute is <Name>SignedAssemblyAttribute) or set "vendor" in ${CONFIG_FILE_NAME}.`);
  const keyPaths = args.key?.length ? args.key : (config.keys ?? []);
  if (keyPaths.length === 0) throw new UsageError('no key file', `Pass --key <optionId>_public.snk (several are allowed) or set "keys" in ${CONFIG_FILE_NAME}.`);
  const rootArg = args.root ?? config.root;
  const root = rootArg ? resolve(rootArg) : null;
  const paths = args.paths?.length ? args.paths : config.paths;
  if (!paths?.length) throw new UsageError('no files to check', `Name the build output folder, files or globs, or set "paths" in ${CONFIG_FILE_NAME}.`);
  const baseUrl = args.baseUrl ?? config.baseUrl ?? process.env.SIGNGATE_BASE_URL;
  const token = resolveAccessToken(args);
  if (baseUrl && !token) throw new UsageError('--base-url is set but no access token', 'Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN (avoid --access-token: it shows in process lists).');
  const keys = keyPaths.map(loadExpectedKey);
  const files = await expandInputs(paths);
  const inputs: CheckInput[] = files.map((f) => {
    let uploadName = basename(f.absolutePath);
    if (root) {
      const rel = relative(root, f.absolutePath);
      if (rel.startsWith('..') || isAbsolute(rel)) throw new UsageError(`${f.displayPath} is outside the root folder ${displayPath(root)}`, 'Pass a --root that contains every file, or leave --root out.');
      uploadName = rel.split(sep).join('/');
    }
    return { path: f.displayPath, uploadName, bytes: readInputFile(f.absolutePath, f.displayPath), explicit: f.explicit };
  });
  const settings: CheckSettings = {
    vendor,
    vendorApi: args.vendorApi?.length ? args.vendorApi : (config.vendorApi ?? [`${vendor}.*`]),
    vendorNamespace: args.vendorNamespace ?? config.vendorNamespace ?? vendor,
    keys,
    maxUploadBytes: args.maxUploadBytes ?? config.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    root: root ? displayPath(root) : null,
  };
  return {
    settings,
    inputs,
    severities: config.rules as Record<string, SeveritySetting> | undefined,
    format: args.format ?? config.format ?? 'text',
    output: args.output ?? config.output,
    configPath,
    baseUrl,
    token,
  };
}

export async function runCheckCommand(args: CheckArgs, io: Io): Promise<ExitCodeValue> {
  const prepared = await prepareCheck(args);
  const { baseUrl, token, format, output, configPath } = prepared;
  const licensedOptionIds = baseUrl && token ? await getLicenses({ baseUrl, accessToken: token }) : undefined;
  const settings: CheckSettings = { ...prepared.settings, ...(licensedOptionIds ? { licensedOptionIds } : {}) };
  const result = runCheck(prepared.inputs, { settings, severities: prepared.severities });
  const text = formatReport(format, result, { color: output ? new Chalk({ level: 0 }) : io.color });
  if (output) {
    writeFileAtomic(resolve(output), new TextEncoder().encode(text));
    io.err(`${format} report written to ${displayPath(resolve(output))}${configPath ? ` (settings from ${displayPath(configPath)})` : ''}`);
    if (format !== 'text') io.out(formatReport('text', result, { color: io.color }));
  } else {
    io.out(text);
  }
  return checkExitCode(result) === 0 ? ExitCode.Ok : ExitCode.Findings;
}

export const checkCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, CheckArgs> => ({
  command: 'check [paths..]',
  describe: 'Pre-flight gate: will the signing service accept every file, and will the signed result load?',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('paths', { type: 'string', array: true, describe: 'Build output folders, files or glob patterns (default: "paths" in the config)' })
      .option('key', { type: 'string', array: true, describe: 'The option public key file <optionId>_public.snk (repeat for several options)' })
      .option('vendor', { type: 'string', describe: 'Vendor name: the attribute is <Vendor>SignedAssemblyAttribute' })
      .option('vendor-api', { type: 'string', array: true, describe: 'Vendor API assembly name patterns (default <Vendor>.*)' })
      .option('vendor-namespace', { type: 'string', describe: 'Namespace of the vendor attribute (default the vendor name)' })
      .option('root', { type: 'string', describe: 'Upload names are paths relative to this folder (the relative folders then count for duplicates)' })
      .option('format', { type: 'string', choices: ReportFormats, describe: 'Report format (default text)' })
      .option('output', { alias: 'o', type: 'string', describe: 'Write the report to this file (a text summary still goes to stdout)' })
      .option('max-upload-bytes', { type: 'number', describe: `Size limit of one upload job (default ${DEFAULT_MAX_UPLOAD_BYTES})` })
      .option('base-url', { alias: 'baseUrl', type: 'string', describe: 'Signing service base URL (…/<service-name>/v1.0): adds the license cross-check' })
      .option('access-token', { alias: 'accessToken', type: 'string', describe: 'Personal access token (prefer --access-token-file or SIGNGATE_ACCESS_TOKEN)' })
      .option('access-token-file', { type: 'string', describe: 'File whose first line is the access token' })
      .option('config', { type: 'string', describe: `Config file (default: ${CONFIG_FILE_NAME} from the working directory upward)` })
      .example('$0 check bin/Release --key 12345_public.snk --vendor Contoso', 'check a build output folder')
      .example('$0 check --format sarif -o signgate.sarif', 'settings from signgate.config.json, SARIF for code scanning')
      .epilog('Exit codes: 0 no error findings, 1 error findings, 2 usage or configuration error, 3 unreadable input, network or service error.') as unknown as Argv<CheckArgs>,
  handler: async (args: ArgumentsCamelCase<CheckArgs>) => setExit(await runCheckCommand(args, io)),
});

