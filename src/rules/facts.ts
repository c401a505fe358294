// Reads every input once and decides which files must be uploaded and why (the set matters:
// use of the vendor API is transitive, and generated companions go with the assembly they serve).
import { isInputFault, isSignGateError, type SignGateError } from '../core/errors.js';
import { formatVersion, ModuleMetadata } from '../metadata/module-metadata.js';
import { hasCorHeader } from '../pe/cor-header.js';
import { parsePeImage } from '../pe/pe-image.js';
import { readAuthenticode, type AuthenticodeInfo } from '../authenticode/authenticode.js';
import { classifyStrongName, type StrongNameStatus } from '../strongname/strong-name.js';
import { sameKeyBlob } from '../strongname/key-blob.js';
import { knownKey } from '../strongname/known-keys.js';
import { readWellFormed, type WellFormedFile } from '../strongname/well-formed.js';
import { compileNamePatterns, type NameMatcher } from './name-pattern.js';
import { declaredIn } from './vendor-attribute.js';
import { TableId } from '../metadata/schema.js';
import type { FileRow } from '../metadata/module-metadata.js';
import type { CheckInput, CheckSettings, DeclaredVendorAttribute, ExpectedKey, FileFacts, FileRole, LinkedModule } from './types.js';
import { needsSigning } from './types.js';

const INTEROP_ATTRIBUTES = new Set([
  'System.Runtime.InteropServices.ImportedFromTypeLibAttribute',
  'System.Runtime.InteropServices.PrimaryInteropAssemblyAttribute',
]);

/**
 * What parsing one file tells about its place in the set: plain data, the same whether the file was parsed in
 * this thread or in a worker thread (see parsedData and fromParsedData).
 */
export interface ParsedFile {
  readonly readError: FileFacts['readError'];
  /** True for a PE image without a CLI header. */
  readonly native: boolean;
  /** True when the file has .NET metadata (an assembly or a netmodule). */
  readonly managed: boolean;
  readonly assemblyName: string | undefined;
  readonly assemblyVersion: string | undefined;
  readonly publicKeyToken: string | null;
  readonly culture: string;
  readonly referenceNames: readonly string[];
  /**
   * True for a COM interop assembly (ImportedFromTypeLib or PrimaryInteropAssembly); computed on first use. False
   * when the assembly attributes cannot be read: the rules report that error, the roles do not stop on it.
   */
  readonly interop: () => boolean;
  /** Vendor types this module references, other than the vendor attribute (Namespace.Type). */
  readonly vendorTypes: readonly string[];
  /** True when the vendor attribute's type is referenced from a vendor assembly. */
  readonly marked: boolean;
  /** File-table rows that name netmodules (ContainsMetaData), for a manifest module. */
  readonly fileRows: readonly FileRow[];
  /** The configured option whose public key the assembly carries, byte for byte (any strong-name state); else null. */
  readonly optionKey: { readonly optionId: number | null; readonly token: string } | null;
  /** For a vendor API assembly: the vendor attribute types it declares (messages name the type exactly). */
  readonly declaredVendorAttributes: readonly DeclaredVendorAttribute[];
}

/** A ParsedFile as it crosses between threads: `interop` computed, byte arrays copied out of the file's buffer. */
export type ParsedFileData = Omit<ParsedFile, 'interop'> & { readonly interop: boolean };

/** The structured-clonable form of a ParsedFile (a view into the file's bytes would clone the whole file). */
export function parsedData(p: ParsedFile): ParsedFileData {
  return { ...p, interop: p.interop(), fileRows: p.fileRows.map((r) => ({ ...r, hashValue: new Uint8Array(r.hashValue) })) };
}

export function fromParsedData(p: ParsedFileData): ParsedFile {
  const interop = p.interop;
  return { ...p, interop: () => interop };
}

/** Where a file stands in the set: its role and, for a manifest module, the netmodules matched to its File table. */
export interface Placement {
  readonly role: FileRole;
  readonly netmodules: readonly LinkedModule[];
}

/** FileAttributes.ContainsNoMetaData (II.23.1.6): a linked resource file, not a netmodule. */
const FILE_CONTAINS_NO_METADATA = 0x0001;

/** The folder part of a display path, with its trailing `/` ('' for a bare name). */
function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/') + 1);
}

