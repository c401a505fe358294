// `signgate licenses` and `signgate jobs list|status|download|delete|prune`: the service's jobs from the command line.
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../core/errors.js';
import { createServiceClient, type JobSummary, type ServiceClient } from '../../service-client/client.js';
import { loadConfig } from '../config.js';
import { extractPackage } from '../extract.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { displayPath } from '../files.js';
import { cacheDir, Ledger } from '../ledger.js';
import type { Io } from '../output.js';
import { createProgress } from '../progress.js';
import { resolveAccessToken } from './check.js';

interface ServiceArgs {
  baseUrl?: string;
  accessToken?: string;
  accessTokenFile?: string;
  config?: string;
  json: boolean;
}

function clientFrom(args: ServiceArgs, io: Io): ServiceClient {
  const baseUrl = args.baseUrl ?? loadConfig(args.config).config.baseUrl ?? process.env.SIGNGATE_BASE_URL;
  if (!baseUrl) throw new UsageError('no service address', 'Pass --base-url, set "baseUrl" in signgate.config.json, or set SIGNGATE_BASE_URL.');
  const accessToken = resolveAccessToken(args);
  if (!accessToken) throw new UsageError('no access token', 'Pass --access-token-file <file> or set SIGNGATE_ACCESS_TOKEN.');
  return createServiceClient({ baseUrl, accessToken, onRetry: (r) => io.err(`retrying ${r.method} (${r.reason}) in ${r.delayMs} ms`) });
}

const serviceOptions = <T>(y: Argv<T>) =>
  y
    .option('base-url', { alias: 'baseUrl', type: 'string', describe: 'Signing service base URL (…/<service-name>/v1.0)' })
    .option('access-token', { alias: 'accessToken', type: 'string', describe: 'Personal access token (prefer --access-token-file or SIGNGATE_ACCESS_TOKEN)' })
    .option('access-token-file', { type: 'string', describe: 'File whose first line is the access token' })
    .option('config', { type: 'string', describe: 'Config file with "baseUrl"' })
    .option('json', { type: 'boolean', default: false, describe: 'Print JSON' });

/** "7d", "12h", "30m" or "45s" in milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)\s*([dhms])$/i.exec(text.trim());
  if (!m) throw new UsageError(`--older-than ${JSON.stringify(text)} is not a duration`, 'Write a number and a unit: 7d, 12h, 30m or 45s.');
  return Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }[m[2]!.toLowerCase() as 'd' | 'h' | 'm' | 's'];
}

/** The jobs `prune` deletes: older than a duration, or all but the newest `keep`. */
export function jobsToPrune(jobs: readonly JobSummary[], options: { olderThanMs?: number; keep?: number }, now = Date.now()): JobSummary[] {
  const newestFirst = [...jobs].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  if (options.keep !== undefined) return newestFirst.slice(options.keep);
  return newestFirst.filter((j) => now - Date.parse(j.createdAt) > options.olderThanMs!);
}

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

export const licensesCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, ServiceArgs> => ({
  command: 'licenses',
  describe: "List the organization's license options (the <optionId>_public.snk it may use)",
  builder: (y: Argv) => serviceOptions(y) as unknown as Argv<ServiceArgs>,
  handler: async (args: ArgumentsCamelCase<ServiceArgs>) => {
    const ids = await clientFrom(args, io).licenses();
    if (args.json) io.out(JSON.stringify(ids.map((optionId) => ({ optionId }))));
    else io.out(ids.length ? ids.map((id) => `option ${id}: key file ${id}_public.snk`).join('\n') : 'The organization holds no license option: nothing can be signed.');
    setExit(ExitCode.Ok);
  },
});

interface JobsArgs extends ServiceArgs {
  action: string;
  ids?: string[];
  destinationPath?: string;
  force: boolean;
  olderThan?: string;
  keep?: number;
  yes: boolean;
}

