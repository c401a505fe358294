// `signgate serve jobs list` and `serve jobs prune`: the kept jobs of every organization, for an operator, and the
// deletion of finished jobs older than a duration (as limits.jobRetention does), on the data directory or on
// PostgreSQL (+ object storage). A job that waits or is being signed is never deleted: the store decides that in the
// delete itself. On a data directory a running service keeps its own index of jobs, so `prune` refuses while one
// runs there (its serve.pid); on PostgreSQL every node reads the database, and prune runs beside them.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { expiredJobs, pruneJobs } from '../../../server/jobs/retention.js';
import { durationMs, durationText, watchServerConfigFile } from '../../../server/server-config.js';
import { openJobStore } from '../../../server/backends/index.js';
import { runningService } from '../../../server/backends/data-dir/serve-pid.js';
import type { JobOverview } from '../../../server/domain/job.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { databaseFileOption, databaseOf, databaseOption, DEFAULT_DATA_DIR } from './service-options.js';

export interface JobsArgs extends CommonArgs {
  config?: string;
  dataDir: string;
  database?: string;
  databaseFile?: string;
  blobStore?: string;
  org?: string;
  olderThan?: string;
  dryRun?: boolean;
  format: 'text' | 'json';
}

/** --older-than, else the configuration's limits.jobRetention. */
function olderThanOf(args: JobsArgs): number {
  if (args.olderThan !== undefined) {
    const ms = durationMs(args.olderThan);
    if (ms === undefined)
      throw new UsageError(`--older-than ${JSON.stringify(args.olderThan)} is not a duration`, 'Pass a whole number and a unit: 30d, 12h, 90m or 45s.');
    return ms;
  }
  const configured = args.config === undefined ? undefined : watchServerConfigFile(args.config).current().jobRetentionMs;
  if (configured === undefined)
    throw new UsageError(
      'serve jobs prune needs --older-than, or --config with limits.jobRetention',
      'Say how old a finished job must be to go, for example --older-than 30d.',
    );
  return configured;
}

function line(job: JobOverview): string {
  return `${job.organization}\t${job.id}\t${job.createdAt}\t${job.finishedAt ?? 'not finished'}\t${job.fileCount} file(s)${job.comment ? `\t${job.comment}` : ''}`;
}

async function runJobs(action: 'list' | 'prune', args: JobsArgs, io: Io): Promise<ExitCodeValue> {
  const olderThan = action === 'prune' || args.olderThan !== undefined ? olderThanOf(args) : undefined;
  const database = databaseOf(args);
  const dataDir = resolve(args.dataDir);
  // A mistyped folder is said, not made: the store would make an empty one and report no jobs.
  if (!database && !existsSync(join(dataDir, 'jobs')))
    throw new UsageError(
      `${displayPath(dataDir)} holds no jobs folder: it is not the data directory of a service; nothing was read or deleted`,
      'Pass the --data-dir (or --database) the service runs with.',
    );
  const { store, where: at, close } = await openJobStore({ dataDir, database, blobStore: args.blobStore });
  const where = database ? at : displayPath(dataDir);
  try {
    if (action === 'prune' && !args.dryRun && !database) {
      const running = runningService(dataDir);
      if (running)
        throw new UsageError(
          `a service (process ${running.pid}, started ${running.startedAt}) runs on ${where}: it keeps its own index of the jobs, so they are not deleted behind it; nothing was deleted`,
          'Set limits.jobRetention in its server.json (it applies at once and the service deletes them itself), or stop the service and prune then.',
        );
    }
    const organization = args.org === undefined ? {} : { organization: args.org };
    const jobs =
      action === 'prune' && !args.dryRun
        ? await pruneJobs(store, olderThan!, organization)
        : olderThan === undefined
          ? await store.overview(args.org)
          : await expiredJobs(store, olderThan, organization);
    if (args.format === 'json') io.out(JSON.stringify({ where, ...(olderThan === undefined ? {} : { olderThan: durationText(olderThan) }), jobs }, null, 2));
    else for (const job of jobs) io.out(line(job));
    const age = olderThan === undefined ? '' : ` finished more than ${durationText(olderThan)} ago`;
    const verb = action === 'list' ? 'kept' : args.dryRun ? 'would be deleted (--dry-run)' : 'deleted, with their files';
    io.err(`${jobs.length} job(s)${age} ${verb} in ${where}${args.org === undefined ? '' : `, organization ${args.org}`}.`);
    return ExitCode.Ok;
  } finally {
    await close();
  }
}

const builder = (action: 'list' | 'prune') => (y: Argv<CommonArgs>) =>
  y
    .option('config', { type: 'string', describe: "Server configuration: its limits.jobRetention is prune's default age" })
    .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service' })
    .option('database', databaseOption)
    .option('database-file', databaseFileOption)
    .option('blob-store', { type: 'string', describe: 'With --database: the object storage the service keeps job files in (as serve was given)' })
    .option('org', { type: 'string', describe: 'Only this organization' })
    .option('older-than', {
      type: 'string',
      describe:
        action === 'list'
          ? 'Only finished jobs older than this (30d, 12h, 90m, 45s)'
          : 'Finished jobs older than this go (30d, 12h, 90m, 45s); default: limits.jobRetention',
    })
    .option('format', { choices: ['text', 'json'] as const, default: 'text' as const, describe: 'text: a line a job (tab-separated); json: one object' })
    .option('dry-run', { type: 'boolean', hidden: action === 'list', describe: 'List what would be deleted, and delete nothing' })
    .example(
      action === 'list'
        ? '$0 serve jobs list --data-dir /var/lib/signgate'
        : '$0 serve jobs prune --database-file db.txt --blob-store s3://jobs --older-than 30d',
      action === 'list' ? "every organization's kept jobs" : 'delete finished jobs older than 30 days with their objects',
    ) as unknown as Argv<JobsArgs>;

export const jobsListCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, JobsArgs> => ({
  command: 'list',
  describe: "Every organization's kept jobs (or one's): organization, id, created, finished, files",
  builder: builder('list'),
  handler: async (args: ArgumentsCamelCase<JobsArgs>) => setExit(await runJobs('list', args, io)),
});

export const jobsPruneCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, JobsArgs> => ({
  command: 'prune',
  describe: 'Delete finished jobs older than --older-than (or limits.jobRetention) with their files; never a job in flight',
  builder: builder('prune'),
  handler: async (args: ArgumentsCamelCase<JobsArgs>) => setExit(await runJobs('prune', args, io)),
});
