// The plan of `signgate fix`, without a file system: what each assembly of a set is as its headers and metadata say,
// which assemblies get a strong name, which may stay as they are without being read whole, what the report says of
// a satellite assembly, and which files a refusal takes with it. workflows/fix.ts reads the files, runs the writer
// (strong-name-writer.ts) on each and writes the results.
import { parse } from 'node:path';
import { hasCorHeader } from '../pe/cor-header.js';
import { parsePeImage, type PeImage } from '../pe/pe-image.js';
import { formatVersion, ModuleMetadata } from '../metadata/module-metadata.js';
import { parsePublicKeyBlob, sameRsaKey, type StrongNameKeyFile } from './key-blob.js';
import { publicKeyToken } from './key-token.js';
import { classifyStrongName, SIGNATURE_KEY_ATTRIBUTE, type StrongNameState } from './strong-name.js';
import { friendNames, unfixableReason, type StrongNameAssemblyResult, type StrongNameNote, type StrongNameOutcome } from './strong-name-writer.js';
import { checkWellFormed } from './well-formed.js';

/** What becomes of one file of the set. */
export type FixOutcome = StrongNameOutcome | 'skipped' | 'refused';

/** True for the outcomes that change the file (and so are written). */
export const changesOutcome = (outcome: FixOutcome): boolean => outcome !== 'unchanged' && outcome !== 'skipped' && outcome !== 'refused';

/** An input of the set as the plan needs it: where it is, as shown, and whether it was named on its own. */
export interface PlanInput {
  readonly absolutePath: string;
  readonly displayPath: string;
  /** Named on the command line (not found in a folder): a file that is not an assembly to fix is refused, not skipped. */
  readonly explicit: boolean;
}

/** What the plan knows of an assembly from its headers and metadata. */
export interface AssemblyFacts {
  readonly name: string;
  /** Read from the headers; the signature is not verified (see assemblyFacts). */
  readonly before: StrongNameState;
  /** The Assembly row's culture ('' when neutral). */
  readonly culture: string;
  /** The public key blob it carries (empty without one). */
  readonly publicKey: Uint8Array;
  /** Simple names of its AssemblyRefs. */
  readonly references: readonly string[];
  /** Its AssemblyRefs without a public key token, with their versions. */
  readonly unsignedReferences: readonly { readonly name: string; readonly version: string }[];
  /** The friends its InternalsVisibleTo name without a key. */
  readonly friends: readonly string[];
  /** It has a `*.g.resources` resource (compiled XAML), which fix notes. */
  readonly baml: boolean;
  /** It carries AssemblySignatureKeyAttribute (enhanced strong naming), which fix refuses to rewrite. */
  readonly signatureKeyAttribute: boolean;
}

/** An assembly of the set, with its input. */
export interface PlannedAssembly extends AssemblyFacts {
  readonly kind: 'assembly';
  readonly input: PlanInput;
}

/** A file of the set that is not an assembly to fix, or that could not be read. */
export interface PlannedOther {
  readonly kind: 'skipped' | 'refused';
  readonly input: PlanInput;
  readonly reason: { readonly code: string; readonly message: string };
  readonly before?: StrongNameState;
  /** It could not be read: the set cannot tell what it is, and its file name stands for it. */
  readonly unreadable?: boolean;
}

/**
 * What an image is to fix: its facts, or why it is not an assembly to fix (native, a netmodule, a reference assembly).
 * `metadataOf` reads the image's metadata (it is not asked for a native image); `whole` says the image holds the
 * whole file, whose one verdict (checkWellFormed) is then given here; a file read in parts gets it when it is read
 * whole to be fixed.
 * @throws FormatError (a SignGateError) for an image or metadata that cannot be read
 */
export function assemblyFacts(
  image: PeImage,
  metadataOf: (image: PeImage) => ModuleMetadata,
  whole: boolean,
): { readonly facts: AssemblyFacts } | { readonly notToFix: { readonly code: string; readonly message: string } } {
  if (!hasCorHeader(image))
    return { notToFix: { code: 'SG_ERR_FIX_NOT_MANAGED', message: 'a native PE image, not a .NET assembly: it has no strong name to give' } };
  const module = metadataOf(image);
  if (whole) checkWellFormed(module);
  const unfixable = unfixableReason(module);
  if (unfixable) return { notToFix: unfixable };
  const assembly = module.assembly!;
  return {
    facts: {
      name: assembly.name,
      // The signature is not verified here: what becomes of a file that has one does not depend on it, but for one
      // of the key given (signed now unless it verifies) and with `force` (an invalid one is re-signed), decided by
      // strongNameAssembly over the whole file.
      before: classifyStrongName(module, { verify: false }).state,
      culture: assembly.culture,
      publicKey: assembly.publicKey,
      references: module.assemblyReferences.map((r) => r.name),
      unsignedReferences: module.assemblyReferences
        .filter((r) => r.publicKeyOrToken.length === 0)
        .map((r) => ({ name: r.name, version: formatVersion(r.version) })),
      friends: friendNames(module),
      baml: module.manifestResources.some((r) => /\.g\.resources$/i.test(r.name)),
      signatureKeyAttribute: module.assemblyAttributes.some((a) => a.typeName === SIGNATURE_KEY_ATTRIBUTE),
    },
  };
}

