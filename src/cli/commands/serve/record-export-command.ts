// `signgate serve record export`: the signature record as JSON lines, once its chain verified.
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { AtomicFileWriter } from '../../../workflows/files.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { openRecordOf, type RecordArgs, recordOptions, recordOutputOption } from './record-options.js';
import { databaseOf } from './service-options.js';

/** `serve record export`: every entry of the record as JSON lines, to stdout or --output (atomically), for `audit --record`. */
async function runRecordExport(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  const { record, close } = await openRecordOf(args, database);
  let output: AtomicFileWriter | undefined;
  let count: number;
  try {
    // Written as the record is read, a batch at a time (a record may be larger than memory), put in place at the end.
    output = args.output === undefined ? undefined : new AtomicFileWriter(resolve(args.output));
    // Only a record that verifies is exported: an auditor must not be handed a broken chain as if it were whole.
    const verified = await record.verify();
    if (verified.break)
      throw new UsageError(
        `the signature record ${record.where} does not verify: ${verified.break.message}`,
        'Run `signgate serve record verify` for the details; restore the record from a backup before exporting it.',
      );
    count = await record.exportTo((lines) => {
      if (output) output.write(lines);
      else io.out(lines.replace(/\n$/, ''));
    });
    output?.commit();
  } catch (error) {
    output?.abort();
    throw error;
  } finally {
    await close();
  }
  if (args.output) {
    io.err(`${count} ${count === 1 ? 'entry' : 'entries'} of the signature record ${record.where} written to ${displayPath(resolve(args.output))}`);
  }
  return ExitCode.Ok;
}

export const recordExportCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'export',
  describe: 'Write the signature record as JSON lines (for signgate audit --record), after checking its chain',
  builder: (y: Argv<CommonArgs>) =>
    recordOptions(y)
      .option('output', recordOutputOption)
      .example(
        '$0 serve record export --data-dir /var/lib/signgate -o record.jsonl',
        'then: signgate audit release/ --record record.jsonl',
      ) as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordExport(args, io)),
});
