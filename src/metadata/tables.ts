// The #~ / #- table stream (ECMA-335 II.24.2.6; strong-naming.md sections 3.2-3.3).
// Row sizes and column offsets are computed once from the heap-size flags and row counts;
// rows are read on demand. The whole table area is bounds-checked up front, so cell reads
// only check the row id.
import { ByteCursor, peekU16, peekU32 } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import type { MetadataRoot } from './root.js';
import { CodedIndex, PTR_TABLES, TABLE_COUNT, TableId, TableNames, TableSchemas, UNUSED_TABLE_IDS, type CodedIndexName, type ColumnDef } from './schema.js';

/** SRM's limit: a row count needs at most 24 bits. */
export const MAX_ROW_COUNT = 0x00ffffff;

/** The Valid bits of the unused ids 0x2D-0x2F in the mask's high half. */
const UNUSED_HIGH_BITS = UNUSED_TABLE_IDS.reduce((bits, id) => bits | (1 << (id - 32)), 0);

const HeapSizes = { StringsWide: 0x01, GuidWide: 0x02, BlobWide: 0x04, ExtraData: 0x40 } as const;

/** Column name to index, per table; the schema is static, so this is built once. */
// Plain objects, not Maps: a property load from one of 45 object shapes is cheaper than hashing the name (this runs
// for every cell the readers look at).
const COLUMN_INDEX: readonly Readonly<Record<string, number>>[] = TableSchemas.map((schema) => Object.fromEntries(schema.map((col, i) => [col.name, i])));

export interface TableInfo {
  readonly rowCount: number;
  readonly rowSize: number;
  readonly fileOffset: number;
  /** Byte offset and width of each column within a row. */
  readonly columnOffsets: readonly number[];
  readonly columnSizes: readonly number[];
}

export interface CodedValue {
  /** Table id, or -1 for an unused tag. */
  readonly table: number;
  readonly rid: number;
}

export class MetadataTables {
  readonly majorVersion: number;
  readonly minorVersion: number;
  readonly heapSizes: number;
  readonly valid: bigint;
  readonly sorted: bigint;
  readonly uncompressed: boolean;
  private readonly info: (TableInfo | undefined)[] = [];
  /** The Valid mask as two 32-bit halves: BigInt arithmetic per table is slow. */
  private readonly validLow: number;
  private readonly validHigh: number;