/** TypeRefs into vendor assemblies: the attribute alone marks a file, any other type is use of the API. */
function vendorTypeUse(module: ModuleMetadata, isVendorApi: NameMatcher, attributeName: string): { types: string[]; marked: boolean } {
  const types: string[] = [];
  let marked = false;
  for (let rid = 1; rid <= module.tables.rowCount(TableId.TypeRef); rid++) {
    const info = module.typeRefInfo(rid);
    if (info.origin.kind !== 'assembly' || !isVendorApi(info.origin.name)) continue;
    if (info.fullName.split(/[./]/).pop() === attributeName) marked = true;
    else types.push(info.fullName);
  }
  return { types, marked };
}

/** The simple names of INTEROP_ATTRIBUTES, NUL-terminated as in #Strings (a name may be the tail of a longer entry). */
const INTEROP_NAMES = [...INTEROP_ATTRIBUTES].map((n) => Buffer.from(`${n.slice(n.lastIndexOf('.') + 1)}\0`));

/**
 * Whether #Strings holds the name of an interop attribute type: without it no TypeRef or TypeDef can name one, and
 * the assembly attributes need not be decoded (most files; a byte search costs far less than the decoding).
 */
function mayNameInterop(module: ModuleMetadata): boolean {
  const heap = module.root.strings;
  const bytes = module.image.bytes;
  if (!heap || heap.fileOffset >= bytes.length) return false;
  const strings = Buffer.from(bytes.buffer, bytes.byteOffset + heap.fileOffset, Math.min(heap.size, bytes.length - heap.fileOffset));
  return INTEROP_NAMES.some((name) => strings.includes(name));
}

function readsAsInterop(module: ModuleMetadata): boolean {
  if (!mayNameInterop(module)) return false;
  try {
    return module.assemblyAttributes.some((a) => INTEROP_ATTRIBUTES.has(a.typeName));
  } catch (error) {
    if (isSignGateError(error)) return false;
    throw error;
  }
}

/** The vendor attribute types a vendor API assembly declares; none when they cannot be read (they only sharpen a hint). */
function declarations(module: ModuleMetadata, name: string, settings: CheckSettings): DeclaredVendorAttribute[] {
  try {
    return declaredIn(module, name, settings);
  } catch (error) {
    if (isSignGateError(error)) return [];
    throw error;
  }
}

/** A file the verdict has read already, parsed again as it did (the same bytes: no check is made twice). */
function parseJudged(bytes: Uint8Array): WellFormedFile {
  const image = parsePeImage(bytes);
  return hasCorHeader(image) ? { native: false, image, module: new ModuleMetadata(image) } : { native: true, image };
}

/**
 * Reads the vendor settings a parse needs once per set.
 * @param judged true when these bytes had the verdict already (the engine's parse round gave it; a file read again
 *   is refused if it changed since): the metadata is parsed again without it
 */
export function fileParser(settings: CheckSettings, judged = false): (input: CheckInput) => { parsed: ParsedFile; module: ModuleMetadata | undefined } {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  const attributeName = `${settings.vendor}SignedAssemblyAttribute`;
  return (input) => parseFile(input, isVendorApi, attributeName, settings, judged);
}

/**
 * The settings of the per-file round: the vendor attribute types that the vendor API assemblies among the inputs
 * declare (read by their parse), before those of the references the settings bring (`--reference`).
 */
export function withInputDeclarations(settings: CheckSettings, parsed: readonly Pick<ParsedFile, 'declaredVendorAttributes'>[]): CheckSettings {
  const declared = parsed.flatMap((p) => p.declaredVendorAttributes);
  return declared.length ? { ...settings, declaredVendorAttributes: [...declared, ...(settings.declaredVendorAttributes ?? [])] } : settings;
}

/** The configured key whose blob is the assembly's public key, header included (as SG205 compares). */
function optionKeyOf(publicKey: Uint8Array | undefined, keys: readonly ExpectedKey[]): ParsedFile['optionKey'] {
  if (!publicKey?.length) return null;
  const key = keys.find((k) => sameKeyBlob(k.publicKey, publicKey));
  return key ? { optionId: key.optionId, token: key.token } : null;
}

/** A file's own fault as the facts carry it: the code, the message and where in the file, for SG001. */
export function readErrorOf(error: SignGateError): NonNullable<FileFacts['readError']> {
  const fileOffset = (error as { fileOffset?: number }).fileOffset;
  return { code: error.code, message: error.message, ...(fileOffset !== undefined && fileOffset >= 0 ? { fileOffset } : {}) };
}

