// One managed module's metadata: identity, references, type names and custom attributes
// (ECMA-335 II.22, II.24; strong-naming.md sections 3-5). Built on the PE image; everything is lazy.
import { ByteCursor, peekU16, peekU32 } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import { parseCorHeader, type CorHeader } from '../pe/cor-header.js';
import { rvaToFileOffset, type PeImage } from '../pe/pe-image.js';
import { ReaderMeter, type ReaderBudgets, type ReaderWork } from './budget.js';
import { decodeCustomAttributeValue, type AttributeTypeResolver, type DecodedAttributeValue, type SerStringDecoder } from './custom-attribute-value.js';
import { BlobHeap, GuidHeap, StringHeap } from './heaps.js';
import { parseMetadataRoot, type MetadataRoot } from './root.js';
import { CodedIndex, TableId, TableNames } from './schema.js';
import { ElementType, parseMethodSignature, parseTypeSignature, type MethodSignature, type TypeHandle, type TypeSig } from './signatures.js';
import { MetadataTables } from './tables.js';

export interface AssemblyVersion {
  readonly major: number;
  readonly minor: number;
  readonly build: number;
  readonly revision: number;
}

export function formatVersion(v: AssemblyVersion): string {
  return `${v.major}.${v.minor}.${v.build}.${v.revision}`;
}

/** AssemblyFlags (II.23.1.2). */
export const AssemblyFlags = { PublicKey: 0x0001, Retargetable: 0x0100, ContentTypeMask: 0x0e00 } as const;

export interface AssemblyDefinition {
  readonly hashAlgId: number;
  readonly version: AssemblyVersion;
  readonly flags: number;
  /** The full public key blob; empty when the assembly is not strong-named. */
  readonly publicKey: Uint8Array;
  readonly name: string;
  readonly culture: string;
}

export interface AssemblyReferenceRow {
  readonly rid: number;
  readonly version: AssemblyVersion;
  readonly flags: number;
  /** A full public key when `flags & 1`, else an 8-byte token, or empty. */
  readonly publicKeyOrToken: Uint8Array;
  readonly name: string;
  readonly culture: string;
}

export interface FileRow {
  readonly rid: number;
  /** 0 = contains metadata, 1 = no metadata. */
  readonly flags: number;
  readonly name: string;
  readonly hashValue: Uint8Array;
}

export interface ManifestResourceRow {
  readonly rid: number;
  readonly name: string;
  readonly flags: number;
  readonly offset: number;
  /** null when embedded in this file. */
  readonly implementation: { readonly table: number; readonly rid: number } | null;
}

export interface ExportedTypeRow {
  readonly rid: number;
  readonly flags: number;
  readonly fullName: string;
  readonly implementation: { readonly table: number; readonly rid: number };
}

/** Where a type is defined, as far as this module says. */
export type TypeOrigin =
  | { readonly kind: 'this-module' }
  | { readonly kind: 'assembly'; readonly name: string; readonly assemblyRef: number }
  | { readonly kind: 'module'; readonly name: string }
  | { readonly kind: 'unresolved' };

export interface CustomAttributeRow {
  readonly rid: number;
  readonly parent: { readonly table: number; readonly rid: number };
  readonly constructor: { readonly table: number; readonly rid: number };
  /** Namespace.Outer/Inner, ECMA form. */
  readonly typeName: string;
  readonly typeNamespace: string;
  readonly origin: TypeOrigin;
  /** Index of the value blob (0 = empty). */
  readonly valueIndex: number;
}

const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true }); // keeps a leading BOM, as Buffer's toString does

/** UTF-8 bytes as text, without copying them first (Buffer.from(view) would). */
function utf8Text(bytes: Uint8Array): string {
  return utf8Decoder.decode(bytes);
}

/** Beyond any real nesting depth; stops cycles in NestedClass and TypeRef chains. */
const MAX_NESTING = 64;

/** mcs gives its assembly-attribute holder one field; a few more are looked at, not an unbounded list from the file. */
const MAX_ATTRIBUTE_HOLDER_FIELDS = 8;

/** TypeDef flags: the visibility mask marks nested types (II.23.1.15). */
const TYPE_VISIBILITY_MASK = 0x7;

export interface ModuleMetadataOptions {
  /** Limits on the work reading this module may cost; unset fields take DEFAULT_READER_BUDGETS. */
  readonly budgets?: Partial<ReaderBudgets>;
}

type TypeInfo = { fullName: string; namespace: string; origin: TypeOrigin };