  constructor(
    readonly bytes: Uint8Array,
    root: MetadataRoot,
  ) {
    const stream = root.tables;
    this.uncompressed = stream.name === '#-';
    const c = new ByteCursor(bytes, {
      structure: `${stream.name} table stream`,
      errorCode: 'SG_ERR_MD_TRUNCATED',
      start: stream.fileOffset,
      end: stream.fileOffset + stream.size,
    });
    c.skip(4); // Reserved
    this.majorVersion = c.u8();
    this.minorVersion = c.u8();
    this.heapSizes = c.u8();
    c.skip(1); // Reserved
    this.validLow = c.u32();
    this.validHigh = c.u32();
    this.valid = (BigInt(this.validHigh) << 32n) | BigInt(this.validLow);
    this.sorted = c.u64();
    // Bits 0x2D-0x2F (no table has those ids) and 0x38-0x3F (none is defined).
    if (this.validHigh >>> (TABLE_COUNT - 32) !== 0 || (this.validHigh & UNUSED_HIGH_BITS) !== 0) {
      throw new FormatError(
        'SG_ERR_MD_BAD_TABLES',
        `${stream.name} Valid mask 0x${this.valid.toString(16)} at ${hex(stream.fileOffset + 8)} has bits for tables above 0x2C that do not exist (0x2D-0x2F, 0x38-0x3F)`,
        { structure: `${stream.name} header`, fileOffset: stream.fileOffset + 8 },
      );
    }
    const rowCounts = new Array<number>(TABLE_COUNT).fill(0);
    for (let id = 0; id < TABLE_COUNT; id++) {
      if (!this.isPresent(id)) continue;
      const at = c.position;
      const n = c.u32();
      if (n > MAX_ROW_COUNT) {
        throw new FormatError('SG_ERR_MD_ROW_COUNT', `${TableNames[id]} row count ${n} at ${hex(at)} is over ${MAX_ROW_COUNT}`, {
          structure: `${stream.name} header`,
          fileOffset: at,
        });
      }
      rowCounts[id] = n;
    }
    if (!this.uncompressed) {
      for (const id of [...PTR_TABLES, TableId.EncMap]) {
        if (rowCounts[id]! > 0) {
          throw new FormatError('SG_ERR_MD_BAD_TABLES', `#~ stream contains the ${TableNames[id]} table, allowed only in #-`, {
            structure: '#~ header',
            fileOffset: stream.fileOffset + 8,
          });
        }
      }
    }
    if (this.heapSizes & HeapSizes.ExtraData) c.skip(4);

    const wide = root.minimalDelta;
    const stringSize = wide || this.heapSizes & HeapSizes.StringsWide ? 4 : 2;
    const guidSize = wide || this.heapSizes & HeapSizes.GuidWide ? 4 : 2;
    const blobSize = wide || this.heapSizes & HeapSizes.BlobWide ? 4 : 2;
    const tableIndexSize = (table: number) => (wide || rowCounts[table]! >= 0x10000 ? 4 : 2);
    // Each coded index's width is worked out once per module, not once per column that uses it.
    const codedSizes = new Map<CodedIndexName, number>();
    const codedSize = (name: CodedIndexName) => {
      let size = codedSizes.get(name);
      if (size === undefined) {
        const def = CodedIndex[name];
        let max = 0;
        for (const table of def.tables as readonly number[]) if (table >= 0 && rowCounts[table]! > max) max = rowCounts[table]!;
        size = wide || max >= 1 << (16 - def.bits) ? 4 : 2;
        codedSizes.set(name, size);
      }
      return size;
    };
    const columnSize = (column: ColumnDef): number => {
      const type = column.type;
      switch (type.kind) {
        case 'u1':
          return 1;
        case 'u2':
          return 2;
        case 'u4':
          return 4;
        case 'string':
          return stringSize;
        case 'guid':
          return guidSize;
        case 'blob':
          return blobSize;
        case 'table':
          return tableIndexSize(type.table);
        case 'list':
          // #- only: the list points into the Ptr table when that table exists.
          if (this.uncompressed && rowCounts[type.ptrTable]! > 0) return tableIndexSize(type.ptrTable);
          return tableIndexSize(type.table);
        case 'coded':
          return codedSize(type.coded);
      }
    };

    // Check the whole table area against the stream before computing offsets: a lying row count
    // must never lead to a read, let alone an allocation, beyond the stream.
    let offset = c.position;
    const streamEnd = stream.fileOffset + stream.size;
    // Column widths follow from the heap widths and which tables and coded indexes are wide: modules alike in that
    // share one layout of each table (the arrays are never written).
    const layouts = sharedLayouts(layoutKey(stringSize, guidSize, blobSize, wide, this.uncompressed, rowCounts));
    for (let id = 0; id < TABLE_COUNT; id++) {
      const schema = TableSchemas[id]!;
      if (rowCounts[id] === 0) {
        this.info.push(undefined);
        continue;
      }
      let layout = layouts[id];
      if (!layout) {
        const sizes = schema.map(columnSize);
        const offsets: number[] = [];
        let size = 0;
        for (const width of sizes) {
          offsets.push(size);
          size += width;
        }
        layout = layouts[id] = { columnSizes: sizes, columnOffsets: offsets, rowSize: size };
      }
      const { columnSizes, columnOffsets, rowSize } = layout;
      const tableSize = rowSize * rowCounts[id]!;
      if (offset + tableSize > streamEnd) {
        throw new FormatError(
          'SG_ERR_MD_ROW_COUNT',
          `${TableNames[id]} table (${rowCounts[id]} rows of ${rowSize} bytes at ${hex(offset)}) runs past the end of the ${stream.name} stream at ${hex(streamEnd)}`,
          { structure: `${TableNames[id]} table`, fileOffset: offset, needed: tableSize, available: Math.max(0, streamEnd - offset) },
        );
      }
      this.info.push({ rowCount: rowCounts[id]!, rowSize, fileOffset: offset, columnOffsets, columnSizes });
      offset += tableSize;
    }
  }