/**
 * Parses one file: the per-file half of collectFacts (the roles need the whole set). A file that cannot be read
 * gets its error, never an exception; the module is returned beside the plain facts for the rules to read.
 */
function parseFile(
  input: CheckInput,
  isVendorApi: NameMatcher,
  attributeName: string,
  settings: CheckSettings,
  judged: boolean,
): { parsed: ParsedFile; module: ModuleMetadata | undefined } {
  const base = {
    readError: undefined,
    native: false,
    managed: false,
    assemblyName: undefined,
    assemblyVersion: undefined,
    publicKeyToken: null,
    culture: '',
    referenceNames: [],
    interop: () => false,
    vendorTypes: [],
    marked: false,
    fileRows: [],
    optionKey: null,
    declaredVendorAttributes: [],
  };
  try {
    // The one verdict (strongname/well-formed.ts): what inspect, audit, fix and the service refuse, SG001 refuses.
    const file = judged ? parseJudged(input.bytes) : readWellFormed(input.bytes);
    if (file.native) return { parsed: { ...base, native: true }, module: undefined };
    const module = file.module;
    const assembly = module.assembly;
    // Decoded once: every name is a #Strings read charged to the module's reader budget.
    const referenceNames = module.assemblyReferences.map((r) => r.name);
    const parsed: ParsedFile = {
      ...base,
      managed: true,
      assemblyName: assembly?.name,
      assemblyVersion: assembly ? formatVersion(assembly.version) : undefined,
      // The verdict parsed this key: its token comes from the same cache.
      publicKeyToken: assembly?.publicKey.length ? knownKey(assembly.publicKey).token : null,
      culture: assembly?.culture ?? '',
      referenceNames,
      fileRows: assembly ? module.files.filter((f) => (f.flags & FILE_CONTAINS_NO_METADATA) === 0) : [],
      optionKey: optionKeyOf(assembly?.publicKey, settings.keys),
      declaredVendorAttributes: assembly && isVendorApi(assembly.name) ? declarations(module, assembly.name, settings) : [],
      interop: (() => {
        let interop: boolean | undefined;
        return () => (interop ??= readsAsInterop(module));
      })(),
      // Only files that reference a vendor assembly can use its types: skip the TypeRef scan for the rest.
      ...(referenceNames.some(isVendorApi)
        ? (() => {
            const use = vendorTypeUse(module, isVendorApi, attributeName);
            return { vendorTypes: use.types, marked: use.marked };
          })()
        : {}),
    };
    return { parsed, module };
  } catch (error) {
    if (!isInputFault(error)) throw error;
    return { parsed: { ...base, readError: readErrorOf(error) }, module: undefined };
  }
}

/**
 * Classifies every parsed file (in the order of the inputs): vendor API assemblies, direct users of the vendor
 * API, companions (XmlSerializers, COM interop, satellites) of files that need signing, indirect users
 * (referencing a file that needs signing, at any depth), and the rest (not required).
 */
