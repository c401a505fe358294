// `signgate fix`: give the assemblies of a build output that have no strong name one, and point the others at them.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { fix, type FixFileResult, type FixResult } from '../../workflows/fix.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import type { Io } from '../output.js';
import { strings, type CommonArgs } from './common.js';

interface FixArgs extends CommonArgs {
  paths?: string[];
  key?: string;
  delaySign?: string;
  hash?: 'sha1' | 'sha256';
  inPlace?: boolean;
  out?: string;
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
  list?: string;
  flat?: boolean;
  fromMsbuild?: boolean;
}

const VERB: Record<FixFileResult['outcome'], string> = {
  'strong-named': 'strong-named',
  'references-updated': 'references updated',
  're-signed': 're-signed with your key',
  signed: 'signed',
  unchanged: 'unchanged',
  skipped: 'skipped',
  refused: 'refused',
};

/** The report: a line per file, its changes and notes indented below it, then a summary line. */
export function formatFixReport(result: FixResult, io: Pick<Io, 'color'>): string {
  const c = io.color;
  const lines: string[] = [];
  for (const f of result.files) {
    const verb =
      f.outcome === 'refused'
        ? c.red(VERB[f.outcome])
        : f.outcome === 'skipped' || f.outcome === 'unchanged'
          ? c.dim(VERB[f.outcome])
          : c.green(VERB[f.outcome]);
    const where = f.writtenTo && f.writtenTo !== f.path ? ` -> ${f.writtenTo}` : '';
    lines.push(`${f.path}: ${verb}${where}`);
    if (f.reason) lines.push(`  ${f.outcome === 'refused' ? `error ${f.reason.code}` : 'because'}: ${f.reason.message}`);
    for (const change of f.changes) lines.push(`  ${change}`);
    for (const note of f.notes) lines.push(`  ${c.yellow('note')}: ${note.message}`);
  }
  const count = (o: FixFileResult['outcome']) => result.files.filter((f) => f.outcome === o).length;
  const changed = result.files.filter((f) => !['unchanged', 'skipped', 'refused'].includes(f.outcome)).length;
  const refused = count('refused');
  const key = `key token ${result.publicKeyToken}${result.delaySigned ? ', delay-signed' : ''}`;
  const summary = `${changed} file${changed === 1 ? '' : 's'} ${result.written ? 'written' : 'would change (dry run)'}, ${count('unchanged')} unchanged, ${count('skipped')} skipped`;
  for (const m of result.missing) lines.push(`${c.red(`error ${m.code}`)}: ${m.message}`);
  const m = result.missing.length;
  const missing = m ? `, ${c.red(`${m} missing reference${m === 1 ? '' : 's'} left without a token`)}` : '';
  lines.push(refused > 0 ? `${summary}, ${c.red(`${refused} refused, left as they were`)}${missing} (${key})` : `${summary}${missing} (${key})`);
  if (result.delaySigned && changed > 0 && result.written) {
    lines.push(
      "next: delay-signed files load on .NET Framework only once the service has signed them: signgate sign uploads them with the add-in when this is your option's <optionId>_public.snk (give check and sign the same file with --key); ship the files it returns (docs/fix.md)",
    );
  }
  return lines.join('\n');
}

/** Why a file found in a folder or a list is no assembly to fix: not worth a build warning. */
const NOT_TO_FIX = new Set(['SG_ERR_FIX_NOT_MANAGED', 'SG_ERR_FIX_NETMODULE', 'SG_ERR_FIX_REFERENCE_ASSEMBLY']);

/**
 * For the build (SigngateFixReferences): refusals as MSBuild errors, listed files that could not be fixed and notes as
 * warnings in the canonical `file : error CODE : text` form, the rest as plain lines.
 */
/**
 * The build's code for each kind of note (docs/msbuild.md): SGB008 a friend outside the set, SGB009 an Authenticode
 * signature removed, SGB010 compiled XAML, SGB013 overlay bytes kept, SGB014 a satellite's key.
 */
const MSBUILD_NOTE_CODE: Record<FixFileResult['notes'][number]['kind'], string> = {
  'friend-without-key': 'SGB008',
  'authenticode-removed': 'SGB009',
  baml: 'SGB010',
  'overlay-kept': 'SGB013',
  satellite: 'SGB014',
};