/** A satellite assembly's main assembly: its name, and its entry when it is in the set. */
export interface SatelliteOf<A extends PlannedAssembly> {
  readonly mainName: string;
  readonly main?: A;
}

/** The decisions over the whole set. */
export interface SetPlan<A extends PlannedAssembly> {
  /** Lower-case simple names of the assemblies that get a strong name. */
  readonly strongNamed: ReadonlySet<string>;
  /** The set's assemblies by lower-case simple name. */
  readonly byName: ReadonlyMap<string, readonly A[]>;
  /** Each satellite assembly's main assembly. */
  readonly satellites: ReadonlyMap<A, SatelliteOf<A>>;
}

/**
 * Decides which assemblies get a strong name: those without one, and (with `force`) those of another publisher
 * that reference one of them, and so on. Also which assemblies are satellites of which.
 */
export function planSet<A extends PlannedAssembly>(assemblies: readonly A[], force: boolean): SetPlan<A> {
  const strongNamed = new Set<string>();
  for (const a of assemblies) if (a.before === 'unsigned') strongNamed.add(a.name.toLowerCase());
  if (force) {
    // Another publisher's assembly that must change is re-signed with our key: its own referencers follow it.
    for (let grew = true; grew; ) {
      grew = false;
      for (const a of assemblies) {
        if (strongNamed.has(a.name.toLowerCase())) continue;
        if (a.before !== 'signed' && a.before !== 'invalid-signature') continue;
        if (a.references.some((r) => strongNamed.has(r.toLowerCase()))) {
          strongNamed.add(a.name.toLowerCase());
          grew = true;
        }
      }
    }
  }
  const byName = new Map<string, A[]>();
  for (const a of assemblies) byName.set(a.name.toLowerCase(), [...(byName.get(a.name.toLowerCase()) ?? []), a]);
  const satellites = new Map<A, SatelliteOf<A>>();
  for (const a of assemblies) {
    const mainName = satelliteOf(a);
    const main = mainName ? byName.get(mainName.toLowerCase())?.[0] : undefined;
    if (mainName) satellites.set(a, { mainName, ...(main ? { main } : {}) });
  }
  return { strongNamed, byName, satellites };
}

/** The main assembly's simple name when `a` is a satellite assembly (a culture, and named `<Main>.resources`). */
function satelliteOf(a: AssemblyFacts): string | undefined {
  if (a.culture === '' || a.culture.toLowerCase() === 'neutral') return undefined;
  const match = /^(.+)\.resources$/i.exec(a.name);
  return match ? match[1] : undefined;
}

/**
 * True when strongNameAssembly would leave the file as it is whatever its signature holds, so that it need not be
 * read whole: it has a public key that is not `key`'s (whose signature would decide whether it is signed now), it
 * gets no new key, names no assembly that does (by reference or as a friend), names no friend without a key (a
 * note), has no compiled XAML (a note) and no AssemblySignatureKeyAttribute (refused). With `force` the state of
 * every signature decides (an invalid one is re-signed): every file is read.
 */
export function staysAsItIs(a: AssemblyFacts, strongNamed: ReadonlySet<string>, key: StrongNameKeyFile, force: boolean): boolean {
  if (force || a.publicKey.length === 0 || strongNamed.has(a.name.toLowerCase())) return false;
  if (a.friends.length > 0 || a.baml || a.signatureKeyAttribute) return false;
  if (a.references.some((r) => strongNamed.has(r.toLowerCase()))) return false;
  try {
    return !sameRsaKey(parsePublicKeyBlob(a.publicKey), key.publicKey);
  } catch {
    return false; // a key the writer must judge
  }
}

/**
 * What the report says of a satellite assembly: that it took its main assembly's key where that is not the key given,
 * that its token is not its main assembly's, or that its main assembly is not there. `identityKey` is the key its
 * main assembly carries after the fix; `r` what the writer made of the satellite.
 */