  isPresent(table: number): boolean {
    return table < 32 ? ((this.validLow >>> table) & 1) === 1 : ((this.validHigh >>> (table - 32)) & 1) === 1;
  }

  rowCount(table: number): number {
    return this.info[table]?.rowCount ?? 0;
  }

  tableInfo(table: number): TableInfo | undefined {
    return this.info[table];
  }

  /** Index of the column `name` in `table`'s schema. */
  column(table: number, name: string): number {
    // Not a number for a name the schema lacks, also for one the prototype has ("constructor"): a bug of ours.
    const index: unknown = COLUMN_INDEX[table]![name];
    if (typeof index !== 'number') throw new Error(`internal: ${TableNames[table]} has no column ${name}`);
    return index;
  }

  /**
   * The raw value of cell (`table`, `rid`, `column`).
   * @throws FormatError SG_ERR_MD_BAD_INDEX when the row does not exist.
   */
  cell(table: number, rid: number, column: number): number {
    const info = this.info[table];
    if (!info || rid < 1 || rid > info.rowCount) throw this.badRow(table, rid);
    const at = info.fileOffset + (rid - 1) * info.rowSize + info.columnOffsets[column]!;
    switch (info.columnSizes[column]) {
      case 1:
        return this.bytes[at]!;
      case 2:
        return peekU16(this.bytes, at);
      default:
        return peekU32(this.bytes, at);
    }
  }

  /** File offset of row `rid` of `table`. */
  rowFileOffset(table: number, rid: number): number {
    const info = this.info[table];
    if (!info || rid < 1 || rid > info.rowCount) throw this.badRow(table, rid);
    return info.fileOffset + (rid - 1) * info.rowSize;
  }

  /** Splits a coded index into table and row id. Row ids are not checked here. */
  decodeCoded(name: CodedIndexName, value: number): CodedValue {
    const def = CodedIndex[name];
    const tag = value & ((1 << def.bits) - 1);
    const table = (def.tables as readonly number[])[tag] ?? -1;
    return { table, rid: value >>> def.bits };
  }