export function placeFiles(inputs: readonly CheckInput[], parsedFiles: readonly ParsedFile[], settings: CheckSettings): Placement[] {
  const isVendorApi = compileNamePatterns(settings.vendorApi);
  type Parsed = ParsedFile & { readonly input: CheckInput };
  const parsed: Parsed[] = inputs.map((input, i) => ({ ...parsedFiles[i]!, input }));
  const roles = new Map<Parsed, FileRole>();
  // Netmodules belong to the assembly whose File table lists them, in the same folder (II.22.19: the name is a
  // bare file name, relative to the manifest module; compared case-insensitively, as Windows does).
  const netmoduleAt = new Map<string, Parsed>();
  for (const p of parsed) if (p.managed && !p.assemblyName) netmoduleAt.set(p.input.path.toLowerCase(), p);
  const ownerOf = new Map<Parsed, Parsed>();
  const linked = new Map<Parsed, { row: FileRow; module: Parsed | undefined }[]>();
  for (const p of parsed) {
    const links = p.fileRows.map((row) => {
      const module = netmoduleAt.get(`${folderOf(p.input.path)}${row.name}`.toLowerCase());
      if (module && !ownerOf.has(module)) ownerOf.set(module, p);
      return { row, module };
    });
    linked.set(p, links);
  }
  /** Modules of an assembly that are among the inputs (and were not claimed by another assembly first). */
  const modulesOf = (p: Parsed) => (linked.get(p) ?? []).flatMap((l) => (l.module && ownerOf.get(l.module) === p ? [l.module] : []));
  // An assembly uses what its modules use: their references and vendor types count for it.
  const referencesOf = (p: Parsed) => [...new Set([...p.referenceNames, ...modulesOf(p).flatMap((m) => m.referenceNames)])];
  const vendorTypesOf = (p: Parsed) => [...new Set([...p.vendorTypes, ...modulesOf(p).flatMap((m) => m.vendorTypes)])];
  const byName = new Map<string, Parsed[]>();
  for (const p of parsed) {
    if (!p.assemblyName) continue;
    const key = p.assemblyName.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), p]);
  }
  // Vendor assemblies and direct users first.
  for (const p of parsed) {
    if (p.readError) roles.set(p, { kind: 'unreadable' });
    else if (p.native) roles.set(p, { kind: 'not-required', why: 'native code (no CLI header)' });
    else if (!p.assemblyName) {
      const owner = ownerOf.get(p);
      roles.set(
        p,
        owner
          ? { kind: 'module', moduleOf: owner.assemblyName!, manifest: owner.input.path }
          : {
              kind: 'not-required',
              why: 'a netmodule (no assembly manifest), and no input assembly lists it in its File table; it belongs to the assembly that does',
            },
      );
    } else if (isVendorApi(p.assemblyName)) roles.set(p, { kind: 'vendor' });
    else if (vendorTypesOf(p).length > 0) {
      roles.set(p, { kind: 'direct', vendorReferences: referencesOf(p).filter(isVendorApi), vendorTypes: vendorTypesOf(p) });
    }
  }
  // Companions and indirect users, until nothing changes.
  const chain = (p: Parsed): string[] => {
    const role = roles.get(p);
    return role?.kind === 'indirect' ? [p.assemblyName!, ...role.via] : [p.assemblyName!];
  };
  for (let changed = true; changed; ) {
    changed = false;
    // Per pass: the files that need signing, and which of them references each assembly name.
    const signing = new Set(parsed.filter((p) => needsSigning(roles.get(p) ?? { kind: 'unreadable' })));
    const userOf = new Map<string, Parsed>();
    for (const q of signing) for (const r of referencesOf(q)) if (!userOf.has(r.toLowerCase())) userOf.set(r.toLowerCase(), q);
    const signingByName = (name: string) => byName.get(name)?.find((q) => signing.has(q));
    for (const p of parsed) {
      if (roles.has(p) || !p.assemblyName) continue;
      const name = p.assemblyName.toLowerCase();
      const serves = (suffix: string) => (name.endsWith(suffix) ? signingByName(name.slice(0, -suffix.length)) : undefined);
      const xml = serves('.xmlserializers');
      const satellite = p.culture ? serves('.resources') : undefined;
      const user = userOf.get(name);
      const interopUser = user && p.interop() ? user : undefined;
      const referenced = referencesOf(p)
        .map((r) => signingByName(r.toLowerCase()))
        .find((q) => q !== undefined);
      let role: FileRole | undefined;
      if (xml) role = { kind: 'companion', companionOf: xml.assemblyName!, companion: 'xml-serializers' };
      else if (satellite) role = { kind: 'companion', companionOf: satellite.assemblyName!, companion: 'satellite' };
      else if (interopUser) role = { kind: 'companion', companionOf: interopUser.assemblyName!, companion: 'com-interop' };
      else if (referenced) role = { kind: 'indirect', via: chain(referenced) };
      if (role) {
        roles.set(p, role);
        changed = true;
      }
    }
  }
  // Files that carry the vendor attribute but neither use the API nor serve a file that does. (A netmodule's
  // attribute does not mark its assembly: the runtime reads assembly attributes from the manifest.)
  for (const p of parsed) if (!roles.has(p) && p.marked) roles.set(p, { kind: 'marked' });
  // The rest that carry an option's public key (a dependency delay-signed by `fix --delay-sign`): only the service
  // can sign them, and .NET Framework loads them only signed, so they are uploaded too. Placed last, they make no
  // file that references them an API user: they use no vendor API themselves.
  for (const p of parsed) if (!roles.has(p) && p.optionKey) roles.set(p, { kind: 'option-key', ...p.optionKey });
  return parsed.map((p) => ({
    role: roles.get(p) ?? { kind: 'not-required', why: 'uses no vendor API, directly or through the add-in' },
    netmodules: (linked.get(p) ?? []).map(
      (l): LinkedModule => ({ row: l.row, path: l.module && ownerOf.get(l.module) === p ? l.module.input.path : undefined }),
    ),
  }));
}

