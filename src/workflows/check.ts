// check(): the pre-flight gate as a library function, a consumer of the pipeline (pipeline/index.ts): settings from
// the options over signgate.config.json, the licenses when online, check results.
import type { CheckResult } from '../rules/runner.js';
import type { CheckSettings } from '../rules/types.js';
import { UsageError } from '../core/errors.js';
import { CONFIG_FILE_NAME } from './config.js';
import { onlineLicenses } from './licenses.js';
import { runPipeline, type CheckOptions, type PreparedCheck, type PreparedSettings } from './pipeline/index.js';

export {
  DEFAULT_MAX_UPLOAD_BYTES,
  DEFAULT_READ_AT_ONCE_BYTES,
  inputReading,
  keepHeapSmall,
  prepareCheck,
  prepareSettings,
  readCheckInputs,
  withDeclaredVendorAttributes,
  type CheckOptions,
  type InputReading,
  type PreparedCheck,
  type PreparedSettings,
} from './pipeline/index.js';

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
  let online: ReturnType<typeof onlineLicenses> | undefined;
  const { read: prepared, result } = await runPipeline(
    { options },
    {
      produce: 'check-results',
      prepare: async (read) => {
        const service = checkService(read);
        // The service client loads only when the check goes online.
        if (service) online = onlineLicenses(await (await import('../service-client/licenses.js')).getLicenseEntries(service), read.settings.keys);
        return { settings: { ...read.settings, ...online?.settings }, severities: read.severities };
      },
    },
  );
  const settings: CheckSettings = { ...prepared.settings, ...online?.settings };
  const notes = [...prepared.notes, ...(prepared.offlineNote ? [prepared.offlineNote] : []), ...(online?.notes ?? [])];
  return { result, prepared: { ...prepared, settings, notes } };
}

/**
 * The service a check asks for the licenses: only when it was asked to go online (`--online`, `--base-url`,
 * "online": true in the config file), never for an address alone (the config file's or SIGNGATE_BASE_URL, which
 * are sign's).
 * @throws UsageError when asked to go online without an address or without an access token
 */
export function checkService(prepared: Pick<PreparedSettings, 'baseUrl' | 'token' | 'onlineBy'>): { baseUrl: string; accessToken: string } | undefined {
  const { baseUrl, token, onlineBy } = prepared;
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
