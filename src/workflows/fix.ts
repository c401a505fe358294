// `signgate fix`: strong-name the assemblies of a build output that have no strong name (the cure for SG401), and
// point every assembly of the set at them. All files are decided before any is written: when one must be refused,
// nothing is written, so the set never ends half fixed (a fixed dependency beside an add-in that still names it
// without a token).
import { basename, dirname, isAbsolute, join, parse, relative, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { isSignGateError, KeyError, UsageError } from '../core/errors.js';
import { hasCorHeader } from '../pe/cor-header.js';
import { parsePeImage } from '../pe/pe-image.js';
import { ModuleMetadata } from '../metadata/module-metadata.js';
import { classifyStrongName, type StrongNameState } from '../strongname/strong-name.js';
import {
  identityPublicKey,
  strongNameAssembly,
  unfixableReason,
  type StrongNameHash,
  type StrongNameNote,
  type StrongNameOutcome,
} from '../strongname/strong-name-writer.js';
import { publicKeyToken } from '../strongname/token.js';
import { displayPath, expandInputs, readInputFile, writeFileAtomic, type InputFile } from './files.js';
import { loadSigningKey } from './keys.js';
import { canSign } from '../strongname/pkcs11-key.js';

export interface FixOptions {
  /** Files, folders (every *.dll and *.exe below) or glob patterns: the add-in and what it depends on. */
  readonly paths: readonly string[];
  /** The key pair (.snk from sn -k) that signs what has no strong name, or a `pkcs11:` URI of a key in a token. */
  readonly key?: string;
  /** Instead of `key`: the public key file to delay-sign with (`<optionId>_public.snk`), for the vendor's service. */
  readonly delaySign?: string;
  /** The signature's hash algorithm (default sha1). */
  readonly hash?: StrongNameHash;
  /** Replace each changed file where it is (through a temporary file and a rename). */
  readonly inPlace?: boolean;
  /** Write each changed file below this folder, at its path relative to the inputs' common folder. */
  readonly out?: string;
  /** Decide and report, write nothing. */
  readonly dryRun?: boolean;
  /** Re-sign another publisher's assembly that must change. */
  readonly force?: boolean;
  /**
   * A file that lists more inputs, one path per line (a build's references). Listed files count as found in a
   * folder: one that cannot be fixed (native, a reference assembly) is skipped, not refused.
   */
  readonly list?: string;
  /** With `out`: write each changed file directly into the folder, under its file name (a build's references). */
  readonly flat?: boolean;
  /** Working directory for relative paths (default process.cwd()). */
  readonly cwd?: string;
}

export type FixFileOutcome = StrongNameOutcome | 'skipped' | 'refused';

export interface FixFileResult {
  /** The input as shown (relative to the working directory, `/`-separated). */
  readonly path: string;
  readonly outcome: FixFileOutcome;
  /** The strong-name state before (absent for files that are not assemblies). */
  readonly before?: StrongNameState;
  /** Simple assembly name. */
  readonly name?: string;
  /** The result's public key token. */
  readonly publicKeyToken?: string | null;
  readonly changes: readonly string[];
  readonly notes: readonly StrongNameNote[];
  /** Why the file was skipped or refused. */
  readonly reason?: { readonly code: string; readonly message: string };
  /** Where the result was written (shown as the input is), when it was. */
  readonly writtenTo?: string;
}

export interface FixResult {
  readonly files: readonly FixFileResult[];
  /** The token every strong-named file now carries. */
  readonly publicKeyToken: string;
  readonly delaySigned: boolean;
  /** True when files were written (nothing is written on a dry run or when a file was refused). */
  readonly written: boolean;
}

/** Hints for refusals, by code. */
const REFUSAL_HINTS: Record<string, string> = {
  SG_ERR_FIX_OTHER_PUBLISHER: 'pass --force to re-sign it with your key, or leave it out and rebuild it against the strong-named references',
};

/**
 * Strong-names every assembly without a strong name among `paths` and updates the references of all of them.
 * @throws UsageError for options that cannot work; KeyError for the key file
 */
export async function fix(options: FixOptions): Promise<FixResult> {
  const cwd = options.cwd ?? process.cwd();
  if (!options.key === !options.delaySign) {
    throw new UsageError(
      options.key ? '--key and --delay-sign exclude each other' : 'say which key gives the strong names: --key <pair.snk> or --delay-sign <optionId>_public.snk',
      '--key signs with your own key pair (sn -k); --delay-sign writes the public key for the vendor\'s service to sign.',
    );
  }
  const modes = [options.inPlace, options.out !== undefined, options.dryRun].filter(Boolean).length;
  if (modes !== 1) {
    throw new UsageError(
      modes === 0 ? 'say where the strong-named files go: --in-place, --out <folder> or --dry-run' : '--in-place, --out and --dry-run exclude each other',
      '--in-place replaces each changed file (atomically); --out writes the changed files below another folder; --dry-run only reports.',
    );
  }
  const keyPath = resolve(cwd, (options.key ?? options.delaySign)!);
  const key = loadSigningKey((options.key ?? options.delaySign)!, cwd);
  if (options.key && !canSign(key)) {
    throw new KeyError('SG_ERR_KEY_NOT_PAIR', `${displayPath(keyPath, cwd)}: holds only a public key; --key needs the key pair (.snk from sn -k). To delay-sign for the vendor's service, pass it as --delay-sign`);
  }
  const inputs = await fixInputs(options, cwd);
  const identity = identityPublicKey(key, options.hash);
  const plan = planFix(inputs, options.force === true);
  const identities = new Map(plan.strongNamed.map((name) => [name, identity] as const));
  const results: (FixFileResult & { bytes?: Uint8Array; input: InputFile })[] = [];
  for (const entry of plan.entries) {
    if (entry.kind !== 'assembly') {
      results.push({ input: entry.input, path: entry.input.displayPath, outcome: entry.kind, changes: [], notes: [], reason: entry.reason, ...(entry.before ? { before: entry.before } : {}) });
      continue;
    }
    try {
      const r = strongNameAssembly(entry.bytes, { key, delaySign: options.delaySign !== undefined, hash: options.hash, identities, force: options.force });
      results.push({ input: entry.input, path: entry.input.displayPath, outcome: r.outcome, before: r.before, name: r.name, publicKeyToken: r.publicKeyToken, changes: r.changes, notes: r.notes, bytes: r.bytes });
    } catch (error) {
      if (!isSignGateError(error) || error.code === 'SG_ERR_INTERNAL') throw error;
      const hint = REFUSAL_HINTS[error.code];
      results.push({ input: entry.input, path: entry.input.displayPath, outcome: 'refused', before: entry.before, changes: [], notes: [], reason: { code: error.code, message: hint ? `${error.message} (${hint})` : error.message } });
    }
  }
  const refused = results.some((r) => r.outcome === 'refused');
  const write = !refused && !options.dryRun;
  const root = commonFolder(results.map((r) => r.input.absolutePath));
  const targetOf = (input: InputFile) =>
    options.inPlace ? input.absolutePath : options.flat ? join(resolve(cwd, options.out!), basename(input.absolutePath)) : join(resolve(cwd, options.out!), relative(root, input.absolutePath));
  if (write && options.flat) {
    const seen = new Map<string, string>();
    for (const r of results) {
      if (!r.bytes || r.outcome === 'unchanged') continue;
      const name = basename(r.input.absolutePath).toLowerCase();
      const other = seen.get(name);
      if (other) throw new UsageError(`${other} and ${r.path} would both be written as ${basename(r.input.absolutePath)} (--flat)`, 'Leave out --flat to keep their folders, or fix them in two runs.');
      seen.set(name, r.path);
    }
  }
  const files: FixFileResult[] = [];
  for (const { input, bytes, ...result } of results) {
    if (!write || !bytes || result.outcome === 'unchanged' || result.outcome === 'skipped' || result.outcome === 'refused') {
      files.push(result);
      continue;
    }
    const target = targetOf(input);
    mkdirSync(dirname(target), { recursive: true });
    writeFileAtomic(target, bytes);
    files.push({ ...result, writtenTo: displayPath(target, cwd) });
  }
  return { files, publicKeyToken: publicKeyToken(identity), delaySigned: options.delaySign !== undefined, written: write };
}

/** The inputs: paths as on the command line, then the listed files (not explicit), without duplicates. */
async function fixInputs(options: FixOptions, cwd: string): Promise<InputFile[]> {
  const named = options.paths.length > 0 ? await expandInputs(options.paths, cwd) : [];
  if (!options.list) return named;
  const listPath = resolve(cwd, options.list);
  const lines = readInputFile(listPath, displayPath(listPath, cwd)).toString('utf8').replace(/^\uFEFF/, '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  const listed = lines.length > 0 ? await expandInputs(lines.map((l) => resolve(dirname(listPath), l)), cwd) : [];
  const seen = new Set(named.map((f) => f.absolutePath));
  return [...named, ...listed.filter((f) => !seen.has(f.absolutePath)).map((f) => ({ ...f, explicit: false }))];
}

type PlanEntry =
  | { readonly kind: 'assembly'; readonly input: InputFile; readonly bytes: Uint8Array; readonly name: string; readonly before: StrongNameState }
  | { readonly kind: 'skipped' | 'refused'; readonly input: InputFile; readonly reason: { code: string; message: string }; readonly before?: StrongNameState };

/**
 * Reads every input and decides which assemblies get a strong name: those without one, and (with `force`) those
 * of another publisher that reference one of them, and so on. A file found in a folder that is not an assembly
 * to fix (native, a netmodule, a reference assembly) is skipped; named on its own, it is refused.
 */
export function planFix(inputs: readonly InputFile[], force: boolean): { entries: PlanEntry[]; strongNamed: string[] } {
  const entries: PlanEntry[] = [];
  const modules = new Map<PlanEntry, ModuleMetadata>();
  for (const input of inputs) {
    const bytes = new Uint8Array(readInputFile(input.absolutePath, input.displayPath));
    const skipOrRefuse = (code: string, message: string) =>
      entries.push({ kind: input.explicit ? 'refused' : 'skipped', input, reason: { code, message } });
    let module: ModuleMetadata;
    try {
      const image = parsePeImage(bytes);
      if (!hasCorHeader(image)) {
        skipOrRefuse('SG_ERR_FIX_NOT_MANAGED', 'a native PE image, not a .NET assembly: it has no strong name to give');
        continue;
      }
      module = new ModuleMetadata(image);
    } catch (error) {
      if (!isSignGateError(error)) throw error;
      // A file that cannot be read is refused even in a folder: the set cannot be decided without it.
      entries.push({ kind: 'refused', input, reason: { code: error.code, message: error.message } });
      continue;
    }
    const unfixable = unfixableReason(module);
    if (unfixable) {
      skipOrRefuse(unfixable.code, unfixable.message);
      continue;
    }
    const entry: PlanEntry = { kind: 'assembly', input, bytes, name: module.assembly!.name, before: classifyStrongName(module).state };
    entries.push(entry);
    modules.set(entry, module);
  }
  const strongNamed = new Set<string>();
  for (const entry of entries) if (entry.kind === 'assembly' && entry.before === 'unsigned') strongNamed.add(entry.name.toLowerCase());
  if (force) {
    // Another publisher's assembly that must change is re-signed with our key: its own referencers follow it.
    for (let grew = true; grew; ) {
      grew = false;
      for (const [entry, module] of modules) {
        if (entry.kind !== 'assembly' || strongNamed.has(entry.name.toLowerCase())) continue;
        if (entry.before !== 'signed' && entry.before !== 'invalid-signature') continue;
        if (module.assemblyReferences.some((r) => strongNamed.has(r.name.toLowerCase()))) {
          strongNamed.add(entry.name.toLowerCase());
          grew = true;
        }
      }
    }
  }
  return { entries, strongNamed: [...strongNamed] };
}

/** The deepest folder that holds every path (the folder of the only one, for one). */
function commonFolder(paths: readonly string[]): string {
  if (paths.length === 0) return process.cwd();
  let common = dirname(paths[0]!);
  const inside = (path: string, folder: string) => {
    const rel = relative(folder, path);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  };
  while (!paths.every((p) => inside(p, common))) {
    const up = dirname(common);
    if (up === common || parse(common).root === common) break;
    common = up;
  }
  return common;
}

