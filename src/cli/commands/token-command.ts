// `signgate token`: the public key token of a key file (like sn -tp) or an assembly (like sn -T).
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { readModule } from '../../strongname/well-formed.js';
import { parsePublicKeyBlob, publicKeyHex } from '../../strongname/key-blob.js';
import { publicKeyToken } from '../../strongname/key-token.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { readInputFile } from '../../workflows/files.js';
import { displayPath } from '../../workflows/input-paths.js';
import type { Io } from '../output.js';
import { loadKeyFile } from '../../workflows/keys.js';
import { type CommonArgs } from './common.js';
import { textOrJsonFormatOption } from '../options.js';

interface TokenArgs extends CommonArgs {
  file: string;
  publicKey: boolean;
  json: boolean;
}

export async function runToken(args: Pick<TokenArgs, 'file' | 'publicKey' | 'json'>, io: Io): Promise<ExitCodeValue> {
  const absolute = resolve(args.file);
  const shown = displayPath(absolute);
  const bytes = readInputFile(absolute, shown);
  let kind: 'assembly' | 'key-pair' | 'public-key';
  let blob: Uint8Array;
  if (bytes[0] === 0x4d && bytes[1] === 0x5a) {
    kind = 'assembly';
    const assembly = readModule(bytes).assembly;
    if (!assembly || assembly.publicKey.length === 0) {
      io.err(`${shown}: the assembly is not strong-named (no public key), so it has no public key token`);
      return ExitCode.Findings;
    }
    blob = assembly.publicKey;
  } else {
    const key = loadKeyFile(args.file);
    kind = key.kind;
    blob = key.publicKey.blob;
  }
  const info = parsePublicKeyBlob(blob);
  const token = publicKeyToken(blob);
  if (args.json) {
    io.out(
      JSON.stringify(
        {
          path: shown,
          kind,
          publicKeyToken: token,
          publicKey: publicKeyHex(info),
          keyBits: info.isEcmaKey ? null : info.bitLength,
          hashAlgorithm: info.hashAlgorithm,
        },
        null,
        2,
      ),
    );
  } else {
    if (args.publicKey)
      io.out(
        `Public key (hash algorithm: ${info.hashAlgorithm}):\n${publicKeyHex(info)
          .replace(/(.{64})/g, '$1\n')
          .trim()}\n`,
      );
    io.out(`Public key token is ${token}`);
  }
  return ExitCode.Ok;
}

export const tokenCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, TokenArgs> => ({
  command: 'token <file>',
  describe: 'Print the public key token of a key file (like sn -tp) or of an assembly (like sn -T)',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'A .snk key pair, a public key file (sn -p) or an assembly' })
      .option('public-key', { alias: 'p', type: 'boolean', default: false, describe: 'Also print the public key (never the private key)' })
      .option('json', { type: 'boolean', default: false, describe: 'Print JSON' })
      .option('format', textOrJsonFormatOption)
      .example('$0 token 12345_public.snk', 'token of the key of option 12345') as unknown as Argv<TokenArgs>,
  handler: async (args: ArgumentsCamelCase<TokenArgs>) => setExit(await runToken(args, io)),
});
