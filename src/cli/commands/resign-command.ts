// `signgate resign`: sign a delay-signed assembly with the matching key pair (like sn -R), atomically.
import { resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { KeyError, SignGateError } from '../../core/errors.js';
import { readModule } from '../../strongname/well-formed.js';
import { signAssembly, verifyStrongName } from '../../strongname/strong-name.js';
import { publicKeyToken } from '../../strongname/key-token.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { readInputFile, writeFileAtomic } from '../../workflows/files.js';
import { displayPath } from '../../workflows/input-paths.js';
import type { Io } from '../output.js';
import { loadSigningKey } from '../../workflows/keys.js';
import { type CommonArgs } from './common.js';

interface ResignArgs extends CommonArgs {
  assembly: string;
  keyPair: string;
  output?: string;
}

export async function runResign(args: Pick<ResignArgs, 'assembly' | 'keyPair' | 'output'>, io: Io): Promise<ExitCodeValue> {
  const input = resolve(args.assembly);
  const shown = displayPath(input);
  const key = loadSigningKey(args.keyPair);
  if (key.kind !== 'key-pair') {
    throw new KeyError('SG_ERR_KEY_NOT_PAIR', `${displayPath(resolve(args.keyPair))}: holds only a public key; resign needs the key pair (.snk from sn -k)`);
  }
  const module = readModule(readInputFile(input, shown));
  let signed: Uint8Array;
  try {
    signed = signAssembly(module, key);
  } catch (error) {
    // A token that cannot sign is not the assembly's fault: that error goes on (exit 3, like an unreadable key).
    if ((error instanceof KeyError && !error.code.startsWith('SG_ERR_PKCS11_')) || (error instanceof SignGateError && error.code.startsWith('SG_ERR_SN_'))) {
      io.err(`${shown}: refused: ${error.message}`);
      return ExitCode.Findings;
    }
    throw error;
  }
  // Verify our own output before it replaces anything.
  const check = verifyStrongName(readModule(signed), { expectedKey: key.publicKey });
  if (!check.valid) throw new SignGateError('SG_ERR_INTERNAL', `${shown}: the signed output did not verify (${check.reason}); nothing was written`);
  const target = resolve(args.output ?? args.assembly);
  writeFileAtomic(target, signed);
  io.out(`${displayPath(target)}: signed with key token ${publicKeyToken(key.publicKey.blob)} (${key.publicKey.bitLength}-bit ${key.publicKey.hashAlgorithm})`);
  return ExitCode.Ok;
}

export const resignCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, ResignArgs> => ({
  command: 'resign <assembly>',
  describe: 'Sign a delay-signed assembly with its key pair (like sn -R): sets the signed flag, writes the signature, recomputes the checksum',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('assembly', { type: 'string', demandOption: true, describe: 'The delay-signed assembly' })
      .option('key-pair', {
        alias: 'key',
        type: 'string',
        demandOption: true,
        describe:
          'The key pair (.snk from sn -k) whose public key the assembly carries, or a pkcs11: URI of that key in a PKCS#11 token (the PIN from pin-source or SIGNGATE_PKCS11_PIN, never the command line)',
      })
      .option('output', { alias: 'o', type: 'string', describe: 'Write here instead of replacing the input (written to a temporary file, then renamed)' })
      .example('$0 resign Addin.dll --key-pair 12345.snk -o signed/Addin.dll', 'sign into another folder')
      .example(
        '$0 resign Addin.dll --key "pkcs11:token=signing;object=option-12345?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/etc/signgate/token.pin"',
        'sign with a key in a token',
      ) as unknown as Argv<ResignArgs>,
  handler: async (args: ArgumentsCamelCase<ResignArgs>) => setExit(await runResign(args, io)),
});