export async function runJobs(args: JobsArgs, io: Io): Promise<ExitCodeValue> {
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
        for (const j of jobs) io.out(`${j.id}  ${j.createdAt}  ${j.processingFinished ? 'finished  ' : 'processing'}  ${String(j.fileCount).padStart(4)} files  ${j.comment ?? ''}`);
        io.out(`${jobs.length} job(s)`);
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
      return status.assemblies.every((a) => a.fileProcessingState === 'Signed') ? ExitCode.Ok : ExitCode.Findings;
    }
    case 'download': {
      needId();
      const destination = resolve(args.destinationPath ?? ids[0]!);
      mkdirSync(cacheDir(), { recursive: true });
      const zipPath = join(cacheDir(), `${ids[0]}.zip`);
      const progress = createProgress('download', io);
      await client.download(ids[0]!, zipPath, (d, t) => progress.update(d, t));
      progress.stop();
      try {
        const known = new Ledger().find(ids[0]!);
        const files = await extractPackage(zipPath, destination, { expected: new Set(known?.files.map((f) => f.name) ?? []), force: args.force, logName: 'signing-log.txt' });
        io.out(`${files.length} file(s) extracted into ${displayPath(destination)}`);
      } finally {
        rmSync(zipPath, { force: true });
      }
      return ExitCode.Ok;
    }
    case 'delete': {
      needId();
      for (const id of ids) {
        await client.delete(id);
        const ledger = new Ledger();
        const entry = ledger.find(id);
        if (entry) {
          entry.state = 'deleted';
          ledger.upsert(entry);
        }
        io.out(`deleted ${id}`);
      }
      return ExitCode.Ok;
    }
    case 'prune': {
      if ((args.olderThan === undefined) === (args.keep === undefined)) throw new UsageError('prune needs exactly one of --older-than <duration> and --keep <n>', 'For example: signgate jobs prune --older-than 30d');
      const doomed = jobsToPrune(await client.list(), args.keep !== undefined ? { keep: args.keep } : { olderThanMs: parseDuration(args.olderThan!) });
      if (doomed.length === 0) {
        io.out('nothing to prune');
        return ExitCode.Ok;
      }
      if (!args.yes && !(await confirm(`Delete ${doomed.length} job(s) on ${client.baseUrl}?`, io))) {
        io.out('nothing deleted');
        return ExitCode.Ok;
      }
      for (const j of doomed) {
        await client.delete(j.id);
        io.out(`deleted ${j.id} (${j.createdAt})`);
      }
      return ExitCode.Ok;
    }
    default:
      throw new UsageError(`unknown jobs action ${JSON.stringify(args.action)}`, 'Use list, status, download, delete or prune.');
  }
}

export const jobsCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<Record<string, unknown>, JobsArgs> => ({
  command: 'jobs <action> [ids..]',
  describe: "The organization's jobs on the service: list, status <id>, download <id>, delete <id..>, prune",
  builder: (y: Argv) =>
    serviceOptions(y)
      .positional('action', { type: 'string', choices: ['list', 'status', 'download', 'delete', 'prune'], demandOption: true })
      .positional('ids', { type: 'string', array: true, describe: 'Job ids' })
      .option('destination-path', { alias: 'destinationPath', type: 'string', describe: 'download: where to extract (default: a folder named by the job id)' })
      .option('force', { type: 'boolean', default: false, describe: 'download: overwrite files not recorded for this job' })
      .option('older-than', { type: 'string', describe: 'prune: jobs older than this (7d, 12h, 30m)' })
      .option('keep', { type: 'number', describe: 'prune: keep the newest n jobs' })
      .option('yes', { alias: 'y', type: 'boolean', default: false, describe: 'prune: do not ask for confirmation' })
      .example('$0 jobs prune --older-than 30d --yes', 'stay under the kept-jobs limit from CI') as unknown as Argv<JobsArgs>,
  handler: async (args: ArgumentsCamelCase<JobsArgs>) => setExit(await runJobs(args, io)),
});
