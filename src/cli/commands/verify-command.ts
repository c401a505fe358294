// `signgate verify`: full cryptographic strong-name verification like `sn -vf`, optionally against an expected key.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { publicKeyToken } from '../../strongname/key-token.js';
import { ExitCode, worstExitCode, type ExitCodeValue } from '../exit-codes.js';
import { expandInputs } from '../../workflows/input-paths.js';
import { scanFiles, scanFilesAsJson } from '../../workflows/scan.js';
import type { Io } from '../output.js';
import { withBufferedOutput } from '../buffered-io.js';
import { loadKeyFile, loadKeyMap } from '../../workflows/keys.js';
import { threadsOption, type CommonArgs } from './common.js';
import { describeAuthenticodeVerdict } from '../../authenticode/verdict.js';
import { loadTrustStoreText } from '../../workflows/trust-store.js';
import { authenticodePasses } from '../../workflows/scan-file.js';
import { textOrJsonFormatOption } from '../options.js';

interface VerifyArgs extends CommonArgs {
  inputs: string[];
  key?: string;
  json: boolean;
  keyMap?: string;
  threads?: number;
  authenticode?: boolean;
  trustStore?: string;
}

export type { VerifyRecord } from '../../workflows/scan.js';

/** Prints in chunks (buffered-io.ts): one write per record costs more than the text for thousands of files. */
export async function runVerify(
  args: Pick<VerifyArgs, 'inputs' | 'key' | 'json' | 'keyMap' | 'threads' | 'authenticode' | 'trustStore'>,
  io: Io,
): Promise<ExitCodeValue> {
  return withBufferedOutput(io, (buffered) => runVerifyBuffered(args, buffered));
}

async function runVerifyBuffered(
  args: Pick<VerifyArgs, 'inputs' | 'key' | 'json' | 'keyMap' | 'threads' | 'authenticode' | 'trustStore'>,
  io: Io,
): Promise<ExitCodeValue> {
  const files = await expandInputs(args.inputs);
  const expected = args.key ? loadKeyFile(args.key).publicKey : undefined;
  const keyMap = loadKeyMap(args.keyMap);
  const trustStore = loadTrustStoreText(args.trustStore);
  const withAuthenticode = args.authenticode === true || trustStore !== undefined;
  const options = {
    ...(expected ? { expectedKey: expected } : {}),
    ...(keyMap ? { keyMap } : {}),
    ...(withAuthenticode ? { authenticode: true } : {}),
    ...(trustStore ? { trustStore } : {}),
    ...(args.threads === undefined ? {} : { threads: args.threads }),
  };
  const codes: ExitCodeValue[] = [];
  const code = (r: { valid: boolean; error: unknown }, authenticodeOk: boolean) =>
    r.error ? ExitCode.Unreadable : r.valid && authenticodeOk ? ExitCode.Ok : ExitCode.Findings;
  // Printed record by record, exactly as one JSON.stringify(records, null, 2) would print.
  if (args.json) {
    io.out(files.length ? '[' : '[]');
    for await (const r of scanFilesAsJson('verify', files, options)) {
      codes.push(code(r, r.authenticodePasses));
      io.out(`${r.json}${codes.length === files.length ? '' : ','}`);
    }
    if (files.length) io.out(']');
    return worstExitCode(codes);
  }
  const c = io.color;
  let valid = 0;
  let withValidAuthenticode = 0;
  let trusted = 0;
  for await (const r of scanFiles('verify', files, options)) {
    const ac = r.authenticode;
    codes.push(code(r, authenticodePasses(ac)));
    if (r.valid) valid++;
    if (ac?.state === 'valid') withValidAuthenticode++;
    if (ac?.trusted) trusted++;
    const tag = r.valid && authenticodePasses(ac) ? c.green('ok  ') : r.error ? c.red('err ') : c.red('FAIL');
    if (r.valid) io.out(`${tag} ${r.path}: signed, token ${r.publicKeyToken}, ${r.keyBits}-bit ${r.hashAlgorithm}`);
    else if (r.error) io.out(`${tag} ${r.path}: ${r.error.code}: ${r.error.message}`);
    else io.out(`${tag} ${r.path}: ${r.reason}`);
    if (ac) io.out(`     authenticode: ${describeAuthenticodeVerdict(ac)}`);
  }
  io.out(`${valid} of ${files.length} files validly signed${expected ? ` with key token ${publicKeyToken(expected.blob)}` : ''}`);
  if (withAuthenticode)
    io.out(`${withValidAuthenticode} of ${files.length} files with a valid Authenticode signature${trustStore ? `, ${trusted} trusted` : ''}`);
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
      .option('format', textOrJsonFormatOption)
      .option('key-map', { type: 'string', describe: "Mono machine.config whose <pubTokenMapping> substitutes keys by token, as Mono's sn does" })
      .option('authenticode', {
        type: 'boolean',
        default: false,
        describe: 'Also verify the Authenticode signature (image hash and PKCS#7 signature); a file passes only when both are valid',
      })
      .option('trust-store', { type: 'string', describe: 'PEM file of trusted certificates: the Authenticode chain must reach one (implies --authenticode)' })
      .option('threads', threadsOption)
      .example('$0 verify signed/*.dll --authenticode --trust-store roots.pem', 'strong name and Authenticode, chained to your roots')
      .example('$0 verify signed/*.dll --key 12345_public.snk', 'every file must be signed with the key of option 12345') as unknown as Argv<VerifyArgs>,
  handler: async (args: ArgumentsCamelCase<VerifyArgs>) => setExit(await runVerify(args, io)),
});
