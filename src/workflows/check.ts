// check(): the pre-flight gate as a library function: prepare (pipeline/index.ts: settings from the options over
// signgate.config.json, the inputs read) → the licenses when online → the engine with the check's product.
import { runEngine } from '../engine/index.js';
import { checkProduct } from '../rules/check-product.js';
import type { CheckResult } from '../rules/rule-runner.js';
import type { CheckSettings } from '../rules/types.js';
import { UsageError } from '../core/errors.js';
import { resolveAccessToken } from './access-token.js';
import { CONFIG_FILE_NAME } from './config.js';
import { displayPath } from './input-paths.js';
import { onlineLicenses } from './licenses.js';
import { BOUNDED, engineRunner, prepareCheck, type CheckOptions, type PreparedCheck, type PreparedSettings } from './pipeline/index.js';
import { clientOptions } from './client-options.js';

export {
  DEFAULT_MAX_UPLOAD_BYTES,
  inputReading,
  keepHeapSmall,
  prepareCheck,
  type CheckOptions,
  type PreparedCheck,
} from './pipeline/index.js';

/** What a check that goes online needs: the address, the token, and what asked it to go online. */
export interface OnlineRequest {
  readonly baseUrl: string | undefined;
  readonly token: string | undefined;
  /** `--online`, `--base-url`, `"online": true in <config>`; undefined: the check stays offline. */
  readonly onlineBy: string | undefined;
}

export interface CheckRun {
  /** The findings, per file and for the upload set; `checkExitCode(result)` is 1 when any is an error. */
  readonly result: CheckResult;
  /** The settings, inputs and report choices the check ran with. */
  readonly prepared: PreparedCheck;
}

/**
 * The pre-flight check: reads the inputs, fetches the licenses when asked to go online (`online`, or `baseUrl`
 * given; see checkService) and compares each key file with its option's key where the service reports the key
 * token, and runs every rule. `prepared.notes` says what could not be compared, and an address left unused.
 * @example
 * const { result } = await check({ paths: ['bin/Release'], keys: ['12345_public.snk'], vendor: 'Contoso' });
 * if (result.summary.errors > 0) process.exitCode = 1;
 * @throws UsageError for bad options; SignGateError SG_ERR_IO_READ; ServiceError SG_ERR_HTTP_* online
 */
export async function check(options: CheckOptions): Promise<CheckRun> {
  const read = await prepareCheck(options, BOUNDED);
  const { onlineBy, offlineNote } = onlineRequest(options, read);
  const online = onlineBy
    ? await licensesWhenOnline({ baseUrl: read.baseUrl, token: resolveAccessToken(options), onlineBy }, read.settings.keys, options.env)
    : undefined;
  const settings: CheckSettings = { ...read.settings, ...online?.settings };
  const result = await runEngine(checkProduct({ settings, severities: read.severities }), read.inputs, await engineRunner(read));
  const notes = [...read.notes, ...(offlineNote ? [offlineNote] : []), ...(online?.notes ?? [])];
  return { result, prepared: { ...read, settings, notes } };
}

/** The licenses (and notes) of the service, when the check goes online (see checkService); the client loads only then. */
async function licensesWhenOnline(
  request: OnlineRequest,
  keys: CheckSettings['keys'],
  env: NodeJS.ProcessEnv | undefined,
): Promise<ReturnType<typeof onlineLicenses> | undefined> {
  const service = checkService(request);
  if (!service) return undefined;
  const { createServiceClient } = await import('../service-client/client.js');
  return onlineLicenses(await createServiceClient(clientOptions(service, { env })).licenseEntries(), keys);
}

/**
 * Whether check goes online, and what asked it to: `--online` (or `--no-online`) decides; else `--base-url`; else
 * "online" in the config file. An address from the config file or the environment alone is said in a note, not used.
 */
function onlineRequest(
  options: CheckOptions,
  { config, configPath }: PreparedSettings,
): { readonly onlineBy: string | undefined; readonly offlineNote: string | undefined } {
  const environment = (options.env ?? process.env).SIGNGATE_BASE_URL || undefined;
  const shownConfig = configPath ? displayPath(configPath) : CONFIG_FILE_NAME;
  let onlineBy: string | undefined;
  if (options.online !== undefined) onlineBy = options.online ? '--online' : undefined;
  else if (options.baseUrl !== undefined) onlineBy = '--base-url';
  else if (config.online) onlineBy = `"online": true in ${shownConfig}`;
  const at = config.baseUrl !== undefined ? `"baseUrl" in ${shownConfig}` : environment && 'SIGNGATE_BASE_URL';
  const unused = options.online === undefined && !onlineBy ? at : undefined;
  const offlineNote = !unused
    ? undefined
    : options.inBuild
      ? `check ran offline: ${unused} is the service for the signing step; <SigngateCheckOnline>true</SigngateCheckOnline> takes the check there too, for the license cross-check`
      : `check ran offline: ${unused} is the service for sign; --online takes check there too, for the license cross-check ` +
        `(or "online": true in ${CONFIG_FILE_NAME}; in a build, SigngateCheckOnline)`;
  return { onlineBy, offlineNote };
}

/**
 * The service a check asks for the licenses: only when it was asked to go online (`--online`, `--base-url`,
 * "online": true in the config file), never for an address alone (the config file's or SIGNGATE_BASE_URL, which
 * are sign's).
 * @throws UsageError when asked to go online without an address or without an access token
 */
export function checkService(request: OnlineRequest): { baseUrl: string; accessToken: string } | undefined {
  const { baseUrl, token, onlineBy } = request;
  if (!onlineBy) return undefined;
  const offline = `or check offline: leave out ${onlineBy} (in a build: -p:SigngateCheckOnline=false)`;
  if (!baseUrl) {
    throw new UsageError(
      `check goes online (${onlineBy}) but no signing service address is given`,
      `Pass --base-url <…/<service-name>/v1.0>, set "baseUrl" in ${CONFIG_FILE_NAME} or set SIGNGATE_BASE_URL; ${offline}.`,
    );
  }
  if (!token) {
    throw new UsageError(
      `check goes online (${onlineBy}, ${baseUrl}) but no access token is given`,
      `Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN (avoid --access-token: it shows in process lists); ${offline}.`,
    );
  }
  return { baseUrl, accessToken: token };
}
