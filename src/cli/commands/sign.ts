// `signgate sign`: check -> licenses -> upload -> poll -> download -> extract -> verify -> (delete).
// Replaces the vendor's post-build script (its parameter names work too) and never loses a result:
// the local ledger lets an interrupted run resume the same job.
import { createHash } from 'node:crypto';
import { rmSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { ServiceError, UsageError } from '../../core/errors.js';
import { formatVersion } from '../../metadata/module-metadata.js';
import { formatReport } from '../../report/index.js';
import { runCheck } from '../../rules/runner.js';
import { proposeSplit } from '../../rules/split.js';
import type { CheckInput, ExpectedKey } from '../../rules/types.js';
import { createServiceClient, type JobStatus, type ServiceClient } from '../../service-client/client.js';
import { readModule } from '../../strongname/assembly-info.js';
import { compareIgnoringSignature, verifyStrongName } from '../../strongname/strong-name.js';
import { extractPackage } from '../extract.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { displayPath } from '../files.js';
import { cacheDir, Ledger, ledgerPath, type LedgerEntry, type LedgerFile } from '../ledger.js';
import type { Io } from '../output.js';
import { createProgress } from '../progress.js';
import { prepareCheck, type CheckArgs } from './check.js';

export interface SignArgs extends CheckArgs {
  files?: string[];
  assemblies?: string[];
  destinationPath?: string;
  rootDirectory?: string;
  deleteAfterwards: boolean;
  comment?: string;
  check: boolean;
  split: boolean;
  force: boolean;
  timeout: number;
  pollInterval: number;
  json: boolean;
}

export interface SignedFileResult {
  path: string;
  uploadName: string;
  uploaded: boolean;
  jobId: string | null;
  state: string;
  verified: boolean;
  reason: string | null;
  output: string | null;
  messages: { dateTime: string; messageType: string; message: string }[];
}

export interface SignResult {
  baseUrl: string;
  destination: string;
  ledger: string;
  jobs: { jobId: string; resumed: boolean; files: number; deleted: boolean }[];
  files: SignedFileResult[];
  summary: { files: number; uploaded: number; signed: number; verified: number; failed: number; notUploaded: number };
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Why a returned file is not what was ordered, or null when it is signed correctly and changed in nothing else. */
export function checkReturnedFile(uploaded: Uint8Array, returned: Uint8Array, keys: readonly ExpectedKey[]): string | null {
  let before;
  let after;
  try {
    before = readModule(uploaded);
    after = readModule(returned);
  } catch (error) {
    return `the returned file cannot be read: ${(error as Error).message}`;
  }
  const a = before.assembly;
  const b = after.assembly;
  if (!a || !b) return 'the returned file has no assembly manifest';
  if (a.name !== b.name || formatVersion(a.version) !== formatVersion(b.version) || a.culture !== b.culture || Buffer.compare(Buffer.from(a.publicKey), Buffer.from(b.publicKey)) !== 0) {
    return `the identity changed: ${a.name} ${formatVersion(a.version)} became ${b.name} ${formatVersion(b.version)}`;
  }
  const key = keys.find((k) => Buffer.compare(Buffer.from(k.publicKey.blob), Buffer.from(b.publicKey)) === 0);
  if (!key) return "the returned file is not signed with one of the organization's keys";
  const verification = verifyStrongName(after, { expectedKey: key.publicKey });
  if (!verification.valid) return `the signature does not verify: ${verification.reason}`;
  const diff = compareIgnoringSignature(before, returned);
  if (!diff.onlySignatureDiffers) return `the returned file differs in more than its signature, flag and checksum (first at ${diff.firstDifference?.where})`;
  return null;
}

async function poll(client: ServiceClient, jobId: string, timeoutS: number, intervalMs: number): Promise<JobStatus> {
  const deadline = Date.now() + timeoutS * 1000;
  let wait = intervalMs;
  let last: JobStatus | undefined;
  for (;;) {
    last = await client.status(jobId);
    if (last.processingFinished) return last;
    if (Date.now() + wait > deadline) {
      const pending = last.assemblies.filter((a) => !['Signed', 'Error'].includes(a.fileProcessingState)).length;
      throw new ServiceError(
        'SG_ERR_HTTP_TIMEOUT',
        `job ${jobId} is still being processed after ${timeoutS} s (${pending} of ${last.assemblies.length} files not final); run the same command again to resume it, or raise --timeout`,
        { method: 'GET', url: `${client.baseUrl}/assemblies/${jobId}/status` },
      );
    }
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(Math.round(wait * 1.5), 10_000);
  }
}

export async function runSign(args: SignArgs, io: Io): Promise<ExitCodeValue> {
  const paths = [...(args.files ?? []), ...(args.assemblies ?? []).flatMap((a) => a.split(',')).map((s) => s.trim()).filter(Boolean)];
  const prepared = await prepareCheck({ ...args, paths, root: args.rootDirectory ?? args.root });
  const destination = resolve(args.destinationPath ?? 'signed');
  // The destination is often inside the build output (bin/Release/signed): earlier results there are not inputs.
  const inDestination = (p: string) => {
    const rel = relative(destination, resolve(p));
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  const { baseUrl, token, settings } = prepared;
  const inputs = prepared.inputs.filter((i) => !inDestination(i.path));
  if (inputs.length === 0) throw new UsageError('no files to sign outside the destination folder', 'Point signgate at the build output, and --destination-path somewhere else or below it.');
  if (!baseUrl || !token) throw new UsageError('sign needs the service address and an access token', 'Pass --base-url (or "baseUrl" in signgate.config.json) and --access-token-file, or set SIGNGATE_BASE_URL and SIGNGATE_ACCESS_TOKEN.');
  const client = createServiceClient({
    baseUrl,
    accessToken: token,
    onRetry: (r) => io.err(`retrying ${r.method} ${r.url.replace(baseUrl, '')} (${r.reason}) in ${r.delayMs} ms`),
  });

  // 1. Pre-flight check with the licenses.
  const licensedOptionIds = await client.licenses();
  const check = runCheck(inputs, { settings: { ...settings, licensedOptionIds }, severities: prepared.severities });
  const handledBySplit = new Set(args.split ? ['upload-too-large', 'duplicate-name'] : []);
  const blocking = check.findings.filter((f) => f.severity === 'error' && !handledBySplit.has(f.rule));
  if (args.check && blocking.length) {
    io.out(formatReport('text', check, { color: io.color }));
    io.err(`signgate sign: the pre-flight check found ${blocking.length} error(s); nothing was uploaded. Fix them, or pass --no-check to upload anyway.`);
    return ExitCode.Findings;
  }
  const uploadPaths = new Set(args.check ? check.uploadSet.files : inputs.map((i) => i.path));
  const toUpload = inputs.filter((i) => uploadPaths.has(i.path));
  const result: SignResult = { baseUrl, destination: displayPath(destination), ledger: ledgerPath(), jobs: [], files: [], summary: { files: inputs.length, uploaded: 0, signed: 0, verified: 0, failed: 0, notUploaded: 0 } };
  for (const f of check.files.filter((f) => !uploadPaths.has(f.path))) {
    const already = f.findings.some((x) => x.rule === 'already-signed');
    result.files.push({ path: f.path, uploadName: inputs.find((i) => i.path === f.path)!.uploadName, uploaded: false, jobId: null, state: already ? 'already-signed' : 'not-uploaded', verified: false, reason: f.reason, output: null, messages: [] });
  }

  // 2. One job, or several when --split.
  const totalBytes = toUpload.reduce((n, i) => n + i.bytes.length, 0);
  let groups: CheckInput[][] = toUpload.length ? [toUpload] : [];
  if (totalBytes > settings.maxUploadBytes || (args.split && check.findings.some((f) => f.rule === 'duplicate-name'))) {
    if (!args.split) throw new UsageError(`the upload is ${(totalBytes / 1e6).toFixed(1)} MB, over the limit of ${(settings.maxUploadBytes / 1e6).toFixed(1)} MB`, 'Pass --split to upload several jobs that each fit.');
    const plan = proposeSplit(toUpload.map((i) => ({ path: i.path, uploadName: i.uploadName, size: i.bytes.length })), settings.maxUploadBytes);
    if (plan.tooLarge.length) throw new UsageError(`${plan.tooLarge.map((t) => t.path).join(', ')} alone exceed(s) the upload limit`, 'No split can upload a file larger than the limit.');
    groups = plan.jobs.map((job) => job.map((j) => toUpload.find((i) => i.path === j.path)!));
  }

  const ledger = new Ledger();
  mkdirSync(cacheDir(), { recursive: true });
  for (const [index, group] of groups.entries()) {
    const files: LedgerFile[] = group.map((i) => ({ name: i.uploadName, sha256: sha256(i.bytes), size: i.bytes.length, source: i.path }));
    let entry: LedgerEntry | undefined = ledger.resumable(baseUrl, files);
    const resumed = entry !== undefined;
    if (entry) io.err(`resuming job ${entry.jobId} (uploaded ${entry.createdAt}); nothing is uploaded again`);
    else {
      const progress = createProgress(`upload${groups.length > 1 ? ` ${index + 1}/${groups.length}` : ''}`, io);
      const job = await client.upload(group.map((i) => ({ name: i.uploadName, bytes: i.bytes })), args.comment, (d, t) => progress.update(d, t));
      progress.stop();
      const now = new Date().toISOString();
      entry = { jobId: job.id, baseUrl, comment: args.comment ?? null, createdAt: now, updatedAt: now, state: 'uploaded', files };
      ledger.upsert(entry);
      io.err(`uploaded ${group.length} file(s) as job ${job.id}`);
    }
    const status = await poll(client, entry.jobId, args.timeout, args.pollInterval);
    entry.state = 'finished';
    ledger.upsert(entry);
    const zipPath = join(cacheDir(), `${entry.jobId}.zip`);
    const progress = createProgress('download', io);
    await client.download(entry.jobId, zipPath, (d, t) => progress.update(d, t));
    progress.stop();
    let extracted;
    try {
      extracted = await extractPackage(zipPath, destination, {
        expected: new Set(group.map((i) => i.uploadName)),
        force: args.force,
        logName: groups.length > 1 ? `signing-log-${index + 1}.txt` : 'signing-log.txt',
      });
    } finally {
      rmSync(zipPath, { force: true });
    }
    entry.state = 'downloaded';
    entry.destination = destination;
    const results: NonNullable<LedgerEntry['results']> = [];
    for (const input of group) {
      const fileStatus = status.assemblies.find((a) => a.fileName.toLowerCase() === input.uploadName.toLowerCase());
      const returned = extracted.find((e) => e.name.toLowerCase() === input.uploadName.toLowerCase());
      const state = fileStatus?.fileProcessingState ?? 'Missing';
      let reason: string | null = null;
      if (!returned) reason = 'the result package does not contain the file';
      else if (state !== 'Signed') reason = `the service reports ${state}`;
      else reason = checkReturnedFile(input.bytes, returned.bytes, settings.keys);
      const verified = reason === null;
      const messages = [...(fileStatus?.messages ?? [])];
      results.push({ fileName: input.uploadName, state, verified, outputSha256: returned ? sha256(returned.bytes) : null, messages });
      result.files.push({ path: input.path, uploadName: input.uploadName, uploaded: true, jobId: entry.jobId, state, verified, reason, output: returned ? displayPath(returned.path) : null, messages });
    }
    entry.results = results;
    entry.state = results.every((r) => r.verified) ? 'verified' : 'failed';
    ledger.upsert(entry);
    let deleted = false;
    if (args.deleteAfterwards) {
      await client.delete(entry.jobId);
      entry.state = 'deleted';
      ledger.upsert(entry);
      deleted = true;
    }
    result.jobs.push({ jobId: entry.jobId, resumed, files: group.length, deleted });
  }

  result.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const uploaded = result.files.filter((f) => f.uploaded);
  result.summary = {
    files: result.files.length,
    uploaded: uploaded.length,
    signed: uploaded.filter((f) => f.state === 'Signed').length,
    verified: uploaded.filter((f) => f.verified).length,
    failed: uploaded.filter((f) => !f.verified).length,
    notUploaded: result.files.length - uploaded.length,
  };
  if (args.json) io.out(JSON.stringify(result, null, 2));
  else printResult(result, io);
  return result.summary.failed === 0 ? ExitCode.Ok : ExitCode.Findings;
}

function printResult(result: SignResult, io: Io): void {
  const c = io.color;
  for (const f of result.files) {
    const mark = !f.uploaded ? c.dim('skip') : f.verified ? c.green('ok  ') : c.red('FAIL');
    io.out(`${mark} ${f.path}${f.output ? ` -> ${f.output}` : ''}  ${f.uploaded ? (f.verified ? 'signed and verified' : (f.reason ?? f.state)) : c.dim(f.reason ?? f.state)}`);
    for (const m of f.messages) io.out(`       ${m.messageType === 'Error' ? c.red(m.messageType) : m.messageType}: ${m.message}`);
  }
  const s = result.summary;
  io.out(`\n${s.uploaded} uploaded in ${result.jobs.length} job(s): ${s.verified} signed and verified, ${s.failed ? c.red(`${s.failed} failed`) : '0 failed'}; ${s.notUploaded} not uploaded. Output in ${result.destination}`);
}

export const signCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, SignArgs> => ({
  command: 'sign [files..]',
  describe: 'Check, upload, wait, download, extract and verify: the whole signing round trip',
  builder: (y: Argv) =>
    y
      .positional('files', { type: 'string', array: true, describe: 'Assemblies, folders or quoted globs (or --assemblies a.dll,b.dll)' })
      .option('assemblies', { type: 'string', array: true, describe: 'Comma-separated assemblies (the vendor script\'s parameter)' })
      .option('key', { type: 'string', array: true, describe: 'The option public key file <optionId>_public.snk' })
      .option('vendor', { type: 'string', describe: 'Vendor name (the attribute is <Vendor>SignedAssemblyAttribute)' })
      .option('vendor-api', { type: 'string', array: true, describe: 'Vendor API assembly name patterns (default <Vendor>.*)' })
      .option('root-directory', { alias: ['rootDirectory', 'root'], type: 'string', describe: 'Upload names are paths relative to this folder' })
      .option('destination-path', { alias: 'destinationPath', type: 'string', describe: 'Where the signed files go (default ./signed; created if missing)' })
      .option('delete-afterwards', { alias: 'deleteAfterwards', type: 'boolean', default: false, describe: 'Delete the job on the service once its results are saved locally' })
      .option('comment', { type: 'string', describe: 'Comment stored with the job' })
      .option('base-url', { alias: 'baseUrl', type: 'string', describe: 'Signing service base URL (…/<service-name>/v1.0); or SIGNGATE_BASE_URL' })
      .option('access-token', { alias: 'accessToken', type: 'string', describe: 'Personal access token (prefer --access-token-file or SIGNGATE_ACCESS_TOKEN)' })
      .option('access-token-file', { type: 'string', describe: 'File whose first line is the access token' })
      .option('check', { type: 'boolean', default: true, describe: 'Run the pre-flight check first and stop on errors (--no-check uploads anyway)' })
      .option('split', { type: 'boolean', default: false, describe: 'Upload several jobs when the files exceed the size limit or share names' })
      .option('force', { type: 'boolean', default: false, describe: 'Overwrite files in the destination that are not among the files being signed' })
      .option('timeout', { type: 'number', default: 600, describe: 'Seconds to wait for the service to finish a job' })
      .option('poll-interval', { type: 'number', default: 1000, hidden: true, describe: 'First status poll interval in ms (grows by 1.5x up to 10 s)' })
      .option('max-upload-bytes', { type: 'number', describe: 'Size limit of one job (default 40000000)' })
      .option('json', { type: 'boolean', default: false, describe: 'Print the result as JSON (schemas/sign-result.schema.json)' })
      .option('config', { type: 'string', describe: 'Config file (default: signgate.config.json from the working directory upward)' })
      .example('$0 sign bin/Release --root bin/Release --destination-path signed --delete-afterwards', 'settings from signgate.config.json, token from SIGNGATE_ACCESS_TOKEN')
      .example('$0 sign --baseUrl https://… --accessToken $TOKEN --assemblies A.dll,B.dll --destinationPath out', "the vendor script's parameter names")
      .epilog(`Exit codes: 0 every file signed and verified, 1 findings or files not signed, 2 usage error, 3 unreadable input, network or service error.\nThe job ledger is ${ledgerPath()} (SIGNGATE_CACHE_DIR moves it); a run interrupted after the upload resumes that job.`) as unknown as Argv<SignArgs>,
  handler: async (args: ArgumentsCamelCase<SignArgs>) => setExit(await runSign(args, io)),
});

