// `signgate verify`: full cryptographic strong-name verification like `sn -vf`, optionally against an expected key.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { publicKeyToken } from '../../strongname/token.js';
import { ExitCode, worstExitCode, type ExitCodeValue } from '../exit-codes.js';
import { expandInputs } from '../../workflows/files.js';
import { scanFiles, scanFilesAsJson } from '../../workflows/scan.js';
import type { Io } from '../output.js';
import { loadKeyFile, loadKeyMap } from '../../workflows/keys.js';
import { threadsOption, type CommonArgs } from './common.js';

interface VerifyArgs extends CommonArgs {
  inputs: string[];
  key?: string;
  json: boolean;
  keyMap?: string;
  threads?: number;
}

export type { VerifyRecord } from '../../workflows/scan.js';

export async function runVerify(args: Pick<VerifyArgs, 'inputs' | 'key' | 'json' | 'keyMap' | 'threads'>, io: Io): Promise<ExitCodeValue> {
  const files = await expandInputs(args.inputs);
  const expected = args.key ? loadKeyFile(args.key).publicKey : undefined;
  const keyMap = loadKeyMap(args.keyMap);
  const options = { ...(expected ? { expectedKey: expected } : {}), ...(keyMap ? { keyMap } : {}), ...(args.threads === undefined ? {} : { threads: args.threads }) };
  const codes: ExitCodeValue[] = [];
  const code = (r: { valid: boolean; error: unknown }) => (r.valid ? ExitCode.Ok : r.error ? ExitCode.Unreadable : ExitCode.Findings);
  // Printed record by record, exactly as one JSON.stringify(records, null, 2) would print.
  if (args.json) {
    io.out(files.length ? '[' : '[]');
    for await (const r of scanFilesAsJson('verify', files, options)) {
      codes.push(code(r));
      io.out(`${r.json}${codes.length === files.length ? '' : ','}`);
    }
    if (files.length) io.out(']');
    return worstExitCode(codes);
  }
  const c = io.color;
  let valid = 0;
  for await (const r of scanFiles('verify', files, options)) {
    codes.push(code(r));
    if (r.valid) valid++;
    if (r.valid) io.out(`${c.green('ok  ')} ${r.path}: signed, token ${r.publicKeyToken}, ${r.keyBits}-bit ${r.hashAlgorithm}`);
    else if (r.error) io.out(`${c.red('err ')} ${r.path}: ${r.error.code}: ${r.error.message}`);
    else io.out(`${c.red('FAIL')} ${r.path}: ${r.reason}`);
  }
  io.out(`${valid} of ${files.length} files validly signed${expected ? ` with key token ${publicKeyToken(expected.blob)}` : ''}`);
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
      .option('threads', threadsOption)
      .example('$0 verify signed/*.dll --key 12345_public.snk', 'every file must be signed with the key of option 12345') as unknown as Argv<VerifyArgs>,
  handler: async (args: ArgumentsCamelCase<VerifyArgs>) => setExit(await runVerify(args, io)),
});