export function satelliteNotes(
  a: AssemblyFacts,
  satellite: SatelliteOf<PlannedAssembly> | undefined,
  identityKey: Uint8Array | undefined,
  notTheKeyGiven: boolean,
  r: StrongNameAssemblyResult,
): StrongNameNote[] {
  if (!satellite) return [];
  const culture = a.culture;
  if (!satellite.main) {
    return [
      {
        kind: 'satellite',
        message: `a satellite assembly (culture ${culture}) whose main assembly ${satellite.mainName} is not among the inputs; the runtime finds a satellite by its main assembly's name, version and public key token, so it must carry its main assembly's key${r.publicKeyToken ? ` (it now carries token ${r.publicKeyToken})` : ''}. Give ${satellite.mainName} too`,
      },
    ];
  }
  const mainToken = identityKey ? publicKeyToken(identityKey) : null;
  if (r.publicKeyToken !== mainToken) {
    return [
      {
        kind: 'satellite',
        message: `a satellite assembly (culture ${culture}) with public key token ${r.publicKeyToken ?? 'null'}, but its main assembly ${satellite.main.name} ${mainToken ? `carries ${mainToken}` : 'has no strong name'}: the runtime will not find it. Rebuild it with its main assembly's key`,
      },
    ];
  }
  if (r.outcome === 'strong-named' && notTheKeyGiven) {
    const state = classifyStrongName(new ModuleMetadata(parsePeImage(r.bytes)), { verify: false }).state;
    return [
      {
        kind: 'satellite',
        message: `a satellite assembly (culture ${culture}): it takes the key of its main assembly ${satellite.main.name} (token ${mainToken}), as the runtime looks for it by that token${state === 'delay-signed' ? '; it is delay-signed, to be signed with that key as its main assembly is' : ''}`,
      },
    ];
  }
  return [];
}

/** A file's result as far as refusals need it. */
export interface RefusalRow {
  readonly path: string;
  readonly name?: string;
  readonly outcome: FixOutcome;
  /** It could not be fixed (or read). */
  readonly failed?: boolean;
}

/**
 * The files that must stay as they are because a file of theirs could not be fixed: the parts of the reference
 * graph (an AssemblyRef or InternalsVisibleTo naming an assembly that gets a strong name, a satellite and its main
 * assembly) that hold a refused file. Each, with the reason naming the refused files. `rows[i]` is the result of
 * `entries[i]`.
 */
export function blockedByRefusals<R extends RefusalRow, A extends PlannedAssembly>(
  rows: readonly R[],
  entries: readonly (A | PlannedOther)[],
  plan: SetPlan<A>,
): Map<R, string> {
  const parent = rows.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const union = (a: number, b: number) => (parent[find(a)] = find(b));
  const index = new Map<A | PlannedOther, number>(entries.map((e, i) => [e, i] as const));
  // A file that could not be read stands for the assembly its file name gives: the set cannot tell what it is.
  const unreadable = new Map<string, number[]>();
  entries.forEach((e, i) => {
    if (e.kind !== 'assembly' && e.unreadable) {
      const name = parse(e.input.absolutePath).name.toLowerCase();
      unreadable.set(name, [...(unreadable.get(name) ?? []), i]);
    }
  });
  entries.forEach((e, i) => {
    if (e.kind !== 'assembly') return;
    for (const name of [...e.references, ...e.friends].map((n) => n.toLowerCase())) {
      if (plan.strongNamed.has(name)) for (const other of plan.byName.get(name) ?? []) union(i, index.get(other)!);
      for (const j of unreadable.get(name) ?? []) union(i, j);
    }
    const main = plan.satellites.get(e as A)?.main;
    if (main) union(i, index.get(main)!);
  });
  const failedIn = new Map<number, R[]>();
  rows.forEach((row, i) => {
    if (row.failed) failedIn.set(find(i), [...(failedIn.get(find(i)) ?? []), row]);
  });
  const blocked = new Map<R, string>();
  rows.forEach((row, i) => {
    const failed = failedIn.get(find(i));
    if (!failed || row.failed || !changesOutcome(row.outcome)) return;
    const one = failed.length === 1;
    const which = failed.map((f) => (f.name ? `${f.name} (${f.path})` : f.path)).join(', ');
    blocked.set(
      row,
      `not fixed, because ${which} could not be (see ${one ? 'its error' : 'their errors'}): this file and ${one ? 'it' : 'they'} are tied by references, friends or a satellite's key, and fixing one without the other would leave a reference to a public key token that is not there. Fix or leave out ${one ? 'that file' : 'those files'} and run again`,
    );
  });
  return blocked;
}