export class ModuleMetadata {
  readonly corHeader: CorHeader;
  readonly root: MetadataRoot;
  readonly tables: MetadataTables;
  readonly strings: StringHeap;
  readonly blobs: BlobHeap;
  readonly guids: GuidHeap;
  private nesting: Map<number, number> | undefined;
  /** The manifest's rows and the assembly's and module's attributes, each read once: a getter hands out the same value. */
  private readonly read = new Map<string, unknown>();
  private readonly typeDefNames = new Map<number, string>();
  private readonly typeRefInfos = new Map<number, { fullName: string; namespace: string; origin: TypeOrigin }>();
  private readonly constructors = new Map<number, { name: string; signature: MethodSignature; flags: number | undefined }>();
  private readonly typeSpecInfos = new Map<number, TypeInfo>();
  private readonly enumTypes = new Map<number, number | undefined>();
  /** Attribute strings by file offset: attributes that share a value blob share its strings. */
  private readonly serStrings = new Map<number, { length: number; value: string }>();
  /** Position in MethodPtr of each MethodDef row (0 = not listed), built on first use in a #- stream. */
  private methodPositions: Uint32Array | undefined;
  /** Counts this module's work and enforces its reader budgets. */
  readonly meter: ReaderMeter;

  /**
   * @throws FormatError SG_ERR_CLI_*, SG_ERR_MD_*, SG_ERR_PE_RVA_UNMAPPED
   */
  constructor(
    readonly image: PeImage,
    options: ModuleMetadataOptions = {},
  ) {
    this.meter = new ReaderMeter(options.budgets);
    this.corHeader = parseCorHeader(image);
    const md = this.corHeader.metadata;
    const mdAt = rvaToFileOffset(image, md.rva, md.size, 'metadata root');
    this.root = parseMetadataRoot(image.bytes, mdAt, md.size);
    this.tables = new MetadataTables(image.bytes, this.root);
    this.strings = new StringHeap(image.bytes, this.root.strings, this.meter);
    this.blobs = new BlobHeap(image.bytes, this.root.blob);
    this.guids = new GuidHeap(image.bytes, this.root.guid);
  }

  /** The work reading this module has cost so far. */
  get work(): Readonly<ReaderWork> {
    return this.meter.work;
  }

  private cell(table: number, rid: number, column: string): number {
    return this.tables.cell(table, rid, this.tables.column(table, column));
  }

  private str(table: number, rid: number, column: string): string {
    return this.strings.get(this.cell(table, rid, column));
  }

  private blob(table: number, rid: number, column: string): Uint8Array {
    return this.blobs.get(this.cell(table, rid, column));
  }

  private version(table: number, rid: number): AssemblyVersion {
    return {
      major: this.cell(table, rid, 'majorVersion'),
      minor: this.cell(table, rid, 'minorVersion'),
      build: this.cell(table, rid, 'buildNumber'),
      revision: this.cell(table, rid, 'revisionNumber'),
    };
  }

  get moduleName(): string {
    return this.tables.rowCount(TableId.Module) > 0 ? this.str(TableId.Module, 1, 'name') : '';
  }

  get mvid(): string | null {
    return this.tables.rowCount(TableId.Module) > 0 ? this.guids.get(this.cell(TableId.Module, 1, 'mvid')) : null;
  }

  /** The bytes of row `rid` of `table` in the file: where a finding about that row points. */
  rowLocation(table: number, rid: number): { fileOffset: number; length: number } {
    return { fileOffset: this.tables.rowFileOffset(table, rid), length: this.tables.tableInfo(table)!.rowSize };
  }

  /** Where the Assembly row's public key lies in the file (its #Blob content), or undefined when it has none. */
  get assemblyPublicKeyLocation(): { fileOffset: number; length: number } | undefined {
    if (!this.hasManifest) return undefined;
    const index = this.cell(TableId.Assembly, 1, 'publicKey');
    const length = this.blobs.get(index).length;
    return length === 0 ? undefined : { fileOffset: this.blobs.contentFileOffset(index), length };
  }

  /** True when the module has an Assembly row (a manifest); false for a bare netmodule. */
  get hasManifest(): boolean {
    return this.tables.rowCount(TableId.Assembly) > 0;
  }

  /** The Assembly row, or undefined for a netmodule. */
  get assembly(): AssemblyDefinition | undefined {
    return this.remember('assembly', () => this.readAssembly());
  }

  private readAssembly(): AssemblyDefinition | undefined {
    if (!this.hasManifest) return undefined;
    const A = TableId.Assembly;
    return {
      hashAlgId: this.cell(A, 1, 'hashAlgId'),
      version: this.version(A, 1),
      flags: this.cell(A, 1, 'flags'),
      publicKey: this.blob(A, 1, 'publicKey'),
      name: this.str(A, 1, 'name'),
      culture: this.str(A, 1, 'culture'),
    };
  }

  get assemblyReferences(): readonly AssemblyReferenceRow[] {
    return this.remember('assemblyReferences', () => {
      const out: AssemblyReferenceRow[] = [];
      for (let rid = 1; rid <= this.tables.rowCount(TableId.AssemblyRef); rid++) out.push(this.assemblyReference(rid));
      return out;
    });
  }

  assemblyReference(rid: number): AssemblyReferenceRow {
    const R = TableId.AssemblyRef;
    return {
      rid,
      version: this.version(R, rid),
      flags: this.cell(R, rid, 'flags'),
      publicKeyOrToken: this.blob(R, rid, 'publicKeyOrToken'),
      name: this.str(R, rid, 'name'),
      culture: this.str(R, rid, 'culture'),
    };
  }

