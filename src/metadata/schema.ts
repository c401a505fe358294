// Table schemas 0x00-0x2C and coded indexes (ECMA-335 II.22, II.24.2.6; strong-naming.md sections 3.4-3.5), and the
// Portable PDB tables 0x30-0x37.
// Every present table's row size is needed to find any later table, so the full schema is here as data.

export const TableId = {
  Module: 0x00,
  TypeRef: 0x01,
  TypeDef: 0x02,
  FieldPtr: 0x03,
  Field: 0x04,
  MethodPtr: 0x05,
  MethodDef: 0x06,
  ParamPtr: 0x07,
  Param: 0x08,
  InterfaceImpl: 0x09,
  MemberRef: 0x0a,
  Constant: 0x0b,
  CustomAttribute: 0x0c,
  FieldMarshal: 0x0d,
  DeclSecurity: 0x0e,
  ClassLayout: 0x0f,
  FieldLayout: 0x10,
  StandAloneSig: 0x11,
  EventMap: 0x12,
  EventPtr: 0x13,
  Event: 0x14,
  PropertyMap: 0x15,
  PropertyPtr: 0x16,
  Property: 0x17,
  MethodSemantics: 0x18,
  MethodImpl: 0x19,
  ModuleRef: 0x1a,
  TypeSpec: 0x1b,
  ImplMap: 0x1c,
  FieldRva: 0x1d,
  EncLog: 0x1e,
  EncMap: 0x1f,
  Assembly: 0x20,
  AssemblyProcessor: 0x21,
  AssemblyOS: 0x22,
  AssemblyRef: 0x23,
  AssemblyRefProcessor: 0x24,
  AssemblyRefOS: 0x25,
  File: 0x26,
  ExportedType: 0x27,
  ManifestResource: 0x28,
  NestedClass: 0x29,
  GenericParam: 0x2a,
  MethodSpec: 0x2b,
  GenericParamConstraint: 0x2c,
  // Portable PDB tables (Portable PDB v1.0, "Metadata tables"): a standalone PDB's #~ holds them, and some
  // writers put them into an assembly's own #~ beside the type system tables.
  Document: 0x30,
  MethodDebugInformation: 0x31,
  LocalScope: 0x32,
  LocalVariable: 0x33,
  LocalConstant: 0x34,
  ImportScope: 0x35,
  StateMachineMethod: 0x36,
  CustomDebugInformation: 0x37,
} as const;

/** One past the highest table id known (0x37); ids 0x2D-0x2F are unused and never present. */
export const TABLE_COUNT = 0x38;
/** Table ids with no table: a Valid bit for one of them is an error. */
export const UNUSED_TABLE_IDS = [0x2d, 0x2e, 0x2f] as const;
/** Names by table id (`table 0x2D` for the unused ids). */
export const TableNames: readonly string[] = Array.from(
  { length: TABLE_COUNT },
  (_, id) => Object.entries(TableId).find(([, v]) => v === id)?.[0] ?? `table 0x${id.toString(16).toUpperCase()}`,
);

/** Tables that ECMA lists but `#~` must not contain (SRM's mask 0x804800A8 plus EncMap). */
export const PTR_TABLES = [TableId.FieldPtr, TableId.MethodPtr, TableId.ParamPtr, TableId.EventPtr, TableId.PropertyPtr] as const;

const NO_TABLE = -1;

const HAS_CUSTOM_ATTRIBUTE = [
  TableId.MethodDef,
  TableId.Field,
  TableId.TypeRef,
  TableId.TypeDef,
  TableId.Param,
  TableId.InterfaceImpl,
  TableId.MemberRef,
  TableId.Module,
  TableId.DeclSecurity,
  TableId.Property,
  TableId.Event,
  TableId.StandAloneSig,
  TableId.ModuleRef,
  TableId.TypeSpec,
  TableId.Assembly,
  TableId.AssemblyRef,
  TableId.File,
  TableId.ExportedType,
  TableId.ManifestResource,
  TableId.GenericParam,
  TableId.GenericParamConstraint,
  TableId.MethodSpec,
] as const;

