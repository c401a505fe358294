// `signgate serve record checkpoint`: the signature record's signed checkpoint now.
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { recordCheckpoint } from '../../../server/record/record-checkpoint.js';
import { writeFileAtomic } from '../../../workflows/files.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { openRecordOf, type RecordArgs, recordKeyOf, recordKeyOptions, recordOptions, recordOutputOption } from './record-options.js';
import { databaseOf } from './service-options.js';

/** `serve record checkpoint`: the record's checkpoint now, signed by the record key (made at the service's first start). */
async function runRecordCheckpoint(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  const key = recordKeyOf(args);
  const { record, close } = await openRecordOf(args, database);
  let text: string;
  try {
    text = await recordCheckpoint(record, key);
  } finally {
    await close();
  }
  if (args.output) {
    writeFileAtomic(resolve(args.output), [text]);
    io.err(`checkpoint of the signature record ${record.where} written to ${displayPath(resolve(args.output))}`);
  } else io.out(text.replace(/\n$/, ''));
  return ExitCode.Ok;
}

export const recordCheckpointCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'checkpoint',
  describe: 'Print the signed checkpoint of the signature record (its size and Merkle root): save it, and verify later records against it',
  builder: (y: Argv<CommonArgs>) =>
    recordKeyOptions(recordOptions(y))
      .option('output', recordOutputOption)
      .example(
        '$0 serve record checkpoint --data-dir /var/lib/signgate -o 2025-06.checkpoint',
        'then later: serve record verify --checkpoint 2025-06.checkpoint',
      ) as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordCheckpoint(args, io)),
});