  get files(): readonly FileRow[] {
    return this.remember('files', () => {
      const F = TableId.File;
      const out: FileRow[] = [];
      for (let rid = 1; rid <= this.tables.rowCount(F); rid++) {
        out.push({ rid, flags: this.cell(F, rid, 'flags'), name: this.str(F, rid, 'name'), hashValue: this.blob(F, rid, 'hashValue') });
      }
      return out;
    });
  }

  get manifestResources(): readonly ManifestResourceRow[] {
    return this.remember('manifestResources', () => this.readManifestResources());
  }

  private readManifestResources(): ManifestResourceRow[] {
    const M = TableId.ManifestResource;
    const out: ManifestResourceRow[] = [];
    for (let rid = 1; rid <= this.tables.rowCount(M); rid++) {
      const impl = this.tables.decodeCoded('Implementation', this.cell(M, rid, 'implementation'));
      out.push({
        rid,
        name: this.str(M, rid, 'name'),
        flags: this.cell(M, rid, 'flags'),
        offset: this.cell(M, rid, 'offset'),
        implementation: impl.rid === 0 ? null : impl,
      });
    }
    return out;
  }

  get exportedTypes(): readonly ExportedTypeRow[] {
    return this.remember('exportedTypes', () => this.readExportedTypes());
  }

  private readExportedTypes(): ExportedTypeRow[] {
    const E = TableId.ExportedType;
    const out: ExportedTypeRow[] = [];
    for (let rid = 1; rid <= this.tables.rowCount(E); rid++) {
      const ns = this.str(E, rid, 'typeNamespace');
      const name = this.str(E, rid, 'typeName');
      out.push({
        rid,
        flags: this.cell(E, rid, 'flags'),
        fullName: ns ? `${ns}.${name}` : name,
        implementation: this.tables.decodeCoded('Implementation', this.cell(E, rid, 'implementation')),
      });
    }
    return out;
  }

  // ---- type names (strong-naming.md section 4.2) ----

  /** `make`'s value, made on the first call for `key` and kept (the module's bytes do not change under a reader). */
  private remember<T>(key: string, make: () => T): T {
    if (!this.read.has(key)) this.read.set(key, make());
    return this.read.get(key) as T;
  }

  private nestingMap(): Map<number, number> {
    if (!this.nesting) {
      const N = TableId.NestedClass;
      this.chargeScan(N);
      const map = new Map<number, number>();
      for (let rid = 1; rid <= this.tables.rowCount(N); rid++) map.set(this.cell(N, rid, 'nestedClass'), this.cell(N, rid, 'enclosingClass'));
      this.nesting = map;
    }
    return this.nesting;
  }

  private cycle(table: number, rid: number): FormatError {
    const fileOffset = this.tables.rowFileOffset(table, rid);
    return new FormatError(
      'SG_ERR_MD_NESTING_CYCLE',
      `${TableNames[table]} row ${rid} at ${hex(fileOffset)} is part of a nesting cycle or a chain deeper than ${MAX_NESTING}`,
      {
        structure: `${TableNames[table]} table`,
        fileOffset,
      },
    );
  }

  /**
   * Every index in the type-system tables points inside its heap or table (MetadataTables.checkIndexes), and the
   * #Strings heap ends with the NUL of its last string: after this, no read of a cell or a heap entry can fail.
   * @throws FormatError SG_ERR_MD_BAD_INDEX, SG_ERR_MD_BAD_HEAP_INDEX, SG_ERR_MD_TRUNCATED
   */
  checkIndexes(): void {
    const strings = this.root.strings;
    if (strings && strings.size > 0 && this.image.bytes[strings.fileOffset + strings.size - 1] !== 0) {
      throw new FormatError('SG_ERR_MD_BAD_HEAP_INDEX', `the #Strings heap at ${hex(strings.fileOffset)} does not end with a NUL: its last string has no end`, {
        structure: '#Strings heap',
        fileOffset: strings.fileOffset + strings.size - 1,
      });
    }
    this.tables.checkIndexes({
      stringsSize: this.strings.size,
      blobStart: this.root.blob?.fileOffset ?? 0,
      blobSize: this.blobs.size,
      guidCount: Math.floor(this.guids.size / 16),
      checkBlob: (index) => this.blobs.checkIndex(index),
    });
  }

