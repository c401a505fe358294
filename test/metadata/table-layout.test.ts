// The table stream layout against System.Reflection.Metadata (tools/srm-oracle --tables), on generated images:
// an assembly whose #~ carries the Portable PDB tables 0x30-0x37 beside the type system tables (read, and read as
// SRM reads it), and a sweep over every table and every heap-size flag combination, with row counts on both
// sides of each threshold that widens a simple or coded index.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { CodedIndex, PTR_TABLES, TABLE_COUNT, TableId, TableNames, TableSchemas, UNUSED_TABLE_IDS } from '../../src/metadata/schema.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { fixture } from '../helpers/fixtures.js';
import { BlobsBuilder, SORTED_TABLES, StringsBuilder, buildMetadata, coded, withMetadata, type MetadataSpec } from '../helpers/metadata-image.js';
import { buildSrmOracle, srmDescribe, srmTables } from '../helpers/srm-oracle.js';
import { requireDotnet, runDotnetTests } from '../sdk/dotnet.js';

const BASE = fixture('assemblies/unsigned.dll');
const KNOWN_TABLES = Array.from({ length: TABLE_COUNT }, (_, id) => id).filter((id) => !(UNUSED_TABLE_IDS as readonly number[]).includes(id));
const dir = mkdtempSync(join(tmpdir(), 'signgate-table-layout-'));

/** An assembly with an attribute, a reference, and rows in every Portable PDB table. */
function assemblyWithPdbTables(): Uint8Array {
  const strings = new StringsBuilder();
  const blobs = new BlobsBuilder();
  const token = Uint8Array.from(Buffer.from('b77a5c561934e089', 'hex'));
  const spec: MetadataSpec = {
    strings: new Uint8Array(0),
    blobs: new Uint8Array(0),
    rows: {
      [TableId.Module]: [{ name: strings.add('PdbTables.dll'), mvid: 1 }],
      [TableId.TypeRef]: [
        {
          resolutionScope: coded('ResolutionScope', TableId.AssemblyRef, 1),
          typeName: strings.add('CompilationRelaxationsAttribute'),
          typeNamespace: strings.add('System.Runtime.CompilerServices'),
        },
      ],
      [TableId.TypeDef]: [{ typeName: strings.add('<Module>'), fieldList: 1, methodList: 1 }],
      [TableId.MethodDef]: [{ flags: 0x0096, name: strings.add('Main'), signature: blobs.add(Uint8Array.of(0x00, 0x00, 0x01)), paramList: 1 }],
      [TableId.MemberRef]: [
        { class: coded('MemberRefParent', TableId.TypeRef, 1), name: strings.add('.ctor'), signature: blobs.add(Uint8Array.of(0x20, 0x01, 0x01, 0x08)) },
      ],
      [TableId.CustomAttribute]: [
        {
          parent: coded('HasCustomAttribute', TableId.Assembly, 1),
          type: coded('CustomAttributeType', TableId.MemberRef, 1),
          value: blobs.add(Uint8Array.of(1, 0, 8, 0, 0, 0, 0, 0)),
        },
      ],
      [TableId.Assembly]: [{ hashAlgId: 0x8004, majorVersion: 1, minorVersion: 2, name: strings.add('PdbTables') }],
      [TableId.AssemblyRef]: [{ majorVersion: 4, publicKeyOrToken: blobs.add(token), name: strings.add('mscorlib') }],
      [TableId.Document]: [
        {
          name: blobs.add(Uint8Array.of(0x2f, ...Buffer.from('src'), ...Buffer.from('Program.cs'))),
          hashAlgorithm: 1,
          hash: blobs.add(new Uint8Array(20).fill(7)),
          language: 1,
        },
        { name: blobs.add(Uint8Array.of(0x2f, ...Buffer.from('Other.cs'))), hashAlgorithm: 1, hash: blobs.add(new Uint8Array(20).fill(9)), language: 1 },
      ],
      [TableId.MethodDebugInformation]: [{ document: 1, sequencePoints: blobs.add(Uint8Array.of(0, 0, 1, 2, 3)) }],
      [TableId.ImportScope]: [{ parent: 0, imports: blobs.add(new Uint8Array(0)) }],
      [TableId.LocalScope]: [{ method: 1, importScope: 1, variableList: 1, constantList: 1, startOffset: 0, length: 10 }],
      [TableId.LocalVariable]: [
        { attributes: 0, index: 0, name: strings.add('count') },
        { attributes: 1, index: 1, name: strings.add('hidden') },
      ],
      [TableId.LocalConstant]: [{ name: strings.add('Answer'), signature: blobs.add(Uint8Array.of(0x08, 42, 0, 0, 0)) }],
      [TableId.StateMachineMethod]: [{ moveNextMethod: 1, kickoffMethod: 1 }],
      [TableId.CustomDebugInformation]: [
        { parent: coded('HasCustomDebugInformation', TableId.Document, 2), kind: 1, value: blobs.add(Uint8Array.of(1, 2, 3)) },
      ],
    },
    heapSizes: 0,
    sorted: SORTED_TABLES,
  };
  return withMetadata(BASE, buildMetadata({ ...spec, strings: strings.bytes(), blobs: blobs.bytes() }));
}

