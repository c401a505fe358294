// signgate.config.json: found from the working directory upward (or given with --config), validated with ajv.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { ParseError } from 'jsonc-parser';
import type { SeveritySetting } from '../core/diagnostic.js';
import { UsageError } from '../core/errors.js';
import { decodeText } from '../core/text-encoding.js';
import { closest } from '../core/words.js';
import { findRule, rules } from '../rules/index.js';
import type { ReportFormat } from '../report/index.js';
import { displayPath } from './input-paths.js';

export const CONFIG_FILE_NAME = 'signgate.config.json';

export interface CheckConfig {
  vendor?: string;
  keys?: string[];
  vendorApi?: string[];
  vendorNamespace?: string;
  paths?: string[];
  root?: string;
  maxUploadBytes?: number;
  format?: ReportFormat;
  output?: string;
  baseUrl?: string;
  /** check goes online (the license cross-check) as with --online. */
  online?: boolean;
  rules?: Record<string, SeveritySetting>;
  /** The SBOM's creator (`audit --sbom`): a URL or an e-mail address of the organization, as --sbom-creator-url/-email. */
  sbomCreatorUrl?: string;
  sbomCreatorEmail?: string;
}

export interface LoadedConfig {
  readonly config: CheckConfig;
  /** The file it came from, or undefined when there is none. */
  readonly path: string | undefined;
}

// ajv and jsonc-parser are loaded on first use (a config file, a syntax error): most runs need neither.
const require = createRequire(import.meta.url);
const schema = JSON.parse(readFileSync(new URL('../../schemas/config.schema.json', import.meta.url), 'utf8'));
let compiled: ValidateFunction<CheckConfig> | undefined;
/** The config validator, compiled on first use: most runs have no config file. */
const validator = (): ValidateFunction<CheckConfig> => {
  if (!compiled) {
    const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
    compiled = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true }).compile<CheckConfig>(schema);
  }
  return compiled;
};

/** What a key named like an access token (`accessToken`, `access_token`, `token`) gets instead of "unknown key". */
const TOKEN_NOT_IN_CONFIG =
  'an access token never belongs in the config file (the file is shared and committed with the project); remove the key and give the token with --access-token-file <file> or the SIGNGATE_ACCESS_TOKEN environment variable';
const isTokenKey = (key: string) => /^(?:(?:personal)?access|bearer|api)?token$/.test(key.replace(/[-_ ]/g, '').toLowerCase());

function describe(error: ErrorObject): string {
  const where = error.instancePath ? error.instancePath.slice(1).split('/').join('.') : '(top level)';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      if (isTokenKey(String(params.additionalProperty))) return `${JSON.stringify(params.additionalProperty)} in ${where}: ${TOKEN_NOT_IN_CONFIG}`;
      const allowed = Object.keys(schema.properties).filter((k) => k !== '$schema');
      const near = closest(String(params.additionalProperty), allowed);
      return `unknown key ${JSON.stringify(params.additionalProperty)} in ${where}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; allowed: ${allowed.join(', ')}`;
    }
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `${where} must be ${String(params.type)}`;
    case 'pattern':
      return `${where} ${error.message}`;
    default:
      return `${where} ${error.message}`;
  }
}

/**
 * JSON as Windows editors save it (a UTF-8 byte-order mark is dropped); a syntax error names line and column.
 * @throws SyntaxError with "line L, column C"
 */
export function parseJsonText(text: string): unknown {
  const body = text.replace(/^\uFEFF/, '');
  try {
    return JSON.parse(body);
  } catch (error) {
    // JSON.parse does not always say where; jsonc-parser (strict settings) finds the first error's offset.
    const { parse: parseTolerant, printParseErrorCode } = require('jsonc-parser') as typeof import('jsonc-parser');
    const errors: ParseError[] = [];
    parseTolerant(body, errors, { disallowComments: true, allowTrailingComma: false });
    const first = errors[0];
    if (!first) throw error;
    const before = body.slice(0, first.offset);
    const line = before.split('\n').length;
    const column = first.offset - before.lastIndexOf('\n');
    throw new SyntaxError(
      `${printParseErrorCode(first.error)
        .replace(/([a-z])([A-Z])/g, '$1 $2')
        .toLowerCase()} at line ${line}, column ${column}`,
      { cause: error },
    );
  }
}

/** The nearest signgate.config.json from `cwd` upward. */
export function findConfigFile(cwd = process.cwd()): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, CONFIG_FILE_NAME);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Loads and validates a config file; paths in it are made absolute relative to the file's folder.
 * @throws UsageError SG_ERR_CONFIG naming the file, the bad key and what is allowed
 */
export function loadConfig(explicitPath: string | undefined, cwd = process.cwd()): LoadedConfig {
  const path = explicitPath ? resolve(cwd, explicitPath) : findConfigFile(cwd);
  if (!path) return { config: {}, path: undefined };
  const shown = displayPath(path, cwd);
  let raw: unknown;
  try {
    raw = parseJsonText(decodeText(readFileSync(path)).text);
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'the file does not exist' : (cause as Error).message;
    throw new UsageError(`${shown}: ${reason}`, 'Fix the JSON, or pass --config with the right path.', 'SG_ERR_CONFIG');
  }
  const validate = validator();
  if (!validate(raw)) {
    const messages = (validate.errors ?? []).map(describe);
    const token = (validate.errors ?? []).some(
      (e) => e.keyword === 'additionalProperties' && isTokenKey(String((e.params as { additionalProperty?: unknown }).additionalProperty)),
    );
    throw new UsageError(
      `${shown}: ${messages.join('; ')}`,
      token
        ? 'Remove the token from the file (and, if the file was shared, revoke it and make a new one).'
        : 'See schemas/config.schema.json for every setting.',
      'SG_ERR_CONFIG',
    );
  }
  const config: CheckConfig = { ...raw };
  for (const key of Object.keys(config.rules ?? {})) {
    if (!findRule(key)) {
      const near = closest(
        key,
        rules.map((r) => r.name),
      );
      throw new UsageError(
        `${shown}: rules.${key} is not a rule${near ? ` (did you mean ${JSON.stringify(near)}?)` : ''}; known rules: ${rules.map((r) => `${r.id} ${r.name}`).join(', ')}`,
        'Use a rule id (SG301) or name (missing-vendor-attribute).',
        'SG_ERR_CONFIG',
      );
    }
  }
  const base = dirname(path);
  // A path written on Windows (keys\\12345_public.snk) is read on every OS: `\` separates folders here too.
  const portable = (p: string) => (sep === '/' ? p.replace(/\\/g, '/') : p);
  const abs = (p: string) => resolve(base, portable(p));
  if (config.keys) config.keys = config.keys.map(abs);
  if (config.paths) config.paths = config.paths.map((p) => (/[*?[\]{}]/.test(p) ? join(base, portable(p)).split('\\').join('/') : abs(p)));
  if (config.root) config.root = abs(config.root);
  if (config.output) config.output = abs(config.output);
  return { config, path };
}
