// What the `serve record` commands share: their arguments, the record they name (--data-dir, --database) and the
// record key (--record-key, --config).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { watchServerConfigFile } from '../../../server/server-config.js';
import { openSignatureRecord } from '../../../server/backends/index.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { loadRecordKey, readRecordKeyFile } from '../../../server/record-key.js';
import type { CommonArgs } from '../common.js';
import { databaseFileOption, databaseOption, DEFAULT_DATA_DIR } from './service-options.js';

export interface RecordArgs extends CommonArgs {
  dataDir: string;
  database?: string;
  databaseFile?: string;
  file?: string;
  output?: string;
  checkpoint?: string;
  publicKey?: string;
  recordKey?: string;
  config?: string;
}

/**
 * The record key a record command signs or shows with: --record-key, else the server.json --config names ("recordKey"),
 * else the data directory's. Only read: never made or rewritten here.
 */
export function recordKeyOf(args: RecordArgs) {
  const hint =
    'Pass the record key file the service signs with (--record-key, or --config with the server.json that names it as "recordKey"), or the data directory the service uses (--data-dir).';
  if (args.recordKey) return readRecordKeyFile(resolve(args.recordKey), hint);
  const configured = args.config ? watchServerConfigFile(args.config).current().recordKeyFile : undefined;
  return configured ? readRecordKeyFile(configured, hint) : loadRecordKey(resolve(args.dataDir));
}

export const recordOptions = (y: Argv<CommonArgs>) =>
  y
    .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service (its record: signature-record.jsonl)' })
    .option('database', databaseOption)
    .option('database-file', databaseFileOption);

/** --output of record export and checkpoint: a file written atomically instead of stdout. */
export const recordOutputOption = { alias: 'o', type: 'string', describe: 'Write to this file (atomically) instead of stdout' } as const;

/** The options that name the record key of record verify, checkpoint and public-key. */
export const recordKeyOptions = <T>(y: Argv<T>) =>
  y
    .option('record-key', {
      type: 'string',
      describe: 'The record key file the service signs with (its "recordKey"); default: the one --config names, else the data directory\'s record-key.pem',
    })
    .option('config', { type: 'string', describe: 'The service\'s server.json: its "recordKey" names the record key file' });

/**
 * The service's record that a record command reads: in the database when one is given, else in the data directory,
 * which must exist (a mistyped folder is no record of 0 entries that verifies).
 * @throws UsageError for a data directory that does not exist
 */
export async function openRecordOf(args: RecordArgs, database: string | undefined) {
  const dataDir = resolve(args.dataDir);
  if (!database && !existsSync(dataDir))
    throw new UsageError(
      `the data directory ${displayPath(dataDir)} does not exist: it holds no signature record`,
      `Pass the --data-dir the service runs with (default ${DEFAULT_DATA_DIR}), or --database for a PostgreSQL deployment.`,
    );
  return openSignatureRecord({ dataDir, ...(database ? { database } : {}) });
}