  /**
   * Every cell of the type-system tables (0x00-0x2C) that indexes something points inside it: heap indexes inside
   * their heap (`heaps` checks a blob's length prefix too), simple and coded indexes at a row that exists (0 is null),
   * coded indexes with a tag that names a table, and member lists that start inside their table and never go back.
   * Integer reads only. The Portable PDB tables index another file's tables and are left out.
   * @throws FormatError SG_ERR_MD_BAD_INDEX, SG_ERR_MD_BAD_HEAP_INDEX, SG_ERR_MD_TRUNCATED: the first bad cell, in
   *   the order of the tables, then their columns, then their rows
   */
  checkIndexes(heaps: CellHeaps): void {
    const bytes = this.bytes;
    const words = LITTLE_ENDIAN && (bytes.byteOffset & 1) === 0 ? new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length >>> 1) : null;
    // Rows per tag of each coded index, made once per module (-1 for a tag that names no table), all in one array.
    const codedLimits = new Int32Array(CODED_LIMITS_LENGTH).fill(-2);
    // One description of the column being scanned, refilled for each: no object per column.
    const column: ColumnCells = { first: 0, rowSize: 0, rowCount: 0, wide: false, words: null };
    for (let id = 0; id <= LAST_TYPE_SYSTEM_TABLE; id++) {
      const info = this.info[id];
      if (!info) continue;
      const schema = TableSchemas[id]!;
      for (let col = 0; col < schema.length; col++) {
        const type = schema[col]!.type;
        if (type.kind === 'u1' || type.kind === 'u2' || type.kind === 'u4') continue;
        const first = info.fileOffset + info.columnOffsets[col]!;
        const wide = info.columnSizes[col] === 4;
        const aligned = !wide && words !== null && (first & 1) === 0 && (info.rowSize & 1) === 0;
        column.first = first;
        column.rowSize = info.rowSize;
        column.rowCount = info.rowCount;
        column.wide = wide;
        column.words = aligned ? words : null;
        let bad: number;
        switch (type.kind) {
          case 'string':
            bad = firstOver(bytes, column, heaps.stringsSize - 1);
            if (bad) throw heapCellError(cellOf(id, schema[col]!.name, column, bad), '#Strings', valueOf(bytes, column, bad), heaps.stringsSize);
            break;
          case 'guid':
            bad = firstOver(bytes, column, heaps.guidCount);
            if (bad) throw heapCellError(cellOf(id, schema[col]!.name, column, bad), '#GUID', valueOf(bytes, column, bad), heaps.guidCount * 16);
            break;
          case 'blob':
            // A row the scan stops at has an index past the heap, or a longer length prefix, or one that runs past the
            // heap: read as a reader would, which says what is wrong (a long blob inside the heap passes, and the scan goes on).
            for (
              bad = firstBadBlob(bytes, column, heaps.blobStart, heaps.blobSize, 1);
              bad;
              bad = firstBadBlob(bytes, column, heaps.blobStart, heaps.blobSize, bad + 1)
            ) {
              const value = valueOf(bytes, column, bad);
              if (value >= heaps.blobSize) throw heapCellError(cellOf(id, schema[col]!.name, column, bad), '#Blob', value, heaps.blobSize);
              heaps.checkBlob(value);
            }
            break;
          case 'table':
            bad = firstOver(bytes, column, this.rowCount(type.table));
            if (bad) throw this.badCell(cellOf(id, schema[col]!.name, column, bad), type.table, valueOf(bytes, column, bad));
            break;
          case 'list': {
            const target = this.uncompressed && this.rowCount(type.ptrTable) > 0 ? type.ptrTable : type.table;
            // A list runs from its row's start to the next row's: one past the last row ends it.
            bad = firstBadList(bytes, column, this.rowCount(target) + 1);
            if (!bad) break;
            const cell = cellOf(id, schema[col]!.name, column, bad);
            const value = valueOf(bytes, column, bad);
            if (value > this.rowCount(target) + 1) throw this.badCell(cell, target, value);
            throw new FormatError(
              'SG_ERR_MD_BAD_INDEX',
              `${where(cell)}: the ${TableNames[target]} list starts at row ${value}, before the start of the row above`,
              { structure: `${TableNames[id]} table`, fileOffset: cell.fileOffset },
            );
          }
          case 'coded': {
            const def = CodedIndex[type.coded];
            const tables = def.tables as readonly number[];
            const base = CODED_LIMITS_AT[type.coded];
            if (codedLimits[base] === -2)
              for (let tag = 0; tag < 1 << def.bits; tag++)
                codedLimits[base + tag] = tag < tables.length && tables[tag]! >= 0 ? this.rowCount(tables[tag]!) : -1;
            bad = firstBadCoded(bytes, column, def.bits, codedLimits, base);
            if (!bad) break;
            const cell = cellOf(id, schema[col]!.name, column, bad);
            const value = valueOf(bytes, column, bad);
            const table = tables[value & ((1 << def.bits) - 1)] ?? -1;
            if (table < 0) {
              throw new FormatError('SG_ERR_MD_BAD_INDEX', `${where(cell)}: the ${type.coded} tag of ${hex(value)} names no table`, {
                structure: `${TableNames[id]} table`,
                fileOffset: cell.fileOffset,
              });
            }
            throw this.badCell(cell, table, value >>> def.bits);
          }
        }
      }
    }
  }

  private badCell(cell: Cell, target: number, rid: number): FormatError {
    return new FormatError(
      'SG_ERR_MD_BAD_INDEX',
      `${where(cell)} points at ${TableNames[target]} row ${rid}, but the table has ${this.rowCount(target)} rows`,
      { structure: `${TableNames[cell.table]} table`, fileOffset: cell.fileOffset },
    );
  }

  badRow(table: number, rid: number): FormatError {
    const name = TableNames[table] ?? `table ${hex(table)}`;
    const fileOffset = this.info[table]?.fileOffset ?? -1;
    const where = fileOffset >= 0 ? ` at ${hex(fileOffset)}` : '';
    return new FormatError('SG_ERR_MD_BAD_INDEX', `${name} row ${rid} does not exist (the table${where} has ${this.rowCount(table)} rows)`, {
      structure: `${name} table`,
      fileOffset,
    });
  }
}

