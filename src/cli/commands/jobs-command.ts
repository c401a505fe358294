// `signgate licenses` and `signgate jobs list|status|download|delete|prune|unpin-record`: the service's jobs from the command line.
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { isFailedState } from '../../core/file-states.js';
import type { ServiceClient } from '../../service-client/client.js';
import { displayPath } from '../../workflows/input-paths.js';
import type { LicenseEntry } from '../../service-client/answers.js';
import { downloadJob, MAX_TALLIED_JOBS, parseDuration, planPrune, tallyJobs } from '../../workflows/jobs.js';
import { savePublicKey } from '../../workflows/licenses.js';
import { Ledger, recordIdentity } from '../../workflows/ledger.js';
import { connect } from '../../workflows/service.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { accessTokenFileOption, accessTokenOption, baseUrlOption, numberOption, textOrJsonFormatOption } from '../options.js';
import type { Io } from '../output.js';
import { createProgress, retryLine } from '../progress.js';

interface ServiceArgs {
  baseUrl?: string;
  accessToken?: string;
  accessTokenFile?: string;
  config?: string;
  json: boolean;
}

function clientFrom(args: ServiceArgs, io: Io): ServiceClient {
  return connect({
    ...(args.baseUrl ? { baseUrl: args.baseUrl } : {}),
    ...(args.accessToken ? { accessToken: args.accessToken } : {}),
    ...(args.accessTokenFile ? { accessTokenFile: args.accessTokenFile } : {}),
    ...(args.config ? { config: args.config } : {}),
    onRetry: (r) => io.err(retryLine(r)),
  });
}

