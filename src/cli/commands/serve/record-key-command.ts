// `signgate serve record key create`: makes the deployment's record key once, before any node starts, so that every
// node is given the same file ("recordKey" in server.json, or `serve --record-key`).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { formatVerifierKey } from '../../../record/checkpoint.js';
import { createRecordKeyFile, createRecordPublicKeyFile, publicKeyPathFor, readRecordKeyFile } from '../../../server/record-key.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';

interface RecordKeyCreateArgs extends CommonArgs {
  out: string;
}

/** Makes a record key file and its verifier key beside it; an existing file is never replaced. */
function runRecordKeyCreate(args: RecordKeyCreateArgs, io: Io): ExitCodeValue {
  const path = resolve(args.out);
  if (existsSync(path))
    throw new UsageError(
      `${displayPath(path)} exists: a record key is never replaced`,
      'Choose another --out; a deployment keeps its record key for good (clients pin it). To retire one, read docs/deploy.md, "One record key per deployment".',
    );
  // The public half may be what auditors and clients were handed (sign --record-key): never replaced either.
  const pub = publicKeyPathFor(path);
  const pubExists = (when: string) =>
    new UsageError(
      `${displayPath(pub)} exists${when}: the public half of a record key is never replaced (auditors and clients may hold it)`,
      `If it is the public half of a key you retired, move it aside (keep it for audits of the old record) and run the command again; else choose another --out (its public half is written beside it, .pem replaced by .pub).`,
    );
  if (existsSync(pub)) throw pubExists('');
  if (!createRecordKeyFile(path)) throw new UsageError(`${displayPath(path)} was made by another process meanwhile`, 'Use that file, or choose another --out.');
  const key = readRecordKeyFile(path, '');
  if (!createRecordPublicKeyFile(key, pub)) throw pubExists(` (made by another process meanwhile; the new key is ${displayPath(path)})`);
  io.err(`record key written to ${displayPath(path)} (private: keep it like the signing keys, and back it up), its public half to ${displayPath(pub)}`);
  io.err('Give every node of the deployment this file: "recordKey" in server.json, or serve --record-key. Clients may pin the public half: sign --record-key.');
  io.out(formatVerifierKey(key.verifier));
  return ExitCode.Ok;
}

export const recordKeyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, CommonArgs> => ({
  command: 'key',
  describe: "The deployment's record key: create it once, before any node starts",
  builder: (y: Argv<CommonArgs>) =>
    y
      .command({
        command: 'create',
        describe:
          'Make a new record key file (Ed25519, PKCS#8 PEM, 0600) and its public half beside it (.pub), neither of which may exist; print the public half',
        builder: (c: Argv<CommonArgs>) =>
          c
            .option('out', { type: 'string', demandOption: true, describe: 'The key file to make (never replaced), e.g. /etc/signgate/record-key.pem' })
            .example(
              '$0 serve record key create --out /etc/signgate/record-key.pem',
              'then "recordKey": "/etc/signgate/record-key.pem" in every node\'s server.json',
            ) as unknown as Argv<RecordKeyCreateArgs>,
        handler: (args: ArgumentsCamelCase<RecordKeyCreateArgs>) => setExit(runRecordKeyCreate(args, io)),
      })
      .demandCommand(1, 'Name a record key command: create.'),
  handler: () => {},
});