/** A table's row layout: each column's offset and width, and the row's size. */
interface TableLayout {
  readonly columnSizes: readonly number[];
  readonly columnOffsets: readonly number[];
  readonly rowSize: number;
}

/**
 * What decides every column's width (II.24.2.6): the heap widths, a #- stream with Ptr tables, and which tables have
 * 2^16 rows or more or 2^(16 - tag bits) rows or more (a coded index into them is wide). The row counts below those
 * bounds do not matter.
 */
function layoutKey(stringSize: number, guidSize: number, blobSize: number, wide: boolean, uncompressed: boolean, rowCounts: readonly number[]): string {
  let key = `${stringSize}${guidSize}${blobSize}${wide ? 1 : 0}${uncompressed ? 1 : 0}`;
  for (let id = 0; id < rowCounts.length; id++) {
    const rows = rowCounts[id]!;
    // 2^11 rows is the lowest bound of any coded index (5 tag bits); a #- stream's Ptr tables count when present.
    if (rows >= 1 << 11 || (uncompressed && rows > 0 && PTR_TABLE_IDS.has(id))) key += `,${id}:${rows >= 0x10000 ? 16 : 31 - Math.clz32(rows)}`;
  }
  return key;
}

const PTR_TABLE_IDS = new Set<number>(PTR_TABLES);

/** The layouts of each table by layout key (a bounded number of keys is kept: most modules share a handful). */
const LAYOUTS = new Map<string, (TableLayout | undefined)[]>();
const MAX_LAYOUT_KEYS = 256;

function sharedLayouts(key: string): (TableLayout | undefined)[] {
  let layouts = LAYOUTS.get(key);
  if (!layouts) {
    if (LAYOUTS.size >= MAX_LAYOUT_KEYS) LAYOUTS.clear();
    layouts = new Array<TableLayout | undefined>(TABLE_COUNT);
    LAYOUTS.set(key, layouts);
  }
  return layouts;
}

/** Whether this machine stores a 16-bit word low byte first, as the file does (x64 and Arm do). */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Where each coded index's rows-per-tag start in the one array of a module's coded limits (checkIndexes). */
const CODED_LIMITS_AT = {} as Record<CodedIndexName, number>;
let codedLimitsLength = 0;
for (const name of Object.keys(CodedIndex) as CodedIndexName[]) {
  CODED_LIMITS_AT[name] = codedLimitsLength;
  codedLimitsLength += 1 << CodedIndex[name].bits;
}
const CODED_LIMITS_LENGTH = codedLimitsLength;

/** The last table of the type system (GenericParamConstraint); 0x30-0x37 are the Portable PDB tables. */
const LAST_TYPE_SYSTEM_TABLE = TableId.GenericParamConstraint;

/** What MetadataTables.checkIndexes needs of the heaps. */
export interface CellHeaps {
  readonly stringsSize: number;
  /** The #Blob heap's file offset and size. */
  readonly blobStart: number;
  readonly blobSize: number;
  readonly guidCount: number;
  /** Throws when the blob at `index` (inside the heap) has a bad length prefix or runs past the heap. */
  readonly checkBlob: (index: number) => void;
}

interface Cell {
  readonly table: number;
  readonly rid: number;
  readonly column: string;
  readonly fileOffset: number;
}

function where(cell: Cell): string {
  return `${TableNames[cell.table]} row ${cell.rid} (${cell.column}, at ${hex(cell.fileOffset)})`;
}

function heapCellError(cell: Cell, heap: string, index: number, size: number): FormatError {
  const what = size === 0 ? `the module has no ${heap} stream (stream names are case-sensitive)` : `the ${heap} heap is ${size} bytes`;
  return new FormatError('SG_ERR_MD_BAD_HEAP_INDEX', `${where(cell)} holds ${heap} index ${hex(index)}, but ${what}`, {
    structure: `${heap} heap`,
    fileOffset: cell.fileOffset,
    needed: index,
    available: size,
  });
}

/** One column of a table: where its first cell is, the row stride, the rows and the cell width. */
interface ColumnCells {
  first: number;
  rowSize: number;
  rowCount: number;
  wide: boolean;
  /** The file as 16-bit words when a narrow column's cells all sit at even offsets (a little-endian machine): one read a cell. */
  words: Uint16Array | null;
}