export function formatFixForMsbuild(result: FixResult): string {
  const lines: string[] = [];
  for (const f of result.files) {
    if (f.outcome === 'refused') lines.push(`${f.path} : error ${f.reason!.code} : signgate fix: ${f.reason!.message}`);
    else if (f.outcome === 'skipped' && f.reason && !NOT_TO_FIX.has(f.reason.code))
      lines.push(`${f.path} : warning ${f.reason.code} : signgate fix: skipped: ${f.reason.message}`);
    else if (f.outcome !== 'skipped' && f.outcome !== 'unchanged')
      lines.push(`signgate fix: ${f.path}: ${VERB[f.outcome]}${f.writtenTo ? ` -> ${f.writtenTo}` : ''}`);
    // What fix could not rewrite, or removed, is told as a message (MSBuild's categories are only error and
    // warning: `note` keeps the line out of both), one code per kind: nothing here is for the build to fail on.
    for (const note of f.notes) lines.push(`${f.path} : note ${MSBUILD_NOTE_CODE[note.kind]} : signgate fix: ${note.message}`);
  }
  for (const m of result.missing) lines.push(`${m.referencedBy[0]} : error ${m.code} : signgate fix: ${m.message}`);
  return lines.join('\n');
}

export async function runFix(args: FixArgs, io: Io): Promise<ExitCodeValue> {
  const result = await fix({
    paths: strings(args.paths) ?? (args.list ? [] : ['.']),
    ...(args.key !== undefined ? { key: args.key } : {}),
    ...(args.delaySign !== undefined ? { delaySign: args.delaySign } : {}),
    ...(args.hash ? { hash: args.hash } : {}),
    inPlace: args.inPlace === true,
    ...(args.out !== undefined ? { out: args.out } : {}),
    dryRun: args.dryRun === true,
    force: args.force === true,
    ...(args.list !== undefined ? { list: args.list } : {}),
    flat: args.flat === true,
  });
  io.out(args.json ? JSON.stringify(result, null, 2) : args.fromMsbuild ? formatFixForMsbuild(result) : formatFixReport(result, io));
  return result.files.some((f) => f.outcome === 'refused') || result.missing.length > 0 ? ExitCode.Findings : ExitCode.Ok;
}

export const fixCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, FixArgs> => ({
  command: 'fix [paths..]',
  describe: 'Strong-name the assemblies that have none (the cure for SG401) and point every assembly of the set at them',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('paths', {
        type: 'string',
        array: true,
        default: undefined,
        describe: 'The add-in and its dependencies: folders, files or glob patterns (default: the working directory)',
      })
      .option('key', {
        type: 'string',
        describe: 'Your key pair (.snk from sn -k), or a pkcs11: URI of a key in a token (docs/deploy.md): signs each assembly that has no strong name',
      })
      .option('delay-sign', {
        type: 'string',
        describe: "Instead of --key: the option public key file <optionId>_public.snk, to delay-sign for the vendor's service",
      })
      .option('hash', {
        type: 'string',
        choices: ['sha1', 'sha256'] as const,
        describe: 'Signature hash algorithm (default sha1, which every runtime verifies)',
      })
      .option('in-place', { type: 'boolean', describe: 'Replace each changed file where it is (a temporary file, then a rename)' })
      .option('out', { type: 'string', describe: "Write the changed files below this folder, at their paths relative to the inputs' common folder" })
      .option('dry-run', { type: 'boolean', describe: 'Report what would change; write nothing' })
      .option('force', { type: 'boolean', describe: "Re-sign another publisher's assembly that references a fixed one" })
      .option('json', { type: 'boolean', describe: 'Print the result as JSON' })
      .option('list', {
        type: 'string',
        describe: 'A file listing more inputs, one path per line; a listed file that cannot be fixed (native, a reference assembly, a refusal) is skipped',
      })
      .option('flat', { type: 'boolean', describe: 'With --out: write each changed file directly into the folder, under its own name' })
      .option('from-msbuild', { type: 'boolean', hidden: true })
      .example('$0 fix bin/Release --key mykey.snk --in-place', "strong-name the unsigned dependencies in a build output; the add-in's references follow")
      .example('$0 fix bin/Release --delay-sign 12345_public.snk --out upload', "delay-sign them for the vendor's service instead")
      .epilog(
        "A refused file is left as it was, with every file tied to it by a reference, a friend or a satellite's key; the rest is fixed. " +
          'Exit codes: 0 done, 1 a file was refused or a referenced library without a strong name is not among the inputs, ' +
          '2 usage error, 3 unreadable input or key.',
      ) as unknown as Argv<FixArgs>,
  handler: async (args: ArgumentsCamelCase<FixArgs>) => setExit(await runFix(args, io)),
});
