// Everything `signgate inspect` reports about one file, built from the PE, metadata and strong-name layers.
// Never throws for bad bytes: a file that cannot be read yields `error` with a stable code.
import { SignGateError, isInputFault, isSignGateError } from '../core/errors.js';
import type { AttributeArgument, NamedAttributeArgument } from '../metadata/custom-attribute-value.js';
import type { ReaderBudgets } from '../metadata/budget.js';
import { formatVersion, ModuleMetadata } from '../metadata/module-metadata.js';
import { computePeChecksum } from '../pe/checksum.js';
import { CorFlags, hasCorHeader } from '../pe/cor-header.js';
import { getCertificateTable, getOverlay, parsePeImage, type PeImage } from '../pe/pe-image.js';
import { classifyStrongName, type StrongNameDetail, type StrongNameState, type VerifyOptions } from './strong-name.js';
import { referenceToken } from './key-token.js';
import { knownKey } from './known-keys.js';
import { checkWellFormed, readWellFormed } from './well-formed.js';
import type { HashAlgorithm } from './key-blob.js';
import { toHex } from '../binary/byte-cursor.js';
import { TableId } from '../metadata/schema.js';
import { readAuthenticode, type AuthenticodeInfo, type AuthenticodeOptions } from '../authenticode/authenticode.js';

export const MACHINE_NAMES: Record<number, string> = { 0x14c: 'i386', 0x8664: 'x64', 0xaa64: 'arm64', 0x1c4: 'arm', 0x200: 'ia64' };