/** The cell of row `rid` of a column, for an error. */
function cellOf(table: number, column: string, c: ColumnCells, rid: number): Cell {
  return { table, rid, column, fileOffset: c.first + (rid - 1) * c.rowSize };
}

/** The value of row `rid` of a column. */
function valueOf(bytes: Uint8Array, c: ColumnCells, rid: number): number {
  return (c.wide ? peekU32 : peekU16)(bytes, c.first + (rid - 1) * c.rowSize);
}

// The scans below read every cell of a column: each is a loop over integers with no allocation, the bulk of the
// verdict's cost (about 20 million cells in Mono's 2,800 assemblies).

/** The first row whose cell is over `limit` (0 is always allowed), or 0. */
function firstOver(bytes: Uint8Array, c: ColumnCells, limit: number): number {
  let at = c.first;
  if (c.words) {
    const words = c.words;
    const step = c.rowSize >>> 1;
    for (let rid = 1, w = at >>> 1; rid <= c.rowCount; rid++, w += step) {
      const value = words[w]!;
      if (value > limit && value !== 0) return rid;
    }
  } else if (c.wide) {
    for (let rid = 1; rid <= c.rowCount; rid++, at += c.rowSize) {
      const value = (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
      if (value > limit && value !== 0) return rid;
    }
  } else {
    for (let rid = 1; rid <= c.rowCount; rid++, at += c.rowSize) {
      const value = bytes[at]! | (bytes[at + 1]! << 8);
      if (value > limit && value !== 0) return rid;
    }
  }
  return 0;
}

/**
 * The first row from `from` on whose blob index is past the heap, or whose blob is not a short one inside it (a
 * one-byte length prefix whose blob ends inside the heap: nearly every blob), or 0.
 */
function firstBadBlob(bytes: Uint8Array, c: ColumnCells, heapStart: number, heapSize: number, from: number): number {
  const end = heapStart + heapSize;
  for (let rid = from, at = c.first + (from - 1) * c.rowSize; rid <= c.rowCount; rid++, at += c.rowSize) {
    const value = c.wide ? (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0 : bytes[at]! | (bytes[at + 1]! << 8);
    if (value === 0) continue;
    if (value >= heapSize) return rid;
    const prefix = bytes[heapStart + value]!;
    if ((prefix & 0x80) !== 0 || heapStart + value + 1 + prefix > end) return rid;
  }
  return 0;
}

/** The first row whose list start is over `limit`, or (not 0) below the start of the row above, or 0. */
function firstBadList(bytes: Uint8Array, c: ColumnCells, limit: number): number {
  let previous = 0;
  if (c.words) {
    const words = c.words;
    const step = c.rowSize >>> 1;
    for (let rid = 1, w = c.first >>> 1; rid <= c.rowCount; rid++, w += step) {
      const value = words[w]!;
      if (value > limit) return rid;
      if (value === 0) continue;
      if (value < previous) return rid;
      previous = value;
    }
    return 0;
  }
  for (let rid = 1, at = c.first; rid <= c.rowCount; rid++, at += c.rowSize) {
    const value = c.wide ? (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0 : bytes[at]! | (bytes[at + 1]! << 8);
    if (value > limit) return rid;
    if (value === 0) continue;
    if (value < previous) return rid;
    previous = value;
  }
  return 0;
}

/** The first row whose coded index (not 0) has a tag naming no table or a row past that table, or 0. */
function firstBadCoded(bytes: Uint8Array, c: ColumnCells, bits: number, limits: Int32Array, base: number): number {
  const mask = (1 << bits) - 1;
  if (c.words) {
    const words = c.words;
    const step = c.rowSize >>> 1;
    for (let rid = 1, w = c.first >>> 1; rid <= c.rowCount; rid++, w += step) {
      const value = words[w]!;
      if (value !== 0 && value >>> bits > limits[base + (value & mask)]!) return rid;
    }
    return 0;
  }
  for (let rid = 1, at = c.first; rid <= c.rowCount; rid++, at += c.rowSize) {
    const value = c.wide ? (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0 : bytes[at]! | (bytes[at + 1]! << 8);
    if (value !== 0 && value >>> bits > limits[base + (value & mask)]!) return rid;
  }
  return 0;
}
