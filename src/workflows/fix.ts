// `signgate fix`: strong-name the assemblies of a build output that have no strong name (the cure for SG401), and
// point every assembly of the set at them. All files are decided before any is written: when one must be refused,
// so is every file tied to it (a fixed dependency beside an add-in that still names it without a token, or a fixed
// add-in naming a dependency by a token it does not carry); the rest of the set is fixed.
import { basename, dirname, isAbsolute, join, parse, relative, resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { isSignGateError, KeyError, UsageError } from '../core/errors.js';
import { parsePeImage } from '../pe/pe-image.js';
import { folderArgument, shownFolder } from '../core/shown-paths.js';
import { copyLocalHint, resolvedFrom } from '../rules/sg401-unsigned-reference.js';
import {
  assemblyFacts,
  blockedByRefusals,
  changesOutcome,
  planSet,
  satelliteNotes,
  staysAsItIs,
  type FixOutcome,
  type PlannedAssembly,
  type PlannedOther,
  type SetPlan,
} from '../strongname/fix-plan.js';
import type { StrongNameState } from '../strongname/strong-name.js';
import {
  identityPublicKey,
  strongNameAssembly,
  type StrongNameHash,
  type StrongNameAssemblyResult,
  type StrongNameNote,
} from '../strongname/strong-name-writer.js';
import { publicKeyToken } from '../strongname/key-token.js';
import { readAssemblyParts, type AssemblyParts } from './assembly-parts.js';
import { buildFolders } from './build-folders.js';
import { readInputFile, writeFileAtomic } from './files.js';
import { displayPath, expandInputs, noAssembliesError, type InputFile } from './input-paths.js';
import { loadSigningKey } from './keys.js';
import { canSign } from '../strongname/pkcs11/signer.js';

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
   * folder, and one that cannot be fixed at all (native, a reference assembly, a refusal) is skipped, not refused,
   * with the files tied to it.
   */
  readonly list?: string;
  /** With `out`: write each changed file directly into the folder, under its file name (a build's references). */
  readonly flat?: boolean;
  /** Working directory for relative paths (default process.cwd()). */
  readonly cwd?: string;
}

export type FixFileOutcome = FixOutcome;

export interface FixFileResult {
  /** The input as shown (relative to the working directory, `/`-separated). */
  readonly path: string;
  readonly outcome: FixFileOutcome;
  /** The strong-name state before (absent for files that are not assemblies). */
  readonly before?: StrongNameState;
  /**
   * False when `before` is `signed` as the file's headers say it (a signature in its slot), the signature unchecked:
   * a file that stays as it is, whatever its signature, is decided from its headers and metadata and read no further
   * (`signgate verify` checks signatures). Absent otherwise.
   */
  readonly signatureVerified?: false;
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
  /** True when the changed files were written (not on a dry run). Refused files and the files tied to them are not. */
  readonly written: boolean;
  /**
   * Libraries without a strong name that files named on the command line reference but that are not among the
   * inputs: fix cannot strong-name them, so those references stay without a token (an error; the rest is fixed).
   */
  readonly missing: readonly MissingReference[];
}

/** A library without a strong name that inputs reference and that is not among them (SG_ERR_FIX_REFERENCE_MISSING). */
export interface MissingReference {
  /** Its simple name and version, as the references name it. */
  readonly name: string;
  readonly version: string;
  /** The inputs that reference it, as shown. */
  readonly referencedBy: readonly string[];
  readonly code: 'SG_ERR_FIX_REFERENCE_MISSING';
  /** What is missing, where the build found it when a deps.json beside a referencing file says, and what to do. */
  readonly message: string;
}

/** Hints for refusals, by code. */
const REFUSAL_HINTS: Record<string, string> = {
  SG_ERR_FIX_OTHER_PUBLISHER: 'pass --force to re-sign it with your key, or leave it out and rebuild it against the strong-named references',
  SG_ERR_PE_NO_ROOM: 'rebuild it with a current compiler, or ask its publisher for a strong-named build',
};

/**
 * Strong-names every assembly without a strong name among `paths` and updates the references of all of them.
 * @throws UsageError for options that cannot work, SG_ERR_NO_INPUT for paths that hold no assembly; KeyError for the key file
 */