const serviceOptions = <T>(y: Argv<T>) =>
  y
    .option('base-url', baseUrlOption())
    .option('access-token', accessTokenOption)
    .option('access-token-file', accessTokenFileOption)
    .option('config', { type: 'string', describe: 'Config file with "baseUrl"' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
    .option('format', textOrJsonFormatOption);

async function confirm(question: string, io: Io): Promise<boolean> {
  if (!process.stdin.isTTY) throw new UsageError('prune deletes jobs and needs a confirmation', 'Pass --yes when there is no terminal to answer on (CI).');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
    void io;
  }
}

interface LicensesArgs extends ServiceArgs {
  publicKey?: number;
  out?: string;
}

export async function runLicenses(args: LicensesArgs, io: Io): Promise<ExitCodeValue> {
  const client = clientFrom(args, io);
  if (args.publicKey !== undefined) {
    const saved = await savePublicKey(client, args.publicKey, args.out ?? `${args.publicKey}_public.snk`);
    if (args.json) io.out(JSON.stringify(saved));
    else io.out(`wrote ${saved.path}: the public key of option ${saved.optionId} (${saved.bitLength}-bit, key token ${saved.token})`);
    return ExitCode.Ok;
  }
  if (args.out !== undefined)
    throw new UsageError(
      '--out goes with --public-key <optionId>',
      "Pass --public-key <optionId> --out <optionId>_public.snk to write an option's public key file.",
    );
  const entries = await client.licenseEntries();
  if (args.json) io.out(JSON.stringify(entries.map((e) => ({ optionId: e.optionId, publicKeyToken: e.publicKeyToken }))));
  else if (!entries.length) io.out('The organization holds no license option: nothing can be signed.');
  else {
    const token = (e: LicenseEntry) =>
      e.publicKeyToken
        ? `key token ${e.publicKeyToken}`
        : `key token not reported by the service${e.publicKeyTokenProblem ? ` (${e.publicKeyTokenProblem})` : ''}`;
    io.out(entries.map((e) => `option ${e.optionId}: key file ${e.optionId}_public.snk, ${token(e)}`).join('\n'));
  }
  return ExitCode.Ok;
}

export const licensesCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, LicensesArgs> => ({
  command: 'licenses',
  describe: "List the organization's license options (the <optionId>_public.snk it may use, with its key token); --public-key writes one",
  builder: (y: Argv) =>
    serviceOptions(y)
      .option('public-key', {
        type: 'number',
        coerce: numberOption('public-key', { integer: true, min: 0 }),
        describe: "Write this option's public key file <optionId>_public.snk from the service",
      })
      .option('out', { type: 'string', describe: 'Where --public-key writes the file (default <optionId>_public.snk in the working directory)' })
      .example(
        '$0 licenses --public-key 12345 --out keys/12345_public.snk',
        "the option's public key file, to delay-sign with",
      ) as unknown as Argv<LicensesArgs>,
  handler: async (args: ArgumentsCamelCase<LicensesArgs>) => setExit(await runLicenses(args, io)),
});

interface JobsArgs extends ServiceArgs {
  action: string;
  ids?: string[];
  destinationPath?: string;
  key?: string[];
  recordKey?: string;
  force: boolean;
  olderThan?: string;
  keep?: number;
  yes: boolean;
}

export async function runJobs(args: JobsArgs, io: Io): Promise<ExitCodeValue> {
  if (args.action === 'unpin-record') return unpinRecord(args, io);
  const client = clientFrom(args, io);
  const ids = args.ids ?? [];
  const needId = (n = 1) => {
    if (ids.length < n) throw new UsageError(`jobs ${args.action} needs a job id`, `Run 'signgate jobs list' to see the ids.`);
  };
  switch (args.action) {
    case 'list': {
      const jobs = await client.list();
      if (args.json) io.out(JSON.stringify(jobs, null, 2));
      else {
        // A finished job says how its files ended ("finished: 0 of 3 signed, 3 failed"), from its status.
        const tallies = await tallyJobs(client, jobs);
        for (const j of jobs) {
          const t = tallies.get(j.id);
          const state = t
            ? `finished: ${t.signed} of ${t.files} signed${t.failed ? `, ${t.failed} failed` : ''}`
            : `${j.processingFinished === null ? '?         ' : j.processingFinished ? 'finished  ' : 'processing'}  ${j.fileCount === null ? '   ?' : String(j.fileCount).padStart(4)} files`;
          io.out(`${j.id}  ${j.createdAt ?? '(no date)'}  ${state}  ${j.comment ?? ''}`.trimEnd());
        }
        const untallied = jobs.filter((j) => j.processingFinished === true && !tallies.has(j.id)).length;
        io.out(
          `${jobs.length} job(s)${untallied ? `; ${untallied} finished job(s) without their files' outcome (the newest ${MAX_TALLIED_JOBS} are shown): 'signgate jobs status <id>'` : ''}`,
        );
      }
      return ExitCode.Ok;
    }
    case 'status': {
      needId();
      const status = await client.status(ids[0]!);
      if (args.json) io.out(JSON.stringify(status, null, 2));
      else {
        io.out(`job ${status.id}: ${status.processingFinished ? 'finished' : 'processing'}${status.comment ? ` (${status.comment})` : ''}`);
        for (const a of status.assemblies) {
          io.out(`  ${a.fileProcessingState.padEnd(10)} ${a.fileName}`);
          for (const m of a.messages) io.out(`             ${m.messageType}: ${m.message}`);
        }
      }
      return status.processingFinished && status.assemblies.every((a) => !isFailedState(a.fileProcessingState)) ? ExitCode.Ok : ExitCode.Findings;
    }
    case 'download': {
      needId();
      const destination = resolve(args.destinationPath ?? ids[0]!.replace(/[^A-Za-z0-9._-]/g, '_'));
      const result = await downloadJob(client, ids[0]!, destination, {
        ...(args.key?.length ? { keys: args.key } : {}),
        ...(args.config ? { config: args.config } : {}),
        force: args.force,
        progress: createProgress('download', io),
        ...(args.recordKey !== undefined ? { recordKey: args.recordKey } : {}),
      });
      if (args.json) {
        io.out(
          JSON.stringify(
            { jobId: ids[0], destination: displayPath(destination), written: result.written, record: result.record, files: result.verdicts },
            null,
            2,
          ),
        );
        return result.written ? ExitCode.Ok : ExitCode.Findings;
      }
      io.err(result.record);
      for (const v of result.verdicts)
        io.out(
          `${v.verified ? 'ok  ' : 'FAIL'} ${v.name}  ${v.verified ? `signed and verified${v.comparedWithUpload ? '' : ' (its signature and key; the upload is not in the job ledger here, so what else changed is not compared)'}` : v.reason}`,
        );
      if (!result.written) {
        io.out(
          `${result.verdicts.filter((v) => !v.verified).length} of ${result.verdicts.length} file(s) failed verification: nothing was written to ${displayPath(destination)}`,
        );
        return ExitCode.Findings;
      }
      io.out(`${result.files.length + result.extras.length + (result.log ? 1 : 0)} file(s) verified and extracted into ${displayPath(destination)}`);
      return ExitCode.Ok;
    }
    case 'delete': {
      needId();
      for (const id of ids) {
        await client.delete(id);
        const ledger = new Ledger();
        const entry = ledger.find(id);
        if (entry) ledger.deleted(entry);
        io.out(`deleted ${id}`);
      }
      return ExitCode.Ok;
    }
    case 'prune': {
      if ((args.olderThan === undefined) === (args.keep === undefined))
        throw new UsageError('prune needs exactly one of --older-than <duration> and --keep <n>', 'For example: signgate jobs prune --older-than 30d');
      const plan = planPrune(await client.list(), args.keep !== undefined ? { keep: args.keep } : { olderThanMs: parseDuration(args.olderThan!) });
      const doomed = plan.doomed;
      if (plan.undated.length && args.keep === undefined) {
        io.err(
          `${plan.undated.length} job(s) have no date the service gave (${plan.undated
            .slice(0, 5)
            .map((j) => j.id)
            .join(', ')}${plan.undated.length > 5 ? ', …' : ''}): not pruned by age; delete them with 'signgate jobs delete <id..>' or prune with --keep`,
        );
      }
      if (doomed.length === 0) {
        io.out(
          plan.undated.length && args.keep === undefined
            ? `no dated job is older than ${args.olderThan}; ${plan.undated.length} undated job(s) left as they are`
            : 'nothing to prune',
        );
        return plan.undated.length && args.keep === undefined ? ExitCode.Findings : ExitCode.Ok;
      }
      if (!args.yes && !(await confirm(`Delete ${doomed.length} job(s) on ${client.baseUrl}?`, io))) {
        io.out('nothing deleted');
        return ExitCode.Ok;
      }
      for (const j of doomed) {
        await client.delete(j.id);
        io.out(`deleted ${j.id} (${j.createdAt ?? 'no date'})`);
      }
      return ExitCode.Ok;
    }
    default:
      throw new UsageError(`unknown jobs action ${JSON.stringify(args.action)}`, 'Use list, status, download, delete, prune or unpin-record.');
  }
}

/** `jobs unpin-record`: forgets the record key and checkpoint the job ledger keeps for a service (no request is made). */
function unpinRecord(args: JobsArgs, io: Io): ExitCodeValue {
  const baseUrl = args.baseUrl ?? process.env.SIGNGATE_BASE_URL;
  if (!baseUrl) throw new UsageError('jobs unpin-record needs the service whose record pin to remove', 'Pass --base-url (or set SIGNGATE_BASE_URL).');
  const ledger = new Ledger();
  const identity = recordIdentity(baseUrl);
  const removed = ledger.removeRecordCheckpoint(identity);
  if (!removed) io.out(`the job ledger ${ledger.path} holds no record pin for ${identity}: nothing removed`);
  else {
    io.out(
      `removed the record pin of ${identity} from ${ledger.path}: the record key ${removed.publicKey.split('+').slice(0, 2).join('+')} and its checkpoint of ${removed.size} entries, saved on ${removed.savedAt}`,
    );
    io.out('The next sign pins the key the service shows then; pass --record-key to name the one you expect.');
  }
  return ExitCode.Ok;
}

export const jobsCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, JobsArgs> => ({
  command: 'jobs <action> [ids..]',
  describe: "The organization's jobs on the service: list, status <id>, download <id>, delete <id..>, prune; unpin-record forgets a service's record key",
  builder: (y: Argv) =>
    serviceOptions(y)
      .positional('action', { type: 'string', choices: ['list', 'status', 'download', 'delete', 'prune', 'unpin-record'], demandOption: true })
      .positional('ids', { type: 'string', array: true, describe: 'Job ids' })
      .option('destination-path', { alias: 'destinationPath', type: 'string', describe: 'download: where to extract (default: a folder named by the job id)' })
      .option('key', {
        type: 'string',
        array: true,
        describe:
          'download: the option public key file(s) <optionId>_public.snk every returned file must be signed with (default: "keys" in signgate.config.json)',
      })
      .option('record-key', {
        type: 'string',
        describe: "download: the service's record public key expected up front (its record-key.pub, or the key's text); else the one pinned by sign",
      })
      .option('force', { type: 'boolean', default: false, describe: 'download: overwrite files not recorded for this job' })
      .option('older-than', { type: 'string', describe: 'prune: jobs older than this (7d, 12h, 30m)' })
      .option('keep', { type: 'number', coerce: numberOption('keep', { integer: true, min: 0 }), describe: 'prune: keep the newest n jobs' })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'prune: do not ask for confirmation' })
      .example('$0 jobs list', "the organization's jobs, newest first")
      .example('$0 jobs status 42', 'what the service says of job 42, file by file')
      .example(
        '$0 jobs download 42 --key 12345_public.snk --destination-path signed',
        "job 42's result: its signature record and every file verified as sign does (signed with the key, SHA-256 as the record says), then extracted; nothing is written when a check fails",
      )
      .example('$0 jobs prune --older-than 30d --yes', 'stay under the kept-jobs limit from CI') as unknown as Argv<JobsArgs>,
  handler: async (args: ArgumentsCamelCase<JobsArgs>) => setExit(await runJobs(args, io)),
});