  /**
   * The structural checks a full read makes and a check's lazy reads may skip, so that a check and the service judge
   * a damaged file as `inspect` does: every TypeDef nesting chain and TypeRef scope chain ends (no cycle, at most
   * MAX_NESTING deep), and every custom attribute's constructor is a method of a type. Integer reads only, no names.
   * @throws FormatError SG_ERR_MD_NESTING_CYCLE, SG_ERR_MD_BAD_ATTRIBUTE, SG_ERR_MD_BAD_INDEX
   */
  checkStructure(): void {
    const tables = this.tables;
    const T = TableId.TypeDef;
    const typeFlags = tables.column(T, 'flags');
    const nesting = this.nestingMap();
    for (const rid of nesting.keys()) {
      let current = rid;
      for (let depth = 0; ; depth++) {
        if (depth >= MAX_NESTING) throw this.cycle(T, rid);
        const enclosing = nesting.get(current);
        if (enclosing === undefined || enclosing === 0 || (tables.cell(T, current, typeFlags) & TYPE_VISIBILITY_MASK) < 2) break;
        current = enclosing;
      }
    }
    // Column numbers looked up once: these loops read every row of their tables (a check's only full scans).
    const R = TableId.TypeRef;
    const scopeColumn = tables.column(R, 'resolutionScope');
    // Coded indexes split with integers here (decodeCoded's object per row is the cost of these scans).
    const scopeCoded = CodedIndex.ResolutionScope;
    const scopeMask = (1 << scopeCoded.bits) - 1;
    const scopeTypeRef = (scopeCoded.tables as readonly number[]).indexOf(R);
    this.chargeScan(R);
    for (let rid = 1; rid <= tables.rowCount(R); rid++) {
      let current = rid;
      for (let depth = 0; ; depth++) {
        if (depth >= MAX_NESTING) throw this.cycle(R, rid);
        const scope = tables.cell(R, current, scopeColumn);
        if ((scope & scopeMask) !== scopeTypeRef || scope >>> scopeCoded.bits === 0) break;
        current = scope >>> scopeCoded.bits;
      }
    }
    const C = TableId.CustomAttribute;
    const M = TableId.MemberRef;
    const typeColumn = tables.column(C, 'type');
    const classColumn = tables.column(M, 'class');
    this.chargeScan(C);
    // A method at or after the first type's method list has an owner (without a MethodPtr table): no search for it.
    const methods = tables.rowCount(TableId.MethodDef);
    const owned = tables.rowCount(T) > 0 && !(tables.uncompressed && tables.rowCount(TableId.MethodPtr) > 0) ? this.cell(T, 1, 'methodList') : Infinity;
    const ctorCoded = CodedIndex.CustomAttributeType;
    const ctorTables = ctorCoded.tables as readonly number[];
    const ctorMask = (1 << ctorCoded.bits) - 1;
    const parentCoded = CodedIndex.MemberRefParent;
    const parentTables = parentCoded.tables as readonly number[];
    const parentMask = (1 << parentCoded.bits) - 1;
    for (let rid = 1; rid <= tables.rowCount(C); rid++) {
      const ctorValue = tables.cell(C, rid, typeColumn);
      const ctorTable = ctorTables[ctorValue & ctorMask] ?? -1;
      const ctorRid = ctorValue >>> ctorCoded.bits;
      if (ctorTable === TableId.MethodDef) {
        // A row outside its table fails in cell() (SG_ERR_MD_BAD_INDEX), as a full read fails on it.
        if (ctorRid < 1 || ctorRid > methods) this.cell(TableId.MethodDef, ctorRid, 'flags');
        if (ctorRid >= owned || this.methodOwner(ctorRid) >= 1) continue;
      }
      if (ctorTable === M) {
        const parentTable = parentTables[tables.cell(M, ctorRid, classColumn) & parentMask] ?? -1;
        if (parentTable === T || parentTable === R || parentTable === TableId.TypeSpec) continue;
      }
      throw new FormatError('SG_ERR_MD_BAD_ATTRIBUTE', `CustomAttribute row ${rid} has a constructor that is not a method of a type`, {
        structure: 'CustomAttribute table',
        fileOffset: tables.rowFileOffset(C, rid),
      });
    }
  }

  /** Namespace.Outer/Inner of every TypeDef row, in row order (the `<Module>` row included). */
  typeDefFullNames(): string[] {
    const T = TableId.TypeDef;
    this.chargeScan(T);
    const out: string[] = [];
    for (let rid = 1; rid <= this.tables.rowCount(T); rid++) out.push(this.typeDefFullName(rid));
    return out;
  }

  /** Namespace.Outer/Inner of a TypeDef row. */
  typeDefFullName(rid: number): string {
    const cached = this.typeDefNames.get(rid);
    if (cached !== undefined) return cached;
    const T = TableId.TypeDef;
    // Built from the inside out without a list: "/Inner" parts are prepended to `nested`. A cycle is caught by
    // the depth bound alone (it revisits rows whose names were read already, so it fails as a long chain would).
    let nested = '';
    let current = rid;
    for (let depth = 0; ; depth++) {
      if (depth >= MAX_NESTING) throw this.cycle(T, rid);
      const name = this.str(T, current, 'typeName');
      const enclosing = this.nestingMap().get(current);
      const isNested = (this.cell(T, current, 'flags') & TYPE_VISIBILITY_MASK) >= 2;
      if (enclosing !== undefined && enclosing !== 0 && isNested) {
        nested = `/${name}${nested}`;
        current = enclosing;
        continue;
      }
      const ns = this.str(T, current, 'typeNamespace');
      const full = `${ns ? `${ns}.${name}` : name}${nested}`;
      this.typeDefNames.set(rid, full);
      return full;
    }
  }

