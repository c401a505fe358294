// sign(): check -> licenses -> upload -> poll -> download -> extract -> verify -> (delete), as a library
// function: prepare, the licenses, the engine's check, then each job (sign-job.ts). Never loses a result: the local
// ledger lets an interrupted run resume the same job, and the job is deleted (when asked) only once everything is
// saved locally.
import { resolve } from 'node:path';
import { inThisThread, runEngine } from '../engine/index.js';
import { checkProduct } from '../rules/check-product.js';
import type { CheckSettings } from '../rules/types.js';
import { createServiceClient } from '../service-client/client.js';
import { readRecordPublicKey } from './keys.js';
import { displayPath } from './input-paths.js';
import { Ledger, ledgerPath, makeCacheDir } from './ledger.js';
import { onlineLicenses } from './licenses.js';
import { prepareCheck, type CheckOptions } from './pipeline/index.js';
import { signInputs, uploadCandidates } from './sign-inputs.js';
import { planJobs, signJob, withSummary, type JobOptions, type JobRun, type SignEvents, type SignResult } from './sign-job.js';
import { clientOptions } from './client-options.js';

export type { JobOptions, ProgressReporter, SignedFileResult, SignEvents, SignResult } from './sign-job.js';

/** The options of sign(): the check's options and the jobs'. */
export interface SignOptions extends CheckOptions, JobOptions {}

/**
 * The whole signing round trip.
 * @example
 * const result = await sign({ paths: ['bin/Release'], root: 'bin/Release', keys: ['12345_public.snk'], vendor: 'Contoso',
 *   baseUrl: 'https://signing.example.com/assembly-signing/v1.0', accessTokenFile: 'token.txt', destination: 'signed' });
 * if (result.summary.failed > 0) process.exitCode = 1;
 * @throws UsageError for bad options; ServiceError SG_ERR_HTTP_*; SignGateError for an unsafe result package
 */
export async function sign(options: SignOptions, events: SignEvents = {}): Promise<SignResult> {
  const log = events.log ?? (() => {});
  // A record key given up front is read before anything else: a wrong one stops the run before any upload.
  const expectedKey = options.recordKey === undefined ? undefined : readRecordPublicKey(options.recordKey);
  const destination = resolve(options.destination ?? 'signed');
  // 1. Prepare: the settings, and the inputs held in memory (what is uploaded is what was checked).
  const read = await prepareCheck(options);
  const { inputs, baseUrl, token } = signInputs(read, options, destination, log);
  // 2. The licenses, from the service.
  const client = createServiceClient(
    clientOptions({ baseUrl, accessToken: token }, { env: options.env, onRetry: events.retry, nameSeparator: options.nameSeparator }),
  );
  const licenses = onlineLicenses(await client.licenseEntries(), read.settings.keys);
  for (const note of licenses.notes) log(`note: ${note}`);
  const settings: CheckSettings = { ...read.settings, ...licenses.settings };
  // 3. The pre-flight check: the engine with the check's product, in this thread.
  const check = await runEngine(checkProduct({ settings, severities: read.severities }), inputs, inThisThread());
  // 4. The jobs: one, or several when split; nothing when the check stops the run.
  const result: SignResult = {
    baseUrl,
    destination: displayPath(destination),
    ledger: ledgerPath(),
    jobs: [],
    files: [],
    extras: [],
    check,
    stoppedByCheck: false,
    blocking: 0,
    summary: { files: inputs.length, uploaded: 0, signed: 0, verified: 0, failed: 0, notUploaded: 0 },
  };
  const plan = planJobs(check, inputs, settings.maxUploadBytes, options);
  if (plan.blocking) {
    result.stoppedByCheck = true;
    result.blocking = plan.blocking;
    return result;
  }
  result.files.push(...plan.notUploaded);
  // 5. Each job: upload, poll, the record's proof, download, verify, record in the ledger.
  const run: JobRun = {
    client,
    baseUrl,
    destination,
    keys: settings.keys,
    expectedKey,
    ledger: new Ledger(),
    manifests: plan.manifestOf,
    options,
    events,
    log,
    jobs: plan.groups.length,
  };
  makeCacheDir();
  for (const [index, group] of plan.groups.entries()) {
    const done = await signJob(run, group, index);
    result.jobs.push(done.job);
    result.files.push(...done.files);
    result.extras.push(...done.extras);
  }
  return withSummary(result);
}

/**
 * In a build without an access token: the result of a run that uploads nothing, when the check (offline) finds nothing
 * to upload (a project that references no vendor API, SG504 as a note, or every file already signed), else undefined:
 * then the build needs the token. Nothing is asked of the service and nothing is written.
 * @throws UsageError for bad options
 */
export async function signWithoutToken(options: SignOptions): Promise<SignResult | undefined> {
  const destination = resolve(options.destination ?? 'signed');
  const read = await prepareCheck(options);
  const inputs = uploadCandidates(read, destination);
  const check = await runEngine(checkProduct({ settings: read.settings, severities: read.severities }), inputs, inThisThread());
  const plan = planJobs(check, inputs, read.settings.maxUploadBytes, options);
  if (plan.blocking || plan.groups.length) return undefined;
  return withSummary({
    baseUrl: read.baseUrl ?? '',
    destination: displayPath(destination),
    ledger: ledgerPath(),
    jobs: [],
    files: [...plan.notUploaded],
    extras: [],
    check,
    stoppedByCheck: false,
    blocking: 0,
    summary: { files: inputs.length, uploaded: 0, signed: 0, verified: 0, failed: 0, notUploaded: 0 },
  });
}
