// `signgate serve record public-key`: the record key's public half.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { formatVerifierKey } from '../../../record/checkpoint.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { recordKeyOf, recordKeyOptions, recordOptions, type RecordArgs } from './record-options.js';

/** `serve record public-key`: the record key's public half, as verifiers pass it (a C2SP verifier key). */
async function runRecordPublicKey(args: RecordArgs, io: Io): Promise<ExitCodeValue> {
  io.out(formatVerifierKey(recordKeyOf(args).verifier));
  return ExitCode.Ok;
}

export const recordPublicKeyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, RecordArgs> => ({
  command: 'public-key',
  describe: "Print the record key's public half (name+keyid+key), which verifies the record's checkpoints",
  builder: (y: Argv<CommonArgs>) =>
    recordKeyOptions(recordOptions(y))
      .example('$0 serve record public-key --data-dir /var/lib/signgate > record-key.pub', 'the key auditors check checkpoints with')
      .example('$0 serve record public-key --config server.json', 'the key that server.json names as "recordKey"') as unknown as Argv<RecordArgs>,
  handler: async (args: ArgumentsCamelCase<RecordArgs>) => setExit(await runRecordPublicKey(args, io)),
});
