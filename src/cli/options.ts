// Option values checked while the command line is parsed, before any work starts.
import { UsageError } from '../core/errors.js';
import { CONFIG_FILE_NAME } from '../workflows/config.js';

/**
 * A yargs `coerce` for a numeric option: one finite number (given once), optionally a whole number within bounds.
 * @throws UsageError naming the option and the value
 */
export function numberOption(name: string, rules: { integer?: boolean; min?: number; max?: number } = {}) {
  return (value: unknown): number | undefined => {
    if (value === undefined) return undefined;
    if (Array.isArray(value)) throw new UsageError(`--${name} is given ${value.length} times`, `Give --${name} once.`);
    const n = typeof value === 'number' ? value : Number(value);
    const shown = JSON.stringify(value);
    if (!Number.isFinite(n)) throw new UsageError(`--${name} ${shown} is not a number`, `Give --${name} a number.`);
    if (rules.integer && !Number.isInteger(n)) throw new UsageError(`--${name} ${shown} is not a whole number`, `Give --${name} a whole number.`);
    if (rules.min !== undefined && n < rules.min)
      throw new UsageError(`--${name} ${shown} is below ${rules.min}`, `Give --${name} a value of at least ${rules.min}.`);
    if (rules.max !== undefined && n > rules.max)
      throw new UsageError(`--${name} ${shown} is above ${rules.max}`, `Give --${name} a value of at most ${rules.max}.`);
    return n;
  };
}

// The options of the commands that read a release the way the service checks it (check, sign, pack, audit, and the
// vendor of serve init): declared here once, so that each reads the same in every command's help.

/** --key: the option public key files the assemblies are (to be) signed with. */
export const optionKeyOption = {
  type: 'string',
  array: true,
  describe: 'The option public key file <optionId>_public.snk (repeat for several options)',
} as const;

/** --vendor: the vendor whose attribute the assemblies carry. */
export const vendorOption = { type: 'string', describe: 'Vendor name (the attribute is <Vendor>SignedAssemblyAttribute)' } as const;

/** --vendor-api: which referenced assemblies are the vendor's API. */
export const vendorApiOption = { type: 'string', array: true, describe: 'Vendor API assembly name patterns (default <Vendor>.*)' } as const;

/** --vendor-namespace: the namespace of the vendor attribute. */
export const vendorNamespaceOption = { type: 'string', describe: 'Namespace of the vendor attribute (default the vendor name)' } as const;

// The options of the commands that talk to the signing service (check online, sign, pack's sign --archive, jobs).

/** --base-url: the service's address; `describe` says what the command does with it. */
export function baseUrlOption(describe = 'Signing service base URL (…/<service-name>/v1.0); or SIGNGATE_BASE_URL') {
  return { alias: 'baseUrl', type: 'string', describe } as const;
}

/** --access-token: the token on the command line (shown in process lists: the help says so). */
export const accessTokenOption = {
  alias: 'accessToken',
  type: 'string',
  describe: 'Personal access token (prefer --access-token-file or the SIGNGATE_ACCESS_TOKEN variable: a value here shows in process lists)',
} as const;

/** --access-token-file: a file whose first line is the token. */
export const accessTokenFileOption = { type: 'string', describe: 'File whose first line is the access token' } as const;

/**
 * --root: the folder names are relative to. What the names are (upload names, names in an archive, paths in an audit
 * manifest) and the default differ by command: each says them in `describe`.
 */
export function rootOption(describe: string) {
  return { type: 'string', describe } as const;
}

/** --config: the config file of check, sign, pack and audit. */
export const configOption = { type: 'string', describe: `Config file (default: ${CONFIG_FILE_NAME} from the working directory upward)` } as const;

/** --format of the commands that print text or JSON (beside their --json). */
export const textOrJsonFormatOption = { type: 'string', choices: ['text', 'json'], describe: 'Output format (json is the same as --json)' } as const;