/** Our layout of a file as SRM's oracle reports it: present tables with rows, row size and offset in the metadata. */
function ourTables(bytes: Uint8Array): { id: number; rows: number; rowSize: number; offset: number }[] {
  // The layout alone: the rows of these images are zeros, which the well-formedness verdict (readModule) refuses.
  const module = new ModuleMetadata(parsePeImage(bytes));
  return KNOWN_TABLES.flatMap((id) => {
    const info = module.tables.tableInfo(id);
    return info ? [{ id, rows: info.rowCount, rowSize: info.rowSize, offset: info.fileOffset - module.root.fileOffset }] : [];
  });
}

describe('Portable PDB tables inside #~', () => {
  test('are read: every row of tables 0x30-0x37, and the assembly around them', () => {
    const module = readModule(assemblyWithPdbTables());
    expect(module.tables.rowCount(TableId.Document)).toBe(2);
    expect(module.tables.rowCount(TableId.LocalVariable)).toBe(2);
    expect(module.tables.rowCount(TableId.CustomDebugInformation)).toBe(1);
    const parent = module.tables.decodeCoded('HasCustomDebugInformation', module.tables.cell(TableId.CustomDebugInformation, 1, 0));
    expect(parent).toEqual({ table: TableId.Document, rid: 2 });
    expect(module.strings.get(module.tables.cell(TableId.LocalVariable, 2, module.tables.column(TableId.LocalVariable, 'name')))).toBe('hidden');
    const info = inspectAssembly(assemblyWithPdbTables(), 'PdbTables.dll');
    expect(info.error).toBeNull();
    expect(info.assembly).toMatchObject({ name: 'PdbTables', version: '1.2.0.0' });
  });

  test('a Valid bit for 0x2D-0x2F or above 0x37 is still an error', () => {
    for (const name of ['valid-mask-unknown-table.dll', 'valid-mask-unused-table.dll']) {
      let code = '';
      try {
        readModule(fixture(`corrupt/${name}`));
      } catch (error) {
        code = isSignGateError(error) ? error.code : String(error);
      }
      expect(code, name).toBe('SG_ERR_MD_BAD_TABLES');
    }
  });

  test('every table id has a name and a schema, and the unused ids have none', () => {
    expect(TableNames.length).toBe(TABLE_COUNT);
    expect(TableNames[0x30]).toBe('Document');
    expect(TableNames[0x2d]).toBe('table 0x2D');
    for (const id of UNUSED_TABLE_IDS) expect(TableSchemas[id]).toEqual([]);
    for (const id of KNOWN_TABLES) expect(TableSchemas[id]!.length, TableNames[id]).toBeGreaterThan(0);
  });
});

