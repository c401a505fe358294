// `signgate serve token revoke`: one token, or every token of a user; running services refuse it within seconds.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { watchServerConfigFile } from '../../../server/server-config.js';
import { describeDatabase } from '../../../server/backends/postgres/database.js';
import { displayPath } from '../../../workflows/input-paths.js';
import { resolveAccessToken } from '../../../workflows/access-token.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { databaseFileOption, databaseOf, databaseOption, DEFAULT_DATA_DIR, tokenKeeper } from './service-options.js';

export interface TokenRevokeArgs extends CommonArgs {
  config?: string;
  dataDir: string;
  database?: string;
  databaseFile?: string;
  token?: string;
  tokenFile?: string;
  org?: string;
  user?: string;
}

/** Revokes one token (--token, --token-file) or every token of a user (--org and --user); running services refuse it within seconds. */
async function runTokenRevoke(args: TokenRevokeArgs, io: Io): Promise<ExitCodeValue> {
  // From a file, read as --access-token-file is: the token stays out of the process list and the shell history.
  const token = args.token ?? (args.tokenFile === undefined ? undefined : resolveAccessToken({ accessTokenFile: args.tokenFile, env: {} }));
  if (token === undefined && (args.org === undefined || args.user === undefined)) {
    throw new UsageError(
      'serve token revoke needs --token-file (or --token), or --org and --user',
      'Pass a file holding the token to revoke, or --org and --user to revoke every token of that user.',
    );
  }
  const selector = token !== undefined ? { token } : { organization: args.org!, user: args.user! };
  // The service is named as `token create` names it: --config (checked when given), --data-dir or --database.
  if (args.config !== undefined) {
    const config = watchServerConfigFile(args.config).current();
    if (args.org !== undefined && !config.organizations.has(args.org))
      throw new UsageError(
        `no organization ${JSON.stringify(args.org)} in ${args.config}`,
        `Known organizations: ${[...config.organizations.keys()].join(', ')}.`,
      );
  }
  const database = databaseOf(args);
  // A data directory without a token store is not the service's: say so, and make nothing there.
  const store = join(resolve(args.dataDir), 'tokens.json');
  if (!database && !existsSync(store)) {
    throw new UsageError(
      `${displayPath(resolve(args.dataDir))} holds no tokens (no ${displayPath(store)}): it is not the data directory of a service that made tokens; nothing was revoked`,
      'Pass the --data-dir (or --database) the service runs with and `serve token create` was given: the token hashes are kept there.',
    );
  }
  const { keeper, close } = await tokenKeeper({ dataDir: args.dataDir, ...(database ? { database } : {}) });
  let count: number;
  try {
    count = await keeper.revoke(selector);
  } finally {
    await close();
  }
  const what = 'token' in selector ? 'the token' : `the tokens of ${args.user} in ${args.org}`;
  const where = database ? describeDatabase(database) : displayPath(resolve(args.dataDir));
  io.err(
    count
      ? `Revoked ${count} token(s): ${what}. Running services refuse them within seconds.`
      : `Nothing to revoke: ${what} is not known in ${where} or is already revoked; is it the --data-dir (or --database) the service runs with?`,
  );
  return count ? ExitCode.Ok : ExitCode.Usage;
}

export const tokenRevokeCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, TokenRevokeArgs> => ({
  command: 'revoke',
  describe: 'Revoke a token, or every token of a user; running services refuse it within seconds',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', { type: 'string', describe: 'Server configuration, as token create takes it (checked when given)' })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service (as token create and serve were given)' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('token-file', { type: 'string', describe: 'A file whose first line is the token to revoke' })
      .option('token', { type: 'string', describe: 'The token to revoke (shows in process lists: prefer --token-file)' })
      .conflicts('token', 'token-file')
      .option('org', { type: 'string', describe: "Organization id (with --user: revoke all of the user's tokens)" })
      .option('user', { type: 'string', describe: 'User id' })
      .example(
        '$0 serve token revoke --config service/server.json --data-dir service/data --token-file token.txt',
        'one token, naming the service as token create did',
      )
      .example('$0 serve token revoke --data-dir /var/lib/signgate --org sandbox --user ci', 'every token of user ci')
      .example(
        '$0 serve token revoke --database postgres://signgate@db/signgate --token-file old-token.txt',
        'one token, on every node of a PostgreSQL deployment',
      ) as unknown as Argv<TokenRevokeArgs>,
  handler: async (args: ArgumentsCamelCase<TokenRevokeArgs>) => setExit(await runTokenRevoke(args, io)),
});
