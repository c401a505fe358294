// `signgate verify`: full cryptographic strong-name verification like `sn -vf`, optionally against an expected key.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { SignGateError } from '../../core/errors.js';
import { readModule } from '../../strongname/assembly-info.js';
import { verifyStrongName } from '../../strongname/strong-name.js';
import { publicKeyToken } from '../../strongname/token.js';
import { ExitCode, worstExitCode, type ExitCodeValue } from '../exit-codes.js';
import { expandInputs, readInputFile } from '../../workflows/files.js';
import type { Io } from '../output.js';
import { loadKeyFile, loadKeyMap } from '../../workflows/keys.js';
import { type CommonArgs } from './common.js';

interface VerifyArgs extends CommonArgs {
  inputs: string[];
  key?: string;
  json: boolean;
  keyMap?: string;
}

export interface VerifyRecord {
  path: string;
  valid: boolean;
  state: string | null;
  publicKeyToken: string | null;
  keyBits: number | null;
  hashAlgorithm: string | null;
  reason: string | null;
  error: { code: string; message: string } | null;
}

export async function runVerify(args: Pick<VerifyArgs, 'inputs' | 'key' | 'json' | 'keyMap'>, io: Io): Promise<ExitCodeValue> {
  const files = await expandInputs(args.inputs);
  const expected = args.key ? loadKeyFile(args.key).publicKey : undefined;
  const keyMap = loadKeyMap(args.keyMap);
  const records: VerifyRecord[] = [];
  const codes: ExitCodeValue[] = [];
  for (const file of files) {
    try {
      const module = readModule(readInputFile(file.absolutePath, file.displayPath));
      const result = verifyStrongName(module, { ...(expected ? { expectedKey: expected } : {}), ...(keyMap ? { keyMap } : {}) });
      records.push({
        path: file.displayPath,
        valid: result.valid,
        state: result.status.state,
        publicKeyToken: result.status.publicKeyToken,
        keyBits: result.status.keyBits,
        hashAlgorithm: result.status.hashAlgorithm,
        reason: result.reason,
        error: null,
      });
      codes.push(result.valid ? ExitCode.Ok : ExitCode.Findings);
    } catch (error) {
      if (!(error instanceof SignGateError)) throw error;
      records.push({ path: file.displayPath, valid: false, state: null, publicKeyToken: null, keyBits: null, hashAlgorithm: null, reason: null, error: { code: error.code, message: error.message } });
      codes.push(ExitCode.Unreadable);
    }
  }
  if (args.json) io.out(JSON.stringify(records, null, 2));
  else {
    const c = io.color;
    for (const r of records) {
      if (r.valid) io.out(`${c.green('ok  ')} ${r.path}: signed, token ${r.publicKeyToken}, ${r.keyBits}-bit ${r.hashAlgorithm}`);
      else if (r.error) io.out(`${c.red('err ')} ${r.path}: ${r.error.code}: ${r.error.message}`);
      else io.out(`${c.red('FAIL')} ${r.path}: ${r.reason}`);
    }
    const valid = records.filter((r) => r.valid).length;
    io.out(`${valid} of ${records.length} files validly signed${expected ? ` with key token ${publicKeyToken(expected.blob)}` : ''}`);
  }
  return worstExitCode(codes);
}

export const verifyCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, VerifyArgs> => ({
  command: 'verify <inputs..>',
  describe: 'Verify strong-name signatures cryptographically (like sn -vf); exit 0 only when every file is validly signed',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('inputs', { type: 'string', array: true, default: undefined, describe: 'Files, folders or glob patterns' })
      .option('key', { type: 'string', describe: 'Expected public key (.snk from sn -p, or a key pair): the signature must be by this key' })
      .option('json', { type: 'boolean', default: false, describe: 'Print one JSON array' })
      .option('format', { type: 'string', choices: ['text', 'json'], describe: 'Output format (json is the same as --json)' })
      .option('key-map', { type: 'string', describe: "Mono machine.config whose <pubTokenMapping> substitutes keys by token, as Mono's sn does" })
      .example('$0 verify signed/*.dll --key 12345_public.snk', 'every file must be signed with the key of option 12345') as unknown as Argv<VerifyArgs>,
  handler: async (args: ArgumentsCamelCase<VerifyArgs>) => setExit(await runVerify(args, io)),
});