/** Coded index definitions: tables by tag (NO_TABLE for unused tags). */
export const CodedIndex = {
  TypeDefOrRef: { bits: 2, tables: [TableId.TypeDef, TableId.TypeRef, TableId.TypeSpec] },
  HasConstant: { bits: 2, tables: [TableId.Field, TableId.Param, TableId.Property] },
  HasCustomAttribute: { bits: 5, tables: HAS_CUSTOM_ATTRIBUTE },
  HasFieldMarshal: { bits: 1, tables: [TableId.Field, TableId.Param] },
  HasDeclSecurity: { bits: 2, tables: [TableId.TypeDef, TableId.MethodDef, TableId.Assembly] },
  MemberRefParent: { bits: 3, tables: [TableId.TypeDef, TableId.TypeRef, TableId.ModuleRef, TableId.MethodDef, TableId.TypeSpec] },
  HasSemantics: { bits: 1, tables: [TableId.Event, TableId.Property] },
  MethodDefOrRef: { bits: 1, tables: [TableId.MethodDef, TableId.MemberRef] },
  MemberForwarded: { bits: 1, tables: [TableId.Field, TableId.MethodDef] },
  Implementation: { bits: 2, tables: [TableId.File, TableId.AssemblyRef, TableId.ExportedType] },
  CustomAttributeType: { bits: 3, tables: [NO_TABLE, NO_TABLE, TableId.MethodDef, TableId.MemberRef, NO_TABLE] },
  ResolutionScope: { bits: 2, tables: [TableId.Module, TableId.ModuleRef, TableId.AssemblyRef, TableId.TypeRef] },
  TypeOrMethodDef: { bits: 1, tables: [TableId.TypeDef, TableId.MethodDef] },
  // The Portable PDB's: HasCustomAttribute's tables, then five debug tables.
  HasCustomDebugInformation: {
    bits: 5,
    tables: [...HAS_CUSTOM_ATTRIBUTE, TableId.Document, TableId.LocalScope, TableId.LocalVariable, TableId.LocalConstant, TableId.ImportScope],
  },
} as const satisfies Record<string, { bits: number; tables: readonly number[] }>;

export type CodedIndexName = keyof typeof CodedIndex;

/**
 * Column kinds: fixed-size constants, heap indexes (S, G, B), a simple index into a table,
 * a list index (a simple index that goes through a Ptr table in `#-`), or a coded index.
 */
export type ColumnKind =
  | { readonly kind: 'u1' | 'u2' | 'u4' }
  | { readonly kind: 'string' | 'guid' | 'blob' }
  | { readonly kind: 'table'; readonly table: number }
  | { readonly kind: 'list'; readonly table: number; readonly ptrTable: number }
  | { readonly kind: 'coded'; readonly coded: CodedIndexName };

export interface ColumnDef {
  readonly name: string;
  readonly type: ColumnKind;
}

const u1 = { kind: 'u1' } as const;
const u2 = { kind: 'u2' } as const;
const u4 = { kind: 'u4' } as const;
const S = { kind: 'string' } as const;
const G = { kind: 'guid' } as const;
const B = { kind: 'blob' } as const;
const t = (table: number): ColumnKind => ({ kind: 'table', table });
const list = (table: number, ptrTable: number): ColumnKind => ({ kind: 'list', table, ptrTable });
const c = (coded: CodedIndexName): ColumnKind => ({ kind: 'coded', coded });
const col = (name: string, type: ColumnKind): ColumnDef => ({ name, type });

