// `signgate serve init`: a first configuration with a fresh sandbox key pair (or a key in a PKCS#11 token).
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { UsageError } from '../../../core/errors.js';
import { DEFAULT_SERVICE_NAME, USER_ROLE } from '../../../server/server-config.js';
import { createStrongNameKeyPair, parseStrongNameKeyFile } from '../../../strongname/key-blob.js';
import { PKCS11_PIN_ENV } from '../../../strongname/pkcs11/uri.js';
import { openTokenKey } from '../../../workflows/keys.js';
import { publicKeyToken } from '../../../strongname/key-token.js';
import { writeFileAtomic } from '../../../workflows/files.js';
import { ExitCode, type ExitCodeValue } from '../../exit-codes.js';
import { numberOption, vendorOption } from '../../options.js';
import type { Io } from '../../output.js';
import type { CommonArgs } from '../common.js';
import { commandWord } from './service-options.js';

export interface InitArgs extends CommonArgs {
  dir: string;
  vendor: string;
  optionId: number;
  force: boolean;
  pkcs11?: string;
}

/** Writes server.json and a fresh key pair for one sandbox organization: a service that runs at once. */
function runServeInit(args: InitArgs, io: Io): ExitCodeValue {
  const dir = resolve(args.dir);
  const configPath = join(dir, 'server.json');
  const keyName = args.pkcs11 === undefined ? `${args.optionId}_keypair.snk` : `${args.optionId}_public.snk`;
  // What add-in developers delay-sign with, beside the key pair (a key in a token: the only key file).
  const publicName = `${args.optionId}_public.snk`;
  for (const path of new Set([configPath, join(dir, keyName), join(dir, publicName)])) {
    if (existsSync(path) && !args.force) throw new UsageError(`${path} exists already`, 'Choose another --dir, or pass --force to replace it.');
  }
  // A key in a token: its public key comes from the module (before anything is written).
  const tokenKey = args.pkcs11 === undefined ? undefined : openTokenKey(args.pkcs11);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The private key: the service's user's alone.
  const pair = tokenKey ? undefined : createStrongNameKeyPair(2048);
  if (pair) writeFileAtomic(join(dir, keyName), pair, 0o600);
  const publicKey = tokenKey?.publicKey ?? parseStrongNameKeyFile(pair!).publicKey;
  writeFileAtomic(join(dir, publicName), publicKey.blob);
  const license = tokenKey ? { optionId: args.optionId, keyPair: args.pkcs11!, publicKey: keyName } : { optionId: args.optionId, keyPair: keyName };
  const config = {
    vendor: args.vendor,
    organizations: [{ id: 'sandbox', name: 'Sandbox organization', licenses: [license], users: [{ id: 'ci', roles: [USER_ROLE] }] }],
  };
  writeFileAtomic(configPath, new TextEncoder().encode(`${JSON.stringify(config, null, 2)}\n`));
  io.out(configPath);
  io.err(
    [
      ...(tokenKey
        ? [
            `Wrote ${configPath} (vendor ${args.vendor}, organization "sandbox" with user "ci"): option ${args.optionId} signs with the ${tokenKey.publicKey.bitLength}-bit key in the PKCS#11 token (key token ${publicKeyToken(tokenKey.publicKey.blob)}).`,
            `Wrote its public key ${keyName} (from the token): give it to add-in developers. The service reads the PIN where the URI says (pin-source, or ${PKCS11_PIN_ENV}).`,
          ]
        : [
            `Wrote ${configPath} (vendor ${args.vendor}, organization "sandbox" with user "ci"), a new 2048-bit key pair ${keyName} for option ${args.optionId} and its public key ${publicName} (key token ${publicKeyToken(publicKey.blob)}).`,
            `Keep ${keyName} secret: it signs. Give add-in developers ${join(dir, publicName)}: they delay-sign with it (the service hands it out too: signgate licenses --public-key ${args.optionId}).`,
          ]),
      ...nextSteps(configPath, join(dir, 'data')),
    ].join('\n'),
  );
  return ExitCode.Ok;
}

/**
 * What to run after `serve init`, in order, each command as it can be pasted: the same --data-dir in the token's
 * command and the service's (it keeps the token hashes), then a call that uses the token.
 */
function nextSteps(configPath: string, dataDir: string): string[] {
  const service = `--config ${commandWord(configPath)} --data-dir ${commandWord(dataDir)}`;
  return [
    'Next, in this order (both commands name the same --data-dir: the service knows the tokens made for its data folder):',
    `  signgate serve token create ${service} --org sandbox --user ci`,
    `  signgate serve ${service} --port 8080`,
    'Then, in another terminal, with SIGNGATE_ACCESS_TOKEN set to the token the first command printed:',
    `  signgate licenses --base-url http://127.0.0.1:8080/${DEFAULT_SERVICE_NAME}/v1.0`,
  ];
}

export const initCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, InitArgs> => ({
  command: 'init',
  describe: 'Write a server configuration with one sandbox organization and a fresh key pair (or a key in a PKCS#11 token: --pkcs11)',
  builder: (y: Argv<CommonArgs>) =>
    y
      .option('dir', { type: 'string', default: '.', describe: 'Folder for server.json, the key pair and its <optionId>_public.snk' })
      .option('vendor', { ...vendorOption, default: 'Contoso' })
      .option('option-id', {
        type: 'number',
        default: 12345,
        coerce: numberOption('option-id', { integer: true, min: 1 }),
        describe: 'License option id of the sandbox key',
      })
      .option('force', { type: 'boolean', default: false, describe: 'Replace existing files' })
      .option('pkcs11', {
        type: 'string',
        describe:
          'Sign with this key in a PKCS#11 token instead of a new key pair: pkcs11:token=<label>;object=<key label>?module-path=<module.so>&pin-source=file:<pin file> (the PIN never on the command line); writes <optionId>_public.snk from the token',
      })
      .example(
        '$0 serve init --dir service --pkcs11 "pkcs11:token=signing;object=option-12345?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/signgate/token.pin"',
        'a configuration whose option signs in a token',
      ) as unknown as Argv<InitArgs>,
  handler: (args: ArgumentsCamelCase<InitArgs>) => setExit(runServeInit(args, io)),
});
