// `signgate serve token create`: a new personal access token, printed once (only its hash is kept).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { OPERATOR_ROLE, USER_ROLE, watchServerConfigFile } from '../../../server/server-config.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import { numberOption } from '../../options.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { commandWord, databaseFileOption, databaseOf, databaseOption, DEFAULT_DATA_DIR, tokenKeeper } from './service-options.js';

export interface TokenCreateArgs extends CommonArgs {
  config: string;
  dataDir: string;
  database?: string;
  databaseFile?: string;
  org: string;
  user: string;
  days: number;
}

async function runTokenCreate(args: TokenCreateArgs, io: Io): Promise<ExitCodeValue> {
  const config = watchServerConfigFile(args.config).current();
  const org = config.organizations.get(args.org);
  if (!org)
    throw new UsageError(
      `no organization ${JSON.stringify(args.org)} in ${args.config}`,
      `Known organizations: ${[...config.organizations.keys()].join(', ')}.`,
    );
  const roles = org.users.get(args.user);
  if (!roles)
    throw new UsageError(
      `no user ${JSON.stringify(args.user)} in organization ${args.org}`,
      `Add the user to the organization's "users" in ${args.config} first.`,
    );
  if (!Number.isInteger(args.days) || args.days < 1 || args.days > 366)
    throw new UsageError(`--days ${args.days} is not a whole number of days from 1 to 366`, 'Tokens have a fixed lifetime; make a new one when it expires.');
  const database = databaseOf(args);
  const dataDir = resolve(args.dataDir);
  const newFolder = !database && !existsSync(dataDir);
  const { keeper, close } = await tokenKeeper({ dataDir, ...(database ? { database } : {}) });
  let made;
  try {
    made = keeper.create(args.org, args.user, args.days);
    await made.stored;
  } finally {
    await close();
  }
  const { token, expiresAt } = made;
  io.out(token);
  io.err(`Token for ${args.user} in ${args.org}, valid until ${expiresAt}. It is shown only now; the service keeps only its hash.`);
  if (!database) {
    const kept = `Its hash is in ${join(dataDir, 'tokens.json')}${newFolder ? ', a data folder made just now' : ''}`;
    io.err(`${kept}: the service knows the token when it runs with --data-dir ${commandWord(dataDir)}.`);
  }
  if (roles.includes(OPERATOR_ROLE) && !roles.includes(USER_ROLE))
    io.err(`note: ${args.user} holds the role ${OPERATOR_ROLE} and not ${USER_ROLE}: the token reads /readyz's details; the API refuses it.`);
  else if (!roles.includes(USER_ROLE)) io.err(`warning: ${args.user} does not hold the role ${USER_ROLE}; the token is refused until the role is granted.`);
  return ExitCode.Ok;
}

export const tokenCreateCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, TokenCreateArgs> => ({
  command: 'create',
  describe: 'Create a personal access token for a user (printed once; only its hash is stored)',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('config', { type: 'string', demandOption: true, describe: 'Server configuration (schemas/server-config.schema.json)' })
      .option('data-dir', { type: 'string', default: DEFAULT_DATA_DIR, describe: 'Data directory of the service' })
      .option('database', databaseOption)
      .option('database-file', databaseFileOption)
      .option('org', { type: 'string', demandOption: true, describe: 'Organization id' })
      .option('user', { type: 'string', demandOption: true, describe: 'User id' })
      .option('days', {
        type: 'number',
        default: 30,
        coerce: numberOption('days', { integer: true, min: 1, max: 366 }),
        describe: 'Lifetime in days (tokens cannot be prolonged)',
      })
      .example('$0 serve token create --config server.json --data-dir /var/lib/signgate --org sandbox --user ci --days 30', 'a token for CI, printed once')
      .example(
        '$0 serve token create --config server.json --database-file db-url.txt --org sandbox --user ci',
        'the same, for every node of a PostgreSQL deployment',
      ) as unknown as Argv<TokenCreateArgs>,
  handler: async (args: ArgumentsCamelCase<TokenCreateArgs>) => setExit(await runTokenCreate(args, io)),
});