/** Columns per table, in file order (II.22.2 - II.22.39). */
export const TableSchemas: readonly (readonly ColumnDef[])[] = [
  /* 00 Module */ [col('generation', u2), col('name', S), col('mvid', G), col('encId', G), col('encBaseId', G)],
  /* 01 TypeRef */ [col('resolutionScope', c('ResolutionScope')), col('typeName', S), col('typeNamespace', S)],
  /* 02 TypeDef */ [
    col('flags', u4),
    col('typeName', S),
    col('typeNamespace', S),
    col('extends', c('TypeDefOrRef')),
    col('fieldList', list(TableId.Field, TableId.FieldPtr)),
    col('methodList', list(TableId.MethodDef, TableId.MethodPtr)),
  ],
  /* 03 FieldPtr */ [col('field', t(TableId.Field))],
  /* 04 Field */ [col('flags', u2), col('name', S), col('signature', B)],
  /* 05 MethodPtr */ [col('method', t(TableId.MethodDef))],
  /* 06 MethodDef */ [
    col('rva', u4),
    col('implFlags', u2),
    col('flags', u2),
    col('name', S),
    col('signature', B),
    col('paramList', list(TableId.Param, TableId.ParamPtr)),
  ],
  /* 07 ParamPtr */ [col('param', t(TableId.Param))],
  /* 08 Param */ [col('flags', u2), col('sequence', u2), col('name', S)],
  /* 09 InterfaceImpl */ [col('class', t(TableId.TypeDef)), col('interface', c('TypeDefOrRef'))],
  /* 0A MemberRef */ [col('class', c('MemberRefParent')), col('name', S), col('signature', B)],
  /* 0B Constant: Type u1 + 1 padding byte */ [col('type', u1), col('padding', u1), col('parent', c('HasConstant')), col('value', B)],
  /* 0C CustomAttribute */ [col('parent', c('HasCustomAttribute')), col('type', c('CustomAttributeType')), col('value', B)],
  /* 0D FieldMarshal */ [col('parent', c('HasFieldMarshal')), col('nativeType', B)],
  /* 0E DeclSecurity */ [col('action', u2), col('parent', c('HasDeclSecurity')), col('permissionSet', B)],
  /* 0F ClassLayout */ [col('packingSize', u2), col('classSize', u4), col('parent', t(TableId.TypeDef))],
  /* 10 FieldLayout */ [col('offset', u4), col('field', t(TableId.Field))],
  /* 11 StandAloneSig */ [col('signature', B)],
  /* 12 EventMap */ [col('parent', t(TableId.TypeDef)), col('eventList', list(TableId.Event, TableId.EventPtr))],
  /* 13 EventPtr */ [col('event', t(TableId.Event))],
  /* 14 Event */ [col('eventFlags', u2), col('name', S), col('eventType', c('TypeDefOrRef'))],
  /* 15 PropertyMap */ [col('parent', t(TableId.TypeDef)), col('propertyList', list(TableId.Property, TableId.PropertyPtr))],
  /* 16 PropertyPtr */ [col('property', t(TableId.Property))],
  /* 17 Property */ [col('flags', u2), col('name', S), col('type', B)],
  /* 18 MethodSemantics */ [col('semantics', u2), col('method', t(TableId.MethodDef)), col('association', c('HasSemantics'))],
  /* 19 MethodImpl */ [col('class', t(TableId.TypeDef)), col('methodBody', c('MethodDefOrRef')), col('methodDeclaration', c('MethodDefOrRef'))],
  /* 1A ModuleRef */ [col('name', S)],
  /* 1B TypeSpec */ [col('signature', B)],
  /* 1C ImplMap */ [col('mappingFlags', u2), col('memberForwarded', c('MemberForwarded')), col('importName', S), col('importScope', t(TableId.ModuleRef))],
  /* 1D FieldRVA */ [col('rva', u4), col('field', t(TableId.Field))],
  /* 1E EncLog */ [col('token', u4), col('funcCode', u4)],
  /* 1F EncMap */ [col('token', u4)],
  /* 20 Assembly */ [
    col('hashAlgId', u4),
    col('majorVersion', u2),
    col('minorVersion', u2),
    col('buildNumber', u2),
    col('revisionNumber', u2),
    col('flags', u4),
    col('publicKey', B),
    col('name', S),
    col('culture', S),
  ],
  /* 21 AssemblyProcessor */ [col('processor', u4)],
  /* 22 AssemblyOS */ [col('osPlatformId', u4), col('osMajorVersion', u4), col('osMinorVersion', u4)],
  /* 23 AssemblyRef */ [
    col('majorVersion', u2),
    col('minorVersion', u2),
    col('buildNumber', u2),
    col('revisionNumber', u2),
    col('flags', u4),
    col('publicKeyOrToken', B),
    col('name', S),
    col('culture', S),
    col('hashValue', B),
  ],
  /* 24 AssemblyRefProcessor */ [col('processor', u4), col('assemblyRef', t(TableId.AssemblyRef))],
  /* 25 AssemblyRefOS */ [col('osPlatformId', u4), col('osMajorVersion', u4), col('osMinorVersion', u4), col('assemblyRef', t(TableId.AssemblyRef))],
  /* 26 File */ [col('flags', u4), col('name', S), col('hashValue', B)],
  /* 27 ExportedType */ [col('flags', u4), col('typeDefId', u4), col('typeName', S), col('typeNamespace', S), col('implementation', c('Implementation'))],
  /* 28 ManifestResource */ [col('offset', u4), col('flags', u4), col('name', S), col('implementation', c('Implementation'))],
  /* 29 NestedClass */ [col('nestedClass', t(TableId.TypeDef)), col('enclosingClass', t(TableId.TypeDef))],
  /* 2A GenericParam */ [col('number', u2), col('flags', u2), col('owner', c('TypeOrMethodDef')), col('name', S)],
  /* 2B MethodSpec */ [col('method', c('MethodDefOrRef')), col('instantiation', B)],
  /* 2C GenericParamConstraint */ [col('owner', t(TableId.GenericParam)), col('constraint', c('TypeDefOrRef'))],
  /* 2D-2F unused */ [],
  [],
  [],
  /* 30 Document: Name is a blob (the document name blob) */ [col('name', B), col('hashAlgorithm', G), col('hash', B), col('language', G)],
  /* 31 MethodDebugInformation */ [col('document', t(TableId.Document)), col('sequencePoints', B)],
  /* 32 LocalScope */ [
    col('method', t(TableId.MethodDef)),
    col('importScope', t(TableId.ImportScope)),
    col('variableList', t(TableId.LocalVariable)),
    col('constantList', t(TableId.LocalConstant)),
    col('startOffset', u4),
    col('length', u4),
  ],
  /* 33 LocalVariable */ [col('attributes', u2), col('index', u2), col('name', S)],
  /* 34 LocalConstant */ [col('name', S), col('signature', B)],
  /* 35 ImportScope */ [col('parent', t(TableId.ImportScope)), col('imports', B)],
  /* 36 StateMachineMethod */ [col('moveNextMethod', t(TableId.MethodDef)), col('kickoffMethod', t(TableId.MethodDef))],
  /* 37 CustomDebugInformation */ [col('parent', c('HasCustomDebugInformation')), col('kind', G), col('value', B)],
];