/**
 * The facts the rules read about one file. `module` is the parsed metadata when at hand, or a function that
 * parses it on first use (facts rebuilt in another thread, or on the main thread after a pooled parse).
 */
export function fileFacts(
  input: CheckInput,
  parsed: ParsedFile,
  placement: Placement,
  module: ModuleMetadata | undefined | (() => ModuleMetadata | undefined),
): FileFacts {
  let loaded = typeof module === 'function' ? null : module;
  let status: StrongNameStatus | undefined;
  let authenticode: AuthenticodeInfo | undefined;
  const facts: FileFacts = {
    input,
    get module() {
      if (loaded === null) loaded = (module as () => ModuleMetadata | undefined)();
      return loaded;
    },
    readError: parsed.readError,
    native: parsed.native,
    assemblyName: parsed.assemblyName,
    assemblyVersion: parsed.assemblyVersion,
    publicKeyToken: parsed.publicKeyToken,
    optionKey: parsed.optionKey,
    culture: parsed.culture,
    referenceNames: parsed.referenceNames,
    netmodules: placement.netmodules,
    role: placement.role,
    status: () => (status ??= classifyStrongName(facts.module!)),
    authenticode: () => (authenticode ??= readAuthenticode(facts.module!.image)),
  };
  return facts;
}

/**
 * The facts of a file whose own fault (`error`) surfaced past its parse: the file judged as one that cannot be read,
 * so that its finding is SG001 with that error and no rule reads it again.
 */
export function unreadableFacts(facts: FileFacts, error: SignGateError): FileFacts {
  return {
    ...facts,
    module: undefined,
    readError: readErrorOf(error),
    native: false,
    role: { kind: 'unreadable' },
    status: () => {
      throw error;
    },
    authenticode: () => {
      throw error;
    },
  };
}

/**
 * Parses every input and classifies it (see placeFiles), in this thread: the facts every rule shares, by
 * display path.
 */
export function collectFacts(inputs: readonly CheckInput[], settings: CheckSettings): Map<string, FileFacts> {
  const parse = fileParser(settings);
  const parsed = inputs.map(parse);
  const placements = placeFiles(
    inputs,
    parsed.map((p) => p.parsed),
    settings,
  );
  const facts = new Map<string, FileFacts>();
  inputs.forEach((input, i) => facts.set(input.path, fileFacts(input, parsed[i]!.parsed, placements[i]!, parsed[i]!.module)));
  return facts;
}

/** A one-line reason for a role, as reports show it. */
export function describeRole(role: FileRole): string {
  switch (role.kind) {
    case 'direct': {
      const shown = role.vendorTypes.slice(0, 3).join(', ') + (role.vendorTypes.length > 3 ? ', …' : '');
      return `uses the vendor API directly (${shown} from ${role.vendorReferences.join(', ')})`;
    }
    case 'marked':
      return 'carries the vendor attribute (uses no other vendor type)';
    case 'indirect':
      return `uses the vendor API indirectly (via ${role.via.join(' → ')})`;
    case 'companion':
      return `${role.companion === 'xml-serializers' ? 'XmlSerializers' : role.companion === 'satellite' ? 'satellite resource' : 'COM interop'} companion of ${role.companionOf}`;
    case 'option-key':
      return `carries the public key of ${role.optionId !== null ? `option ${role.optionId}` : 'the organization'} (token ${role.token}), though it uses no vendor API: only the service's signature makes it validly signed`;
    case 'module':
      return `a netmodule of ${role.moduleOf} (listed in the File table of ${role.manifest}); uploaded with it, not signed itself`;
    case 'vendor':
      return 'a vendor API assembly (comes from the vendor; never uploaded)';
    case 'not-required':
      return `not required: ${role.why}`;
    case 'unreadable':
      return 'refused: outside what signgate reads and signs (SG001)';
  }
}
