// check(): the pre-flight gate as a library function, a consumer of the pipeline (pipeline/index.ts): settings from
// the options over signgate.config.json, the licenses when online, check results.
import type { CheckResult } from '../rules/runner.js';
import type { CheckSettings } from '../rules/types.js';
import { onlineLicenses } from './licenses.js';
import { runPipeline, type CheckOptions, type PreparedCheck } from './pipeline/index.js';

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
 * The pre-flight check: reads the inputs, fetches the licenses when a service address and token are given (and
 * compares each key file with its option's key where the service reports the key token), and runs every rule.
 * `prepared.notes` says what could not be compared.
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
      prepare: async ({ baseUrl, token, settings, severities }) => {
        // The service client loads only when the check goes online.
        if (baseUrl && token) online = onlineLicenses(await (await import('../service-client/licenses.js')).getLicenseEntries({ baseUrl, accessToken: token }), settings.keys);
        return { settings: { ...settings, ...online?.settings }, severities };
      },
    },
  );
  const settings: CheckSettings = { ...prepared.settings, ...online?.settings };
  return { result, prepared: { ...prepared, settings, notes: [...prepared.notes, ...(online?.notes ?? [])] } };
}
