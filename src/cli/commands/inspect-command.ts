// `signgate inspect`: identity, PE kind, CLI flags, strong-name state, attributes and references.
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import type { AssemblyInfo } from '../../strongname/assembly-info.js';
import type { AttributeValue } from '../../metadata/custom-attribute-value.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { expandInputs } from '../../workflows/input-paths.js';
import { scanFiles, scanFilesAsJson } from '../../workflows/scan.js';
import type { Io } from '../output.js';
import { withBufferedOutput } from '../buffered-io.js';
import { loadKeyMap } from '../../workflows/keys.js';
import { authenticodeVerdict, describeAuthenticodeVerdict } from '../../authenticode/verdict.js';
import { loadTrustStoreText } from '../../workflows/trust-store.js';
import { threadsOption, type CommonArgs } from './common.js';
import { textOrJsonFormatOption } from '../options.js';

interface InspectArgs extends CommonArgs {
  inputs: string[];
  json: boolean;
  verify: boolean;
  keyMap?: string;
  threads?: number;
  trustStore?: string;
  authenticode: boolean;
}

function formatValue(value: AttributeValue): string {
  if (Array.isArray(value)) return `[${value.map(formatValue).join(', ')}]`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

export function formatInspectText(info: AssemblyInfo, io: Io): string {
  const c = io.color;
  const lines = [c.bold(info.path)];
  const row = (label: string, text: string) => lines.push(`  ${label.padEnd(12)}${label.length >= 12 ? ' ' : ''}${text}`);
  if (info.error && !info.pe) {
    row('error', c.red(`${info.error.code}: ${info.error.message}`));
    return lines.join('\n');
  }
  if (info.pe)
    row(
      'pe',
      `${info.pe.format} ${info.pe.machine} ${info.pe.kind}${info.pe.authenticode ? ', Authenticode' : ''}${info.pe.overlayBytes ? `, ${info.pe.overlayBytes} overlay bytes` : ''}`,
    );
  if (!info.managed) {
    row('managed', 'no: a native PE image without a CLI header');
    return lines.join('\n');
  }
  if (info.cli) {
    const flags = [
      info.cli.ilOnly && 'ILONLY',
      info.cli.requires32Bit && '32BITREQUIRED',
      info.cli.prefers32Bit && '32BITPREFERRED',
      info.cli.ilLibrary && 'IL_LIBRARY',
      info.cli.strongNameSignedFlag && 'STRONGNAMESIGNED',
    ]
      .filter(Boolean)
      .join(' ');
    row('cli', `runtime ${info.cli.runtimeVersion}, metadata ${info.cli.metadataVersion}, flags 0x${info.cli.flags.toString(16)} ${flags}`);
  }
  if (info.assembly) {
    const a = info.assembly;
    row('assembly', `${a.name}, Version=${a.version}, Culture=${a.culture || 'neutral'}, PublicKeyToken=${a.publicKeyToken ?? 'null'}`);
  } else if (info.module) {
    row('module', `${info.module.name} (${info.module.hasManifest ? 'the assembly manifest was not read: see the error' : 'netmodule: no assembly manifest'})`);
  }
  if (info.strongName) {
    const s = info.strongName;
    const colour = s.state === 'signed' ? c.green : s.state === 'invalid-signature' ? c.red : c.yellow;
    const facts = [s.slotSize !== null && `slot ${s.slotSize} bytes`, s.keyBits && `${s.keyBits}-bit key`, s.hashAlgorithm].filter(Boolean).join(', ');
    row('strong name', `${colour(s.state)}${facts ? ` (${facts})` : ''}`);
    if (s.details.length) row('', c.dim(s.description));
  }
  for (const a of info.attributes) {
    const args = a.arguments ? a.arguments.map((x) => formatValue(x.value)) : ['?'];
    const named = (a.namedArguments ?? []).map((n) => `${n.name} = ${formatValue(n.value)}`);
    const from = a.assembly ? c.dim(` [${a.assembly}]`) : c.dim(' [this module]');
    const target = a.target === 'module' ? 'module: ' : '';
    row('attribute', `${target}${a.type}(${[...args, ...named].join(', ')})${from}${a.error ? c.red(` ${a.error.code}`) : ''}`);
  }
  if (info.authenticode && info.authenticode.state !== 'absent') {
    const a = info.authenticode;
    row('authenticode', (a.state === 'valid' ? c.green : c.red)(describeAuthenticodeVerdict(authenticodeVerdict(a))));
  }
  for (const r of info.references)
    row('reference', `${r.name}, Version=${r.version}, Culture=${r.culture || 'neutral'}, PublicKeyToken=${r.publicKeyToken ?? 'null'}`);
  if (info.error) row('error', c.red(`${info.error.code}: ${info.error.message}`));
  return lines.join('\n');
}

/** Prints in chunks (buffered-io.ts): one write per record costs more than the text for thousands of files. */
export async function runInspect(
  args: Pick<InspectArgs, 'inputs' | 'json' | 'verify' | 'keyMap' | 'threads' | 'trustStore'> & { authenticode?: boolean },
  io: Io,
): Promise<ExitCodeValue> {
  return withBufferedOutput(io, (buffered) => runInspectBuffered(args, buffered));
}

async function runInspectBuffered(
  args: Pick<InspectArgs, 'inputs' | 'json' | 'verify' | 'keyMap' | 'threads' | 'trustStore'> & { authenticode?: boolean },
  io: Io,
): Promise<ExitCodeValue> {
  const files = await expandInputs(args.inputs);
  const keyMap = loadKeyMap(args.keyMap);
  const trustStore = loadTrustStoreText(args.trustStore);
  const options = {
    verify: args.verify,
    ...(args.authenticode === false ? { authenticode: false } : {}),
    ...(keyMap ? { keyMap } : {}),
    ...(trustStore ? { trustStore } : {}),
    ...(args.threads === undefined ? {} : { threads: args.threads }),
  };
  let unreadable = false;
  // Printed record by record, exactly as one JSON.stringify(records, null, 2) or one joined text would print.
  let i = 0;
  if (args.json) {
    io.out(files.length ? '[' : '[]');
    for await (const record of scanFilesAsJson('inspect', files, options)) {
      unreadable ||= record.error;
      io.out(`${record.json}${++i === files.length ? '' : ','}`);
    }
    if (files.length) io.out(']');
  } else {
    for await (const record of scanFiles('inspect', files, options)) {
      unreadable ||= Boolean(record.error);
      io.out(`${formatInspectText(record, io)}${++i === files.length ? '' : '\n\n'}`);
    }
    if (files.length === 0) io.out('');
  }
  return unreadable ? ExitCode.Unreadable : ExitCode.Ok;
}

export const inspectCommand = (io: Io, setExit: (code: ExitCodeValue) => void): CommandModule<CommonArgs, InspectArgs> => ({
  command: 'inspect <inputs..>',
  describe: 'Show identity, PE kind, CLI flags, strong-name state, attributes and references of assemblies',
  builder: (y: Argv<CommonArgs>) =>
    y
      .positional('inputs', { type: 'string', default: undefined, describe: 'Files, folders (all *.dll and *.exe below) or glob patterns' })
      .option('json', { type: 'boolean', default: false, describe: 'Print one JSON array (schemas/inspect.schema.json)' })
      .option('format', textOrJsonFormatOption)
      .option('verify', {
        type: 'boolean',
        default: true,
        describe: 'Verify signatures cryptographically (--no-verify reports a non-empty slot as signed, not-verified)',
      })
      .option('key-map', { type: 'string', describe: "Mono machine.config whose <pubTokenMapping> substitutes keys by token, as Mono's sn does" })
      .option('authenticode', {
        type: 'boolean',
        default: true,
        describe: 'Read and verify the Authenticode signatures (--no-authenticode skips them: faster on signed packages)',
      })
      .option('trust-store', {
        type: 'string',
        describe: 'PEM file of trusted root/intermediate certificates: report whether each Authenticode chain reaches one',
      })
      .option('threads', threadsOption)
      .example('$0 inspect bin/Release', 'every assembly below bin/Release')
      .example('$0 inspect "out/**/*.dll" --json', 'JSON for a glob') as unknown as Argv<InspectArgs>,
  handler: async (args: ArgumentsCamelCase<InspectArgs>) => setExit(await runInspect(args, io)),
});