describe.skipIf(!runDotnetTests)('the layout as System.Reflection.Metadata computes it', () => {
  beforeAll(async () => {
    requireDotnet();
    await buildSrmOracle();
  });

  test('the assembly with Portable PDB tables: SRM reads the same identity, references, attributes and table layout', async () => {
    const path = join(dir, 'PdbTables.dll');
    const bytes = assemblyWithPdbTables();
    writeFileSync(path, bytes);
    const [described] = await srmDescribe<{
      error: string | null;
      identity: { name: string; version: string };
      references: { name: string; publicKeyOrToken: string }[];
      attributes: string[];
    }>([path]);
    expect(described!.error).toBeNull();
    const info = inspectAssembly(bytes, path);
    expect(described!.identity).toMatchObject({ name: info.assembly!.name, version: info.assembly!.version });
    expect(described!.references.map((r) => [r.name, r.publicKeyOrToken])).toEqual(info.references.map((r) => [r.name, r.publicKeyToken]));
    expect(described!.attributes).toEqual(info.attributes.map((a) => a.type));
    const [tables] = await srmTables([path]);
    expect(tables!.error).toBeNull();
    expect(ourTables(bytes)).toEqual(tables!.tables);
  });

  test('every table and heap-size flag combination, and row counts around each index-widening threshold', async () => {
    mkdirSync(join(dir, 'sweep'), { recursive: true });
    const files: { path: string; bytes: Uint8Array; what: string }[] = [];
    const add = (what: string, spec: Omit<MetadataSpec, 'strings' | 'blobs'>) => {
      const bytes = withMetadata(BASE, buildMetadata({ ...spec, strings: new Uint8Array(1), blobs: new Uint8Array(1) }));
      const path = join(dir, 'sweep', `${files.length}.dll`);
      writeFileSync(path, bytes);
      files.push({ path, bytes, what });
    };
    // The Ptr tables and EncMap belong to #- only (SRM refuses them in #~, and so do we). SRM does not know
    // AssemblyProcessor, AssemblyOS, AssemblyRefProcessor and AssemblyRefOS at all ("Unknown tables"): ECMA-335
    // defines them, compilers never write them, and we read them as ECMA lays them out; they stay out of the sweep.
    const srmUnknown: number[] = [TableId.AssemblyProcessor, TableId.AssemblyOS, TableId.AssemblyRefProcessor, TableId.AssemblyRefOS];
    const inCompressed = KNOWN_TABLES.filter((id) => !(PTR_TABLES as readonly number[]).includes(id) && id !== TableId.EncMap && !srmUnknown.includes(id));
    const oneOfEach = Object.fromEntries(inCompressed.map((id) => [id, 1]));
    /** Index of the first image of each pair on both sides of a threshold. */
    const pairs: number[] = [];
    // Every heap-size flag combination, every table present (all columns of every table laid out).
    for (let heapSizes = 0; heapSizes < 8; heapSizes++) add(`heap sizes ${heapSizes}`, { rows: {}, zeroRows: oneOfEach, heapSizes, sorted: SORTED_TABLES });
    // Each table on both sides of every threshold that widens an index into it (coded: 2^(16 - tag bits); simple: 2^16).
    for (const id of inCompressed) {
      const thresholds = new Set<number>();
      for (const def of Object.values(CodedIndex)) if ((def.tables as readonly number[]).includes(id)) thresholds.add(1 << (16 - def.bits));
      const referenced = inCompressed.some((from) =>
        TableSchemas[from]!.some((c) => (c.type.kind === 'table' || c.type.kind === 'list') && c.type.table === id),
      );
      if (referenced) thresholds.add(0x10000);
      for (const n of thresholds) {
        pairs.push(files.length);
        for (const rows of [n - 1, n])
          add(`${TableNames[id]} with ${rows} rows`, { rows: {}, zeroRows: { ...oneOfEach, [id]: rows }, heapSizes: 0, sorted: SORTED_TABLES });
      }
    }
    const srm = await srmTables(files.map((f) => f.path));
    const disagreements: string[] = [];
    for (const [i, f] of files.entries()) {
      if (srm[i]!.error) disagreements.push(`${f.what}: SRM: ${srm[i]!.error}`);
      else if (JSON.stringify(ourTables(f.bytes)) !== JSON.stringify(srm[i]!.tables))
        disagreements.push(`${f.what}: ours ${JSON.stringify(ourTables(f.bytes))} SRM ${JSON.stringify(srm[i]!.tables)}`);
    }
    expect(disagreements).toEqual([]);
    expect(files.length).toBeGreaterThan(100);
    // Not vacuous: one row more past each threshold widens some column (the row size of some table grows).
    const sizes = (i: number) => srm[i]!.tables!.map((t) => t.rowSize).join(',');
    const unchanged = pairs.filter((i) => sizes(i) === sizes(i + 1)).map((i) => files[i + 1]!.what);
    expect(unchanged).toEqual([]);
    // And each heap-size flag widens the columns of its heap.
    expect(new Set(Array.from({ length: 8 }, (_, i) => sizes(i))).size).toBe(8);
    console.log(`table layout sweep: ${files.length} generated images, ours equals SRM's on every one`);
  });
});
