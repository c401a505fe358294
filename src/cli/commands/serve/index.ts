// `signgate serve` and its subcommands, one file each: the service itself (run-command.ts), `serve init`, `serve token create`
// and `revoke`, `serve jobs list` and `prune`, `serve record verify`, `export`, `checkpoint`, `public-key` and `key create`.
import type { Argv, CommandModule } from 'yargs';
import type { ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { initCommand } from './init-command.js';
import { jobsListCommand, jobsPruneCommand } from './jobs-command.js';
import { recordCheckpointCommand } from './record-checkpoint-command.js';
import { recordExportCommand } from './record-export-command.js';
import { recordKeyCommand } from './record-key-command.js';
import { recordPublicKeyCommand } from './record-public-key-command.js';
import { recordVerifyCommand } from './record-verify-command.js';
import { runCommand, type ServeArgs } from './run-command.js';
import { tokenCreateCommand } from './token-create-command.js';
import { tokenRevokeCommand } from './token-revoke-command.js';

export const serveCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, ServeArgs> => ({
  command: 'serve',
  describe: 'Run the reference signing service (API under /<service-name>/v1.0, documentation at /docs); serve init, serve token create, serve record verify',
  builder: (y: Argv<CommonArgs>) =>
    y
      .command(initCommand(io, setExit))
      .command({
        command: 'token',
        describe: 'Create or revoke personal access tokens (serve token create, serve token revoke)',
        builder: (t: Argv<CommonArgs>) =>
          t.command(tokenCreateCommand(io, setExit)).command(tokenRevokeCommand(io, setExit)).demandCommand(1, 'Name a token command: create or revoke.'),
        handler: () => {},
      })
      .command({
        command: 'jobs',
        describe: 'The kept jobs of every organization, for an operator (serve jobs list, serve jobs prune)',
        builder: (t: Argv<CommonArgs>) =>
          t.command(jobsListCommand(io, setExit)).command(jobsPruneCommand(io, setExit)).demandCommand(1, 'Name a jobs command: list or prune.'),
        handler: () => {},
      })
      .command({
        command: 'record',
        describe: 'The signature record: an entry for every file the service signed (serve record verify, serve record export)',
        builder: (t: Argv<CommonArgs>) =>
          t
            .command(recordVerifyCommand(io, setExit))
            .command(recordExportCommand(io, setExit))
            .command(recordCheckpointCommand(io, setExit))
            .command(recordPublicKeyCommand(io, setExit))
            .command(recordKeyCommand(io, setExit))
            .demandCommand(1, 'Name a record command: verify, export, checkpoint, public-key or key.'),
        handler: () => {},
      })
      .command(runCommand(io, setExit))
      .example('$0 serve init --dir service', 'a first configuration with a fresh sandbox key pair')
      .example(
        '$0 serve token create --config service/server.json --data-dir service/data --org sandbox --user ci --days 30',
        'make a token (the same --data-dir as the service)',
      )
      .example('$0 serve token revoke --org sandbox --user ci', "revoke all of a user's tokens")
      .example('$0 serve record verify --data-dir service/data', 'check the signature record') as unknown as Argv<ServeArgs>,
  handler: () => {},
});