export interface AttributeInfo {
  /** Namespace.Outer/Inner */
  readonly type: string;
  /** Name of the defining assembly, or null when the type is defined in this module. */
  readonly assembly: string | null;
  /** Where the attribute is applied. */
  readonly target: 'assembly' | 'module';
  readonly arguments: readonly AttributeArgument[] | null;
  readonly namedArguments: readonly NamedAttributeArgument[] | null;
  /** Hex of the constructor signature blob (e.g. "20010102" for a ctor taking one bool). */
  readonly constructorSignature: string | null;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface ReferenceInfo {
  readonly name: string;
  readonly version: string;
  readonly culture: string;
  readonly publicKeyToken: string | null;
}

export interface AssemblyInfo {
  readonly path: string;
  readonly size: number;
  readonly managed: boolean;
  readonly error: { readonly code: string; readonly message: string; readonly fileOffset?: number } | null;
  readonly pe: {
    readonly format: 'PE32' | 'PE32+';
    readonly machine: string;
    readonly kind: 'dll' | 'exe';
    readonly timeDateStamp: number;
    readonly checkSum: number;
    readonly checkSumValid: boolean;
    readonly authenticode: boolean;
    readonly overlayBytes: number;
  } | null;
  readonly cli: {
    readonly runtimeVersion: string;
    readonly metadataVersion: string;
    readonly flags: number;
    readonly ilOnly: boolean;
    readonly requires32Bit: boolean;
    readonly prefers32Bit: boolean;
    readonly ilLibrary: boolean;
    readonly strongNameSignedFlag: boolean;
  } | null;
  readonly module: { readonly name: string; readonly mvid: string | null; readonly hasManifest: boolean } | null;
  readonly assembly: {
    readonly name: string;
    readonly version: string;
    readonly culture: string;
    readonly flags: number;
    readonly hashAlgId: number;
    readonly publicKey: string | null;
    readonly publicKeyToken: string | null;
    /** Hash algorithm of the strong-name signature, from the public key blob's HashAlgID. */
    readonly hashAlgorithm: HashAlgorithm | null;
  } | null;
  readonly strongName: {
    readonly state: StrongNameState;
    readonly details: readonly StrongNameDetail[];
    readonly description: string;
    readonly flagSet: boolean;
    readonly slotSize: number | null;
    readonly keyBits: number | null;
    readonly hashAlgorithm: HashAlgorithm | null;
    readonly signatureValid: boolean | null;
  } | null;
  readonly attributes: readonly AttributeInfo[];
  readonly references: readonly ReferenceInfo[];
  /** The Authenticode signatures, read and verified; null when the file is not a PE image. */
  readonly authenticode: AuthenticodeInfo | null;
}

export interface InspectOptions extends VerifyOptions {
  /** Verify non-empty signatures cryptographically (default true). */
  readonly verify?: boolean;
  /** Decode attribute arguments (default true). */
  readonly decodeAttributes?: boolean;
  /** Reader budgets for the module; unset fields take DEFAULT_READER_BUDGETS. */
  readonly budgets?: Partial<ReaderBudgets>;
  /** Options for reading the Authenticode signatures (a trust store, limits). */
  readonly authenticode?: AuthenticodeOptions;
  /** Read and verify the Authenticode signatures (default true); false leaves `authenticode` null. */
  readonly readAuthenticode?: boolean;
}

function errorInfo(error: unknown): { code: string; message: string; fileOffset?: number } {
  if (isSignGateError(error)) {
    const fileOffset = (error as { fileOffset?: number }).fileOffset;
    return fileOffset !== undefined && fileOffset >= 0
      ? { code: error.code, message: error.message, fileOffset }
      : { code: error.code, message: error.message };
  }
  return { code: 'SG_ERR_INTERNAL', message: error instanceof Error ? error.message : String(error) };
}

function peInfo(image: PeImage): NonNullable<AssemblyInfo['pe']> {
  const DLL = 0x2000;
  return {
    format: image.isPe32Plus ? 'PE32+' : 'PE32',
    machine: MACHINE_NAMES[image.machine] ?? `0x${image.machine.toString(16)}`,
    kind: image.characteristics & DLL ? 'dll' : 'exe',
    timeDateStamp: image.timeDateStamp,
    checkSum: image.checkSum,
    checkSumValid: image.checkSum === 0 || image.checkSum === computePeChecksum(image.bytes, image.checkSumFileOffset),
    authenticode: getCertificateTable(image) !== null,
    overlayBytes: getOverlay(image)?.size ?? 0,
  };
}

/**
 * Attributes on the assembly and the module, with decoded arguments; a bad attribute carries its own error.
 * A spent reader budget is the module's error, not the attribute's: it is thrown.
 * @throws FormatError SG_ERR_MD_BUDGET and the codes of ModuleMetadata.assemblyAndModuleAttributes
 */
export function describeAttributes(module: ModuleMetadata, decode = true): AttributeInfo[] {
  const found = module.assemblyAndModuleAttributes();
  module.meter.describedAttributes(found.assembly.length + found.module.length, module.tables.tableInfo(TableId.CustomAttribute)?.fileOffset ?? -1);
  const rows = [...found.assembly.map((row) => ({ row, target: 'assembly' as const })), ...found.module.map((row) => ({ row, target: 'module' as const }))];
  return rows.map(({ row, target }) => {
    const assembly = row.origin.kind === 'this-module' ? null : row.origin.kind === 'assembly' || row.origin.kind === 'module' ? row.origin.name : null;
    try {
      const ctor = module.attributeConstructor(row);
      const decoded = decode ? module.decodeAttribute(row) : null;
      return {
        type: row.typeName,
        assembly,
        target,
        arguments: decoded?.fixedArguments ?? null,
        namedArguments: decoded?.namedArguments ?? null,
        constructorSignature: toHex(ctor.signature.bytes),
        error: null,
      };
    } catch (error) {
      if (!(error instanceof SignGateError) || error.code === 'SG_ERR_MD_BUDGET') throw error;
      return { type: row.typeName, assembly, target, arguments: null, namedArguments: null, constructorSignature: null, error: errorInfo(error) };
    }
  });
}

/**
 * Reads one file's bytes into the inspect record. Never throws for malformed input.
 * @param path how the file is named in the output (POSIX separators recommended)
 */
export function inspectAssembly(bytes: Uint8Array, path: string, options: InspectOptions = {}): AssemblyInfo {
  const none = { path, size: bytes.length, pe: null, cli: null, module: null, assembly: null, strongName: null, attributes: [], references: [] };
  let image: PeImage;
  try {
    image = parsePeImage(bytes);
  } catch (error) {
    return { ...none, authenticode: null, managed: false, error: errorInfo(error) };
  }
  const empty = { ...none, authenticode: options.readAuthenticode === false ? null : readAuthenticode(image, options.authenticode) };
  const pe = peInfo(image);
  const verdictOptions = { ...(options.budgets === undefined ? {} : { budgets: options.budgets }), authenticodeLimits: options.authenticode?.limits };
  // The one verdict (well-formed.ts): inspect refuses exactly the files check refuses with SG001, with the same error.
  const verdict = (check: () => void) => {
    try {
      check();
      return null;
    } catch (error) {
      if (!isInputFault(error)) throw error;
      return errorInfo(error);
    }
  };
  if (!hasCorHeader(image)) return { ...empty, pe, managed: false, error: verdict(() => readWellFormed(bytes, verdictOptions)) };
  let module: ModuleMetadata;
  try {
    module = new ModuleMetadata(image, options.budgets === undefined ? {} : { budgets: options.budgets });
  } catch (error) {
    return { ...empty, pe, managed: true, error: errorInfo(error) };
  }
  const refused = verdict(() => checkWellFormed(module, verdictOptions));
  // What can still be shown of a refused file is shown; its error is the verdict's.
  const partial: Record<string, unknown> = { ...empty, pe, managed: true, error: refused };
  try {
    const cor = module.corHeader;
    partial.cli = {
      runtimeVersion: `${cor.majorRuntimeVersion}.${cor.minorRuntimeVersion}`,
      metadataVersion: module.root.version,
      flags: cor.flags,
      ilOnly: (cor.flags & CorFlags.ILOnly) !== 0,
      requires32Bit: (cor.flags & CorFlags.Requires32Bit) !== 0,
      prefers32Bit: (cor.flags & CorFlags.Prefers32Bit) !== 0,
      ilLibrary: (cor.flags & CorFlags.ILLibrary) !== 0,
      strongNameSignedFlag: (cor.flags & CorFlags.StrongNameSigned) !== 0,
    };
    partial.module = { name: module.moduleName, mvid: module.mvid, hasManifest: module.hasManifest };
    const def = module.assembly;
    partial.references = module.assemblyReferences.map((r) => ({
      name: r.name,
      version: formatVersion(r.version),
      culture: r.culture,
      publicKeyToken: referenceToken(r.publicKeyOrToken, r.flags),
    }));
    partial.attributes = describeAttributes(module, options.decodeAttributes !== false);
    const status = classifyStrongName(module, options);
    if (def) {
      // classifyStrongName has parsed this key (or thrown): its hex text and token come from the same cache.
      const key = def.publicKey.length ? knownKey(def.publicKey) : null;
      partial.assembly = {
        name: def.name,
        version: formatVersion(def.version),
        culture: def.culture,
        flags: def.flags,
        hashAlgId: def.hashAlgId,
        publicKey: key?.hex ?? null,
        publicKeyToken: key?.token ?? null,
        hashAlgorithm: status.publicKey?.hashAlgorithm ?? null,
      };
    }
    partial.strongName = {
      state: status.state,
      details: status.details,
      description: status.description,
      flagSet: status.flagSet,
      slotSize: status.slot?.size ?? null,
      keyBits: status.keyBits,
      hashAlgorithm: status.hashAlgorithm,
      signatureValid: status.signatureValid,
    };
  } catch (error) {
    partial.error = refused ?? errorInfo(error);
  }
  return partial as unknown as AssemblyInfo;
}
