// `signgate serve record verify`: the signature record's hash chain, and that it continues a checkpoint saved earlier.
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { recordFileLines, verifyRecordFileLines, type RecordVerification, type SignatureEntry } from '../../../record/signature-record.js';
import { parseCheckpoint } from '../../../record/checkpoint.js';
import { CheckpointContinuation } from '../../../record/record-continuation.js';
import { watchServerConfigFile } from '../../../server/server-config.js';
import { recordContinuation } from '../../../server/record/record-checkpoint.js';
import { RECORD_PUBLIC_KEY_FILE } from '../../../server/record-key.js';
import { readRecordPublicKey } from '../../../workflows/keys.js';
import { readerOf, readInputFile, withInputFile } from '../../../workflows/files.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { openRecordOf, type RecordArgs, recordKeyOf, recordKeyOptions, recordOptions } from './record-options.js';
import { databaseOf } from './service-options.js';

/**
 * `serve record verify`: checks the signature record's chain (in the database, the data directory, or an exported
 * file) and prints how many entries verified and the head, or the first break; exit 0 intact, 1 broken.
 */
async function runRecordVerify(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  const database = databaseOf(args);
  // With --checkpoint: the checkpoint saved earlier, and the record key's public half that signed it.
  const saved =
    args.checkpoint === undefined
      ? undefined
      : { path: displayPath(resolve(args.checkpoint)), text: readInputFile(resolve(args.checkpoint), displayPath(resolve(args.checkpoint))).toString('utf8') };
  const verifier = () => {
    if (args.publicKey !== undefined) return readRecordPublicKey(args.publicKey);
    // The deployment's configured key ("recordKey", or --record-key) wins over a data directory's own .pub.
    if (args.recordKey !== undefined || (args.config !== undefined && watchServerConfigFile(args.config).current().recordKeyFile))
      return recordKeyOf(args).verifier;
    if (args.file !== undefined)
      throw new UsageError(
        '--checkpoint with --file needs --public-key',
        "Pass the service's record public key (its data directory's record-key.pub, or what `signgate serve record public-key` prints).",
      );
    return readRecordPublicKey(join(resolve(args.dataDir), RECORD_PUBLIC_KEY_FILE));
  };
  if (args.file !== undefined) {
    if (database)
      throw new UsageError(
        '--file and a database are both given',
        "Pass --file to check an exported record, or --database to check the service's record, not both.",
      );
    const path = resolve(args.file);
    // The checkpoint before the record: its size says which first entries its root covers, hashed as they are read.
    const continuation = saved && new CheckpointContinuation(parseCheckpoint(saved.text, verifier(), saved.path));
    const add = continuation && ((entry: SignatureEntry) => continuation.add(entry));
    const result = withInputFile(path, displayPath(path), (fd) => verifyRecordFileLines(recordFileLines(readerOf(fd)), displayPath(path), undefined, add));
    const problem = continuation && !result.break ? continuation.problem(displayPath(path), saved!.path) : undefined;
    return printVerification(
      displayPath(path),
      result,
      io,
      saved
        ? undefined
        : 'an exported record has no head: entries cut off its end at a line boundary cannot be noticed (pass --checkpoint with one you saved to notice them)',
      saved && { path: saved.path, problem },
    );
  }
  const { record, close } = await openRecordOf(args, database);
  try {
    const result = await record.verify();
    if (!saved || result.break) return printVerification(record.where, result, io);
    const problem = await recordContinuation(record, result, parseCheckpoint(saved.text, verifier(), saved.path), saved.path);
    return printVerification(record.where, result, io, undefined, { path: saved.path, problem });
  } finally {
    await close();
  }
}

function printVerification(
  where: string,
  result: RecordVerification,
  io: Io,
  note?: string,
  checkpoint?: { path: string; problem: string | undefined },
): ExitCodeValue {
  if (result.break) {
    io.out(`signature record ${where}: BROKEN after ${result.entries} verified ${result.entries === 1 ? 'entry' : 'entries'}: ${result.break.message}`);
    io.err('Restore the record from a backup, or find out who changed it; the entries before the break are intact.');
    return ExitCode.Findings;
  }
  if (checkpoint?.problem) {
    io.out(`signature record ${where}: NOT A CONTINUATION of the checkpoint ${checkpoint.path}: ${checkpoint.problem}`);
    io.err('The record you hold is not the one the checkpoint was signed over, continued: find out who changed it, and restore it from a backup.');
    return ExitCode.Findings;
  }
  io.out(
    `signature record ${where}: ${result.entries} ${result.entries === 1 ? 'entry' : 'entries'}, chain intact${result.entries ? `, last entry ${result.head.seq} (hash ${result.head.hash})` : ''}${checkpoint ? `, continues the checkpoint ${checkpoint.path}` : ''}`,
  );
  if (note) io.err(`note: ${note}`);
  return ExitCode.Ok;
}

export const recordVerifyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'verify',
  describe: "Check the signature record's hash chain and print the first break (exit 0 intact, 1 broken)",
  builder: (y: Argv<CommonArgs>) =>
    recordKeyOptions(recordOptions(y))
      .option('file', { type: 'string', describe: "Check an exported record (serve record export) instead of the service's" })
      .option('checkpoint', {
        type: 'string',
        describe: "A checkpoint saved earlier (serve record checkpoint, or a job's): the record must continue it (no rollback, truncation or rewrite)",
      })
      .option('public-key', {
        type: 'string',
        describe: "The record key that signed the checkpoint: a file (the data directory's record-key.pub, the default) or the key itself",
      })
      .example(
        '$0 serve record verify --file record.jsonl --checkpoint saved.checkpoint --public-key record-key.pub',
        'an export, against a checkpoint saved earlier',
      )
      .example('$0 serve record verify --data-dir /var/lib/signgate', 'the record of a one-node service')
      .example(
        'SIGNGATE_DATABASE_URL=postgres://signgate@db/signgate $0 serve record verify',
        'the record of a PostgreSQL deployment',
      ) as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordVerify(args, io)),
});