  /** Namespace.Outer/Inner of a TypeRef row and the scope it resolves to. */
  typeRefInfo(rid: number): { fullName: string; namespace: string; origin: TypeOrigin } {
    let info = this.typeRefInfos.get(rid);
    if (!info) {
      info = this.resolveTypeRef(rid);
      this.typeRefInfos.set(rid, info);
    }
    return info;
  }

  private resolveTypeRef(rid: number): { fullName: string; namespace: string; origin: TypeOrigin } {
    const R = TableId.TypeRef;
    // As typeDefFullName: "/Inner" parts prepended, cycles caught by the depth bound.
    let nested = '';
    let current = rid;
    for (let depth = 0; ; depth++) {
      if (depth >= MAX_NESTING) throw this.cycle(R, rid);
      const scope = this.tables.decodeCoded('ResolutionScope', this.cell(R, current, 'resolutionScope'));
      const name = this.str(R, current, 'typeName');
      if (scope.table === TableId.TypeRef && scope.rid !== 0) {
        nested = `/${name}${nested}`;
        current = scope.rid;
        continue;
      }
      const ns = this.str(R, current, 'typeNamespace');
      return { fullName: `${ns ? `${ns}.${name}` : name}${nested}`, namespace: ns, origin: this.scopeOrigin(scope) };
    }
  }

  private scopeOrigin(scope: { table: number; rid: number }): TypeOrigin {
    if (scope.rid === 0) return { kind: 'unresolved' }; // resolved through ExportedType; not followed
    switch (scope.table) {
      case TableId.Module:
        return { kind: 'this-module' };
      case TableId.ModuleRef:
        return { kind: 'module', name: this.str(TableId.ModuleRef, scope.rid, 'name') };
      case TableId.AssemblyRef:
        return { kind: 'assembly', name: this.str(TableId.AssemblyRef, scope.rid, 'name'), assemblyRef: scope.rid };
      default:
        return { kind: 'unresolved' };
    }
  }

  /** Full name and origin of a TypeDefOrRef handle (TypeSpec resolves to its generic definition). */
  typeHandleInfo(handle: TypeHandle, depth = 0): { fullName: string; namespace: string; origin: TypeOrigin } {
    if (handle.table === TableId.TypeDef) {
      const fullName = this.typeDefFullName(handle.rid);
      return { fullName, namespace: this.outerNamespace(handle.rid), origin: { kind: 'this-module' } };
    }
    if (handle.table === TableId.TypeRef) return this.typeRefInfo(handle.rid);
    if (handle.table === TableId.TypeSpec && depth < 4) {
      // Cached: every attribute on a generic attribute type would otherwise parse the same signature again.
      const cached = this.typeSpecInfos.get(handle.rid);
      if (cached) return cached;
      const sig = parseTypeSignature(this.blobs.cursor(this.cell(TableId.TypeSpec, handle.rid, 'signature')));
      const inner = sig.kind === 'genericinst' ? sig.generic : sig;
      if (inner.kind === 'class' || inner.kind === 'valuetype') {
        const info = this.typeHandleInfo(inner.type, depth + 1);
        this.typeSpecInfos.set(handle.rid, info);
        return info;
      }
    }
    throw new FormatError('SG_ERR_MD_BAD_INDEX', `type handle ${TableNames[handle.table] ?? hex(handle.table)} row ${handle.rid} does not name a type`, {
      structure: 'type reference',
      fileOffset: -1,
    });
  }

  private outerNamespace(typeDefRid: number): string {
    const full = this.typeDefFullName(typeDefRid);
    const slash = full.indexOf('/');
    const outer = slash < 0 ? full : full.slice(0, slash);
    const dot = outer.lastIndexOf('.');
    return dot < 0 ? '' : outer.slice(0, dot);
  }

  /** Charges one full pass over `table` to the module's row budget. */
  private chargeScan(table: number, rows = this.tables.rowCount(table)): void {
    this.meter.rowsScanned(rows, this.tables.tableInfo(table)?.fileOffset ?? -1, TableNames[table] ?? hex(table));
  }

  /**
   * Position of MethodDef `methodRid` in the MethodPtr table (0 when not listed): the inverse of MethodPtr,
   * built in one pass on first use. The first position wins when a row is listed twice.
   */
  private methodPosition(methodRid: number): number {
    if (!this.methodPositions) {
      const P = TableId.MethodPtr;
      const ptrRows = this.tables.rowCount(P);
      this.chargeScan(P);
      const positions = new Uint32Array(this.tables.rowCount(TableId.MethodDef) + 1);
      for (let p = ptrRows; p >= 1; p--) {
        const method = this.tables.cell(P, p, 0);
        if (method < positions.length) positions[method] = p;
      }
      this.methodPositions = positions;
    }
    return this.methodPositions[methodRid] ?? 0;
  }