export async function fix(options: FixOptions): Promise<FixResult> {
  const cwd = options.cwd ?? process.cwd();
  if (!options.key === !options.delaySign) {
    throw new UsageError(
      options.key
        ? '--key and --delay-sign exclude each other'
        : 'say which key gives the strong names: --key <pair.snk> or --delay-sign <optionId>_public.snk',
      "--key signs with your own key pair (sn -k); --delay-sign writes the public key for the vendor's service to sign.",
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
    throw new KeyError(
      'SG_ERR_KEY_NOT_PAIR',
      `${displayPath(keyPath, cwd)}: holds only a public key; --key needs the key pair (.snk from sn -k). To delay-sign for the vendor's service, pass it as --delay-sign`,
    );
  }
  const { inputs, listed } = await fixInputs(options, cwd);
  const identity = identityPublicKey(key, options.hash);
  const { entries, plan } = planFix(inputs, options.force === true, listed);
  const { strongNamed, satellites } = plan;
  const assemblies = entries.filter((e): e is AssemblyEntry => e.kind === 'assembly');
  // The key each assembly carries after the fix: ours when it gets a strong name, else the one it has.
  const keyAfter = (e: AssemblyEntry): Uint8Array | undefined =>
    strongNamed.has(e.name.toLowerCase()) ? identity : e.publicKey.length > 0 ? e.publicKey : undefined;
  const identities = new Map([...strongNamed].map((name) => [name, identity] as const));
  const fixOne = (entry: AssemblyEntry): FixRow => {
    const satellite = satellites.get(entry);
    const identityKey = satellite?.main ? keyAfter(satellite.main) : undefined;
    if (staysAsItIs(entry, strongNamed, key, options.force === true)) {
      // Decided from the headers and metadata: the file is not read further.
      const token = publicKeyToken(entry.publicKey);
      const r: StrongNameAssemblyResult = {
        bytes: entry.bytes,
        outcome: 'unchanged',
        before: entry.before,
        name: entry.name,
        publicKeyToken: token,
        changes: [],
        notes: [],
      };
      const notes = satelliteNotes(entry, satellite, identityKey, false, r);
      return {
        entry,
        input: entry.input,
        path: entry.input.displayPath,
        outcome: 'unchanged',
        ...beforeOf(entry),
        name: entry.name,
        publicKeyToken: token,
        changes: [],
        notes,
      };
    }
    try {
      const r = strongNameAssembly(wholeBytes(entry), {
        key,
        delaySign: options.delaySign !== undefined,
        hash: options.hash,
        identities,
        force: options.force,
        ...(identityKey ? { identityKey } : {}),
      });
      const notes = [...r.notes, ...satelliteNotes(entry, satellite, identityKey, identityKey !== undefined && !Buffer.from(identityKey).equals(identity), r)];
      return {
        entry,
        input: entry.input,
        path: entry.input.displayPath,
        outcome: r.outcome,
        before: r.before,
        name: r.name,
        publicKeyToken: r.publicKeyToken,
        changes: r.changes,
        notes,
        bytes: r.bytes,
      };
    } catch (error) {
      if (!isSignGateError(error) || error.code === 'SG_ERR_INTERNAL') throw error;
      const hint = REFUSAL_HINTS[error.code];
      const message = hint ? `${error.message} (${hint})` : error.message;
      return {
        entry,
        input: entry.input,
        path: entry.input.displayPath,
        outcome: listed.has(entry.input.absolutePath) ? 'skipped' : 'refused',
        failed: true,
        ...beforeOf(entry),
        name: entry.name,
        changes: [],
        notes: [],
        reason: { code: error.code, message },
      };
    }
  };
  let rows: FixRow[] = entries.map((entry) =>
    entry.kind === 'assembly'
      ? fixOne(entry)
      : {
          input: entry.input,
          path: entry.input.displayPath,
          outcome: entry.kind,
          failed: entry.unreadable === true,
          changes: [],
          notes: [],
          reason: entry.reason,
          ...(entry.before ? { before: entry.before } : {}),
        },
  );
  // A file that could not be fixed takes with it every file whose fix depends on it, and every file it depends on:
  // a fixed file naming it by a token it does not carry, or it naming a fixed file without that file's new token.
  // The other parts of the set name none of these (a name would join them to the part), so they are fixed as planned.
  const blocked = blockedByRefusals(rows, entries, plan);
  rows = rows.map((row) => {
    const why = blocked.get(row);
    if (!why) return row;
    const outcome: FixFileOutcome = listed.has(row.input.absolutePath) ? 'skipped' : 'refused';
    return { ...row, outcome, bytes: undefined, changes: [], notes: [], reason: { code: 'SG_ERR_FIX_DEPENDENCY_REFUSED', message: why } };
  });
  const root = commonFolder(rows.map((r) => r.input.absolutePath));
  const targetOf = (input: InputFile) =>
    options.inPlace
      ? input.absolutePath
      : options.flat
        ? join(resolve(cwd, options.out!), basename(input.absolutePath))
        : join(resolve(cwd, options.out!), relative(root, input.absolutePath));
  const write = !options.dryRun;
  if (write && options.flat) {
    const seen = new Map<string, string>();
    for (const r of rows) {
      if (!r.bytes || !changesOutcome(r.outcome)) continue;
      const name = basename(r.input.absolutePath).toLowerCase();
      const other = seen.get(name);
      if (other)
        throw new UsageError(
          `${other} and ${r.path} would both be written as ${basename(r.input.absolutePath)} (--flat)`,
          'Leave out --flat to keep their folders, or fix them in two runs.',
        );
      seen.set(name, r.path);
    }
  }
  const files: FixFileResult[] = [];
  for (const { input, bytes, entry: _entry, failed: _failed, ...result } of rows) {
    if (!write || !bytes || !changesOutcome(result.outcome)) {
      files.push(result);
      continue;
    }
    const target = targetOf(input);
    mkdirSync(dirname(target), { recursive: true });
    writeFileAtomic(target, bytes);
    files.push({ ...result, writtenTo: displayPath(target, cwd) });
  }
  const missing = missingReferences(assemblies, entries, listed);
  return { files, publicKeyToken: publicKeyToken(identity), delaySigned: options.delaySign !== undefined, written: write, missing };
}

/**
 * The libraries without a strong name that the assemblies named on the command line (not those a --list adds: a
 * build's references need not be complete) reference and that no input is: by name, or by file name for an input
 * that could not be read. Each with where the build resolved it from when a deps.json beside a referencing file says.
 */
function missingReferences(assemblies: readonly AssemblyEntry[], entries: readonly PlanEntry[], listed: ReadonlySet<string>): MissingReference[] {
  const present = new Set(entries.map((e) => (e.kind === 'assembly' ? e.name : parse(e.input.absolutePath).name).toLowerCase()));
  const byName = new Map<string, { name: string; version: string; referencedBy: InputFile[] }>();
  for (const e of assemblies) {
    if (listed.has(e.input.absolutePath)) continue;
    for (const r of e.unsignedReferences) {
      if (present.has(r.name.toLowerCase())) continue;
      const m = byName.get(r.name.toLowerCase()) ?? { name: r.name, version: r.version, referencedBy: [] };
      m.referencedBy.push(e.input);
      byName.set(r.name.toLowerCase(), m);
    }
  }
  if (byName.size === 0) return [];
  const folders = buildFolders(assemblies.filter((e) => !listed.has(e.input.absolutePath)).map((e) => e.input));
  return [...byName.values()].map(({ name, version, referencedBy }) => {
    const first = referencedBy[0]!;
    const folder = folders.find((f) => f.folder === shownFolder(first.displayPath));
    const resolved = folder?.resolved.find((d) => d.name.toLowerCase() === name.toLowerCase());
    const by = referencedBy.map((i) => i.displayPath);
    const found = `${by.join(', ')} reference${by.length === 1 ? 's' : ''} ${name}, Version=${version}, which has no strong name`;
    const shown = folder?.folder ?? shownFolder(first.displayPath);
    const message = folder?.assemblies.includes(name.toLowerCase())
      ? `${found}, and it is not among the inputs, though ${shown} holds a ${name} file: ` +
        `give fix the folder ${folderArgument(first.displayPath)}, or that file too`
      : `${found}, and ${name}.dll is not among the inputs (nor in ${shown}): ${resolvedFrom(resolved)}. ` +
        copyLocalHint(name, folderArgument(first.displayPath), resolved, 'run this fix again');
    return { name, version, referencedBy: by, code: 'SG_ERR_FIX_REFERENCE_MISSING', message };
  });
}

/** The state planning read from the headers, and that its signature was not checked when that matters. */
function beforeOf(entry: AssemblyEntry): { before: StrongNameState; signatureVerified?: false } {
  return entry.before === 'signed' ? { before: entry.before, signatureVerified: false } : { before: entry.before };
}

/** The whole file of an entry, read now unless planning read it whole (the same bytes that were planned on). */
function wholeBytes(entry: AssemblyEntry): Uint8Array {
  if (entry.parts.whole) return entry.bytes;
  const bytes = entry.parts.file.read();
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

/** One file's result while the set is decided: its plan entry and new bytes beside what is reported. */
type FixRow = FixFileResult & { bytes?: Uint8Array; input: InputFile; entry?: AssemblyEntry; failed?: boolean };

/** The inputs: paths as on the command line, then the listed files (not explicit), without duplicates. */
async function fixInputs(options: FixOptions, cwd: string): Promise<{ inputs: InputFile[]; listed: Set<string> }> {
  const named = options.paths.length > 0 ? await expandInputs(options.paths, cwd) : [];
  // Paths that name no assembly are a mistake; a build's list of references (--list alone) may be empty.
  if (options.paths.length > 0 && named.length === 0) throw noAssembliesError(options.paths, cwd);
  if (!options.list) return { inputs: named, listed: new Set() };
  const listPath = resolve(cwd, options.list);
  const lines = readInputFile(listPath, displayPath(listPath, cwd))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  const listedFiles =
    lines.length > 0
      ? await expandInputs(
          lines.map((l) => resolve(dirname(listPath), l)),
          cwd,
        )
      : [];
  const seen = new Set(named.map((f) => f.absolutePath));
  const extra = listedFiles.filter((f) => !seen.has(f.absolutePath)).map((f) => ({ ...f, explicit: false }));
  return { inputs: [...named, ...extra], listed: new Set(extra.map((f) => f.absolutePath)) };
}

/** An assembly of the set as planning read it: its facts, and the parts of its file that were read. */
type AssemblyEntry = PlannedAssembly & {
  readonly input: InputFile;
  /** The parts of the file planning read (its headers and metadata), or the whole file when it is small. */
  readonly bytes: Uint8Array;
  readonly parts: AssemblyParts;
};

type PlanEntry = AssemblyEntry | (PlannedOther & { readonly input: InputFile });

/**
 * Reads every input's headers and metadata (a small file whole) and decides which assemblies get a strong name:
 * those without one, and (with `force`) those of another publisher that reference one of them, and so on. A file found in a folder that is not an assembly
 * to fix (native, a netmodule, a reference assembly) is skipped; named on its own, it is refused. A file that cannot
 * be read is refused, or skipped when it is among `listed` (absolute paths of the files a --list gave).
 */
export function planFix(inputs: readonly InputFile[], force: boolean, listed?: ReadonlySet<string>): { entries: PlanEntry[]; plan: SetPlan<AssemblyEntry> } {
  const entries: PlanEntry[] = [];
  for (const input of inputs) {
    const parts = readAssemblyParts(input.absolutePath, input.displayPath);
    try {
      const read = assemblyFacts(parsePeImage(parts.bytes), (image) => parts.metadata(image), parts.whole);
      if ('notToFix' in read) entries.push({ kind: input.explicit ? 'refused' : 'skipped', input, reason: read.notToFix });
      else entries.push({ kind: 'assembly', input, bytes: parts.bytes, parts, ...read.facts });
    } catch (error) {
      if (!isSignGateError(error)) throw error;
      // A file that cannot be read is refused even in a folder (skipped when listed), and so is what refers to it.
      entries.push({
        kind: listed?.has(input.absolutePath) ? 'skipped' : 'refused',
        input,
        reason: { code: error.code, message: error.message },
        unreadable: true,
      });
    } finally {
      parts.close();
    }
  }
  return {
    entries,
    plan: planSet(
      entries.filter((e): e is AssemblyEntry => e.kind === 'assembly'),
      force,
    ),
  };
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
