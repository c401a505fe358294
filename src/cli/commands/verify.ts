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
import { authenticodeOf, describeAuthenticodeVerdict, type AuthenticodeVerdict } from '../../authenticode/verdict.js';
import { loadTrustStore } from '../../workflows/authenticode.js';

interface VerifyArgs extends CommonArgs {
  inputs: string[];
  key?: string;
  json: boolean;
  keyMap?: string;
  authenticode?: boolean;
  trustStore?: string;
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
  /** With --authenticode: the file's Authenticode signature beside its strong name. */
  authenticode?: AuthenticodeVerdict;
}

/** With --authenticode a file passes only when its Authenticode signature is valid (and trusted, with --trust-store). */
function authenticodePasses(v: AuthenticodeVerdict | undefined): boolean {
  return !v || (v.state === 'valid' && v.trusted !== false);
}

export async function runVerify(args: Pick<VerifyArgs, 'inputs' | 'key' | 'json' | 'keyMap' | 'authenticode' | 'trustStore'>, io: Io): Promise<ExitCodeValue> {
  const files = await expandInputs(args.inputs);
  const trustStore = loadTrustStore(args.trustStore);
  const withAuthenticode = args.authenticode === true || trustStore !== undefined;
  const expected = args.key ? loadKeyFile(args.key).publicKey : undefined;
  const keyMap = loadKeyMap(args.keyMap);
  const records: VerifyRecord[] = [];
  const codes: ExitCodeValue[] = [];
  for (const file of files) {
    let authenticode: AuthenticodeVerdict | undefined;
    try {
      const bytes = readInputFile(file.absolutePath, file.displayPath);
      if (withAuthenticode) authenticode = authenticodeOf(bytes, trustStore ? { trustStore } : {}) ?? undefined;
      const module = readModule(bytes);
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
        ...(authenticode ? { authenticode } : {}),
      });
      codes.push(result.valid && authenticodePasses(authenticode) ? ExitCode.Ok : ExitCode.Findings);
    } catch (error) {
      if (!(error instanceof SignGateError)) throw error;
      records.push({ path: file.displayPath, valid: false, state: null, publicKeyToken: null, keyBits: null, hashAlgorithm: null, reason: null, error: { code: error.code, message: error.message }, ...(authenticode ? { authenticode } : {}) });
      codes.push(ExitCode.Unreadable);
    }
  }
  if (args.json) io.out(JSON.stringify(records, null, 2));
  else {
    const c = io.color;
    for (const r of records) {
      const ac = r.authenticode;
      const tag = r.valid && authenticodePasses(ac) ? c.green('ok  ') : r.error ? c.red('err ') : c.red('FAIL');
      if (r.valid) io.out(`${tag} ${r.path}: signed, token ${r.publicKeyToken}, ${r.keyBits}-bit ${r.hashAlgorithm}`);
      else if (r.error) io.out(`${tag} ${r.path}: ${r.error.code}: ${r.error.message}`);
      else io.out(`${tag} ${r.path}: ${r.reason}`);
      if (ac) io.out(`     authenticode: ${describeAuthenticodeVerdict(ac)}`);
    }
    const valid = records.filter((r) => r.valid).length;
    io.out(`${valid} of ${records.length} files validly signed${expected ? ` with key token ${publicKeyToken(expected.blob)}` : ''}`);
    if (withAuthenticode) {
      const good = records.filter((r) => r.authenticode?.state === 'valid').length;
      const trusted = trustStore ? `, ${records.filter((r) => r.authenticode?.trusted).length} trusted` : '';
      io.out(`${good} of ${records.length} files with a valid Authenticode signature${trusted}`);
    }
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
      .option('authenticode', { type: 'boolean', default: false, describe: 'Also verify the Authenticode signature (image hash and PKCS#7 signature); a file passes only when both are valid' })
      .option('trust-store', { type: 'string', describe: 'PEM file of trusted certificates: the Authenticode chain must reach one (implies --authenticode)' })
      .example('$0 verify signed/*.dll --authenticode --trust-store roots.pem', 'strong name and Authenticode, chained to your roots')
      .example('$0 verify signed/*.dll --key 12345_public.snk', 'every file must be signed with the key of option 12345') as unknown as Argv<VerifyArgs>,
  handler: async (args: ArgumentsCamelCase<VerifyArgs>) => setExit(await runVerify(args, io)),
});