  /** The TypeDef that owns MethodDef `rid` (largest i with MethodList(i) <= rid). */
  methodOwner(methodRid: number): number {
    const T = TableId.TypeDef;
    // #- with a MethodPtr table: MethodList values are positions in MethodPtr.
    const ptrRows = this.tables.uncompressed ? this.tables.rowCount(TableId.MethodPtr) : 0;
    const position = ptrRows > 0 ? this.methodPosition(methodRid) : methodRid;
    const column = this.tables.column(T, 'methodList');
    let lo = 1;
    let hi = this.tables.rowCount(T);
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tables.cell(T, mid, column) <= position) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    if (found === 0 || position === 0) throw this.tables.badRow(TableId.MethodDef, methodRid);
    return found;
  }

  // ---- custom attributes (section 4) ----

  /** Every CustomAttribute row whose parent is (`table`, `rid`), in table order. */
  customAttributesOf(table: number, rid: number): CustomAttributeRow[] {
    return this.findAttributeRows([{ table, rid }])[0]!.map((row) => this.customAttribute(row));
  }

  /**
   * Row ids of the attributes of each parent, in one pass over the table. The table should be sorted by
   * parent, but unsorted files exist, so every row is looked at; raw coded values are compared.
   */
  private findAttributeRows(parents: readonly { table: number; rid: number }[]): number[][] {
    const C = TableId.CustomAttribute;
    const def = CodedIndex.HasCustomAttribute;
    const wanted = parents.map(({ table, rid }) => {
      const tag = (def.tables as readonly number[]).indexOf(table);
      return tag < 0 ? -1 : ((rid << def.bits) | tag) >>> 0;
    });
    const out = parents.map((): number[] => []);
    const info = this.tables.tableInfo(C);
    if (!info) return out;
    this.chargeScan(C, info.rowCount);
    const bytes = this.image.bytes;
    const wide = info.columnSizes[0] === 4;
    for (let row = 1, at = info.fileOffset; row <= info.rowCount; row++, at += info.rowSize) {
      const parent = wide ? peekU32(bytes, at) : peekU16(bytes, at);
      for (let i = 0; i < wanted.length; i++) if (parent === wanted[i]) out[i]!.push(row);
    }
    return out;
  }

  /** Attributes on the Assembly row (parent token 0x20000001) and on the Module row, in one pass. */
  assemblyAndModuleAttributes(): { assembly: CustomAttributeRow[]; module: CustomAttributeRow[] } {
    const [assembly, module] = this.findAttributeRows([
      { table: TableId.Assembly, rid: this.hasManifest ? 1 : 0 },
      { table: TableId.Module, rid: 1 },
    ]);
    return { assembly: assembly!.map((r) => this.customAttribute(r)), module: module!.map((r) => this.customAttribute(r)) };
  }

  /**
   * The assembly's and the module's attributes whose type may be named as `ownName` accepts, in table order: the test
   * is given the type's own name as its TypeDef or TypeRef row holds it (no namespace or enclosing type decoded), and a
   * generic attribute (a TypeSpec) is always taken. A superset of the attributes a test of the full type name would
   * take, for callers that test that name after (vendor-attribute.ts): the rest are never read further.
   */
  assemblyAndModuleAttributesNamedLike(ownName: (name: string) => boolean): { assembly: CustomAttributeRow[]; module: CustomAttributeRow[] } {
    const [assembly, module] = this.findAttributeRows([
      { table: TableId.Assembly, rid: this.hasManifest ? 1 : 0 },
      { table: TableId.Module, rid: 1 },
    ]);
    const taken = (rid: number): boolean => {
      const type = this.attributeTypeRow(rid);
      return type?.table === TableId.TypeDef || type?.table === TableId.TypeRef ? ownName(this.str(type.table, type.rid, 'typeName')) : true;
    };
    return {
      assembly: assembly!.filter(taken).map((r) => this.customAttribute(r)),
      module: module!.filter(taken).map((r) => this.customAttribute(r)),
    };
  }

  /**
   * The verdict's reading of the assembly's and the module's attributes, with no name decoded: every attribute's type
   * resolves as a reader resolves it (a TypeSpec's signature is read; TypeDef nesting and TypeRef scope chains are
   * checkStructure's), and the assembly's attributes whose type is `namespace`.`name` come back as rows (the names
   * compared in #Strings where they lie).
   * @throws FormatError as customAttribute, for an attribute whose type cannot be read
   */
  assemblyAttributesOfType(namespace: string, name: string): CustomAttributeRow[] {
    const [assembly, module] = this.findAttributeRows([
      { table: TableId.Assembly, rid: this.hasManifest ? 1 : 0 },
      { table: TableId.Module, rid: 1 },
    ]);
    const found: CustomAttributeRow[] = [];
    const fullName = namespace ? `${namespace}.${name}` : name;
    for (const [rows, onAssembly] of [
      [assembly!, true],
      [module!, false],
    ] as const) {
      for (const rid of rows) {
        const type = this.attributeTypeRow(rid);
        if (type?.table === TableId.TypeRef || type?.table === TableId.TypeDef) {
          if (onAssembly && this.isTypeNamed(type, namespace, name, fullName)) found.push(this.customAttribute(rid));
          continue;
        }
        // A TypeSpec (a generic attribute) or a constructor of no type: the reader's own reading, and its error.
        const row = this.customAttribute(rid);
        if (onAssembly && row.typeName === fullName) found.push(row);
      }
    }
    return found;
  }

  /** The row of an attribute's type as its constructor names it (a TypeDef, TypeRef or TypeSpec), or undefined for none. */
  private attributeTypeRow(rid: number): { table: number; rid: number } | undefined {
    const ctor = this.tables.decodeCoded('CustomAttributeType', this.cell(TableId.CustomAttribute, rid, 'type'));
    if (ctor.table === TableId.MethodDef) return { table: TableId.TypeDef, rid: this.methodOwner(ctor.rid) };
    return ctor.table === TableId.MemberRef ? this.tables.decodeCoded('MemberRefParent', this.cell(TableId.MemberRef, ctor.rid, 'class')) : undefined;
  }

  /** Whether a TypeDef or TypeRef is the top-level type `namespace`.`name`, its name bytes compared first. */
  private isTypeNamed(type: { table: number; rid: number }, namespace: string, name: string, fullName: string): boolean {
    if (type.table === TableId.TypeDef) {
      return this.strings.isAscii(this.cell(TableId.TypeDef, type.rid, 'typeName'), name) && this.typeDefFullName(type.rid) === fullName;
    }
    const R = TableId.TypeRef;
    const scope = this.tables.decodeCoded('ResolutionScope', this.cell(R, type.rid, 'resolutionScope'));
    // A nested TypeRef's full name holds its outer types ("Outer/Name"): never a top-level name.
    if (scope.table === R && scope.rid !== 0) return false;
    return this.strings.isAscii(this.cell(R, type.rid, 'typeName'), name) && this.strings.isAscii(this.cell(R, type.rid, 'typeNamespace'), namespace);
  }

  /**
   * Assembly-level attributes compiled into a netmodule, which has no Assembly row to carry them. Compilers
   * park them on a stand-in type: csc on a TypeRef `System.Runtime.CompilerServices.AssemblyAttributesGoHere`
   * (with suffixes M, S, SM), mcs on the static field `attributes` of a TypeDef `<$AssemblyAttributes$Name>`
   * (the type's own CompilerGenerated attribute is not one of them). A linker may copy them into the
   * manifest (csc /addmodule does not, Mono's al does not); the runtime reads assembly attributes from the
   * manifest only. Empty for a module with a manifest.
   */
  netmoduleAssemblyAttributes(): CustomAttributeRow[] {
    if (this.hasManifest) return [];
    const parents: { table: number; rid: number }[] = [];
    this.chargeScan(TableId.TypeRef);
    for (let rid = 1; rid <= this.tables.rowCount(TableId.TypeRef); rid++) {
      if (this.str(TableId.TypeRef, rid, 'typeNamespace') !== 'System.Runtime.CompilerServices') continue;
      if (/^AssemblyAttributesGoHere(M|S|SM)?$/.test(this.str(TableId.TypeRef, rid, 'typeName'))) parents.push({ table: TableId.TypeRef, rid });
    }
    const T = TableId.TypeDef;
    const fieldRows = this.tables.rowCount(TableId.Field);
    this.chargeScan(T);
    for (let rid = 1; rid <= this.tables.rowCount(T); rid++) {
      if (!this.str(T, rid, 'typeName').startsWith('<$AssemblyAttributes$')) continue;
      const next = rid < this.tables.rowCount(T) ? this.cell(T, rid + 1, 'fieldList') : fieldRows + 1;
      const first = this.cell(T, rid, 'fieldList');
      for (let field = first; field < Math.min(next, fieldRows + 1, first + MAX_ATTRIBUTE_HOLDER_FIELDS); field++)
        parents.push({ table: TableId.Field, rid: field });
    }
    if (parents.length === 0) return [];
    return this.findAttributeRows(parents)
      .flat()
      .sort((a, b) => a - b)
      .map((r) => this.customAttribute(r));
  }

  /** Attributes on the Assembly row (parent token 0x20000001). */
  get assemblyAttributes(): readonly CustomAttributeRow[] {
    return this.remember('assemblyAttributes', () => (this.hasManifest ? this.customAttributesOf(TableId.Assembly, 1) : []));
  }

  /** Attributes on the Module row. */
  get moduleAttributes(): readonly CustomAttributeRow[] {
    return this.remember('moduleAttributes', () => this.customAttributesOf(TableId.Module, 1));
  }

  customAttribute(rid: number): CustomAttributeRow {
    const C = TableId.CustomAttribute;
    const parent = this.tables.decodeCoded('HasCustomAttribute', this.cell(C, rid, 'parent'));
    const ctor = this.tables.decodeCoded('CustomAttributeType', this.cell(C, rid, 'type'));
    const type = this.constructorType(ctor, rid);
    return {
      rid,
      parent,
      constructor: ctor,
      typeName: type.fullName,
      typeNamespace: type.namespace,
      origin: type.origin,
      valueIndex: this.cell(C, rid, 'value'),
    };
  }

  private constructorType(ctor: { table: number; rid: number }, attributeRid: number): { fullName: string; namespace: string; origin: TypeOrigin } {
    if (ctor.table === TableId.MethodDef) {
      const owner = this.methodOwner(ctor.rid);
      return this.typeHandleInfo({ table: TableId.TypeDef, rid: owner });
    }
    if (ctor.table === TableId.MemberRef) {
      const parent = this.tables.decodeCoded('MemberRefParent', this.cell(TableId.MemberRef, ctor.rid, 'class'));
      if (parent.table === TableId.TypeDef || parent.table === TableId.TypeRef || parent.table === TableId.TypeSpec) {
        return this.typeHandleInfo(parent);
      }
    }
    throw new FormatError('SG_ERR_MD_BAD_ATTRIBUTE', `CustomAttribute row ${attributeRid} has a constructor that is not a method of a type`, {
      structure: 'CustomAttribute table',
      fileOffset: this.tables.rowFileOffset(TableId.CustomAttribute, attributeRid),
    });
  }

  /** The constructor's name (should be .ctor) and its signature. */
  attributeConstructor(attribute: CustomAttributeRow): { name: string; signature: MethodSignature; flags: number | undefined } {
    const { table, rid } = attribute.constructor;
    const key = table * 0x1000000 + rid;
    let ctor = this.constructors.get(key);
    if (!ctor) {
      const name = this.str(table, rid, 'name');
      const signature = parseMethodSignature(this.blobs.cursor(this.cell(table, rid, 'signature')));
      const flags = table === TableId.MethodDef ? this.cell(table, rid, 'flags') : undefined;
      ctor = { name, signature, flags };
      this.constructors.set(key, ctor);
    }
    return ctor;
  }

  /**
   * Decodes an attribute's arguments using its constructor signature. Every decode is charged to the
   * module's attribute-value budget, also when another attribute shares the blob.
   * @throws FormatError SG_ERR_MD_BAD_ATTRIBUTE, SG_ERR_MD_BAD_SIGNATURE_BLOB, SG_ERR_MD_BUDGET and truncation codes
   */
  decodeAttribute(attribute: CustomAttributeRow): DecodedAttributeValue {
    const { signature } = this.attributeConstructor(attribute);
    const blob = this.blobs.cursor(attribute.valueIndex);
    // The parameters count too: each is resolved before the blob is read.
    this.meter.attributeValueBytes(blob.remaining + signature.parameters.length, blob.start);
    return decodeCustomAttributeValue(blob, signature.parameters, this.attributeResolver, this.decodeSerString);
  }

  private readonly decodeSerString: SerStringDecoder = (utf8, fileOffset) => {
    const cached = this.serStrings.get(fileOffset);
    if (cached && cached.length === utf8.length) return cached.value;
    this.meter.stringBytes(utf8.length, fileOffset, 'custom attribute string');
    const value = utf8Text(utf8);
    this.serStrings.set(fileOffset, { length: utf8.length, value });
    return value;
  };

  /** Raw value blob of an attribute. */
  attributeValue(attribute: CustomAttributeRow): Uint8Array {
    return this.blobs.get(attribute.valueIndex);
  }

  private readonly attributeResolver: AttributeTypeResolver = {
    typeName: (sig) => this.typeHandleInfo(sig.type).fullName,
    enumUnderlyingType: (sig) => (sig.type.table === TableId.TypeDef ? this.enumUnderlyingType(sig.type.rid) : undefined),
  };

  /** The element type of an enum's `value__` field, for enums defined in this module. */
  private enumUnderlyingType(typeDefRid: number): number | undefined {
    if (this.enumTypes.has(typeDefRid)) return this.enumTypes.get(typeDefRid);
    const underlying = this.findEnumUnderlyingType(typeDefRid);
    this.enumTypes.set(typeDefRid, underlying);
    return underlying;
  }

  private findEnumUnderlyingType(typeDefRid: number): number | undefined {
    const T = TableId.TypeDef;
    const F = TableId.Field;
    const first = this.cell(T, typeDefRid, 'fieldList');
    const next = typeDefRid < this.tables.rowCount(T) ? this.cell(T, typeDefRid + 1, 'fieldList') : this.tables.rowCount(F) + 1;
    // Field lists of hostile files may overlap; each enum type's range is charged once (the result is cached).
    this.chargeScan(F, Math.max(0, Math.min(next, this.tables.rowCount(F) + 1) - first));
    for (let f = first; f < next && f <= this.tables.rowCount(F); f++) {
      const STATIC = 0x10;
      if (this.cell(F, f, 'flags') & STATIC) continue;
      const c: ByteCursor = this.blobs.cursor(this.cell(F, f, 'signature'));
      if (c.u8() !== 0x06) return undefined; // FIELD prolog
      const sig: TypeSig = parseTypeSignature(c);
      return sig.kind === 'primitive' && sig.elementType !== ElementType.Boolean ? sig.elementType : undefined;
    }
    return undefined;
  }
}
