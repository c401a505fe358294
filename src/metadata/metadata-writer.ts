// Writes a module's metadata back with cells changed and blobs added (ECMA-335 II.24.2). Everything not
// changed is kept as it was: the stream order, every heap byte (the #Blob heap only grows at its end), every
// table row and the table stream's header. When the #Blob heap grows past 64 KiB its index widens to 4 bytes
// and every table is laid out anew; otherwise the table stream is copied and only the changed cells rewritten.
import { FormatError, hex } from '../core/errors.js';
import type { ModuleMetadata } from './module-metadata.js';
import { TABLE_COUNT, TableNames, TableSchemas } from './schema.js';

const BLOB_WIDE = 0x04;
const align4 = (n: number): number => (n + 3) & ~3;

/** The compressed unsigned integer of ECMA-335 II.23.2 (blob length prefixes). */
export function encodeCompressedU32(n: number): Uint8Array {
  if (n < 0 || n > 0x1fffffff || !Number.isInteger(n)) throw new RangeError(`${n} cannot be a compressed integer`);
  if (n < 0x80) return Uint8Array.of(n);
  if (n < 0x4000) return Uint8Array.of(0x80 | (n >>> 8), n & 0xff);
  return Uint8Array.of(0xc0 | (n >>> 24), (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** What a rewrite changed, for reports and tests. */
export interface MetadataRewrite {
  /** The new metadata: root, stream headers and streams, 4-byte aligned. */
  readonly bytes: Uint8Array;
  /** True when the #Blob index widened and every table row was laid out anew. */
  readonly relaidTables: boolean;
}

/**
 * Collects changes to one module's metadata and writes the result. Only what strong-naming needs is
 * offered: changing cells of existing rows and adding blobs. Row counts never change, so no table or
 * coded index changes width, and no token in IL or signatures moves.
 */
export class MetadataEditor {
  private readonly cells = new Map<number, number>();
  private readonly added: Uint8Array[] = [];
  private readonly addedIndex = new Map<string, number>();
  private blobEnd: number;

  /**
   * @throws FormatError SG_ERR_MD_BAD_TABLES for `#-` (edit-and-continue) metadata, which is not rewritten.
   */
  constructor(private readonly module: ModuleMetadata) {
    const root = module.root;
    if (root.tables.name !== '#~' || root.minimalDelta) {
      throw new FormatError(
        'SG_ERR_MD_BAD_TABLES',
        `the metadata uses the uncompressed ${root.tables.name}${root.minimalDelta ? ' (#JTD)' : ''} table stream of edit-and-continue builds, which signgate does not rewrite; rebuild the assembly without edit and continue`,
        {
          structure: 'metadata root',
          fileOffset: root.fileOffset,
        },
      );
    }
    this.blobEnd = root.blob?.size ?? 0;
    // A heap that is absent, or holds nothing, still needs its empty blob at index 0 before anything is added.
    if (this.blobEnd === 0) this.pushBlobBytes(Uint8Array.of(0));
  }

  private pushBlobBytes(bytes: Uint8Array): number {
    const at = this.blobEnd;
    this.added.push(bytes);
    this.blobEnd += bytes.length;
    return at;
  }

  /** Adds a blob at the end of the #Blob heap (once per distinct content) and returns its index. */
  addBlob(content: Uint8Array): number {
    const key = Buffer.from(content).toString('base64');
    const known = this.addedIndex.get(key);
    if (known !== undefined) return known;
    const prefix = encodeCompressedU32(content.length);
    const entry = new Uint8Array(prefix.length + content.length);
    entry.set(prefix);
    entry.set(content, prefix.length);
    const index = this.pushBlobBytes(entry);
    this.addedIndex.set(key, index);
    return index;
  }

  /** Sets cell (`table`, `rid`, `column`) to `value` (a heap index, a constant or an index, as stored). */
  setCell(table: number, rid: number, column: string, value: number): void {
    const tables = this.module.tables;
    if (rid < 1 || rid > tables.rowCount(table)) throw tables.badRow(table, rid);
    this.cells.set(this.key(table, rid, tables.column(table, column)), value >>> 0);
  }

  private key(table: number, rid: number, column: number): number {
    return (table * 0x1000000 + rid) * 16 + column;
  }

  /** True when nothing has been changed. */
  get unchanged(): boolean {
    return this.cells.size === 0 && this.added.length === 0;
  }

  /** Writes the new metadata. */
  build(): MetadataRewrite {
    const module = this.module;
    const root = module.root;
    const bytes = module.image.bytes;
    const blobStream = root.blob;
    const blobSize = align4(this.blobEnd);
    const tablesStream = root.tables;
    const oldHeapSizes = module.tables.heapSizes;
    const newHeapSizes = blobSize >= 0x10000 ? oldHeapSizes | BLOB_WIDE : oldHeapSizes;
    const relaidTables = newHeapSizes !== oldHeapSizes;
    const tableBytes = relaidTables ? this.layOutTables(newHeapSizes) : this.patchTables();

    // Streams keep their order; a #Blob stream is added after the others when the module had none.
    const streams = root.streams.map((s) => ({
      name: s.name,
      content: s === tablesStream ? tableBytes : s === blobStream ? this.blobHeap(blobSize) : bytes.subarray(s.fileOffset, s.fileOffset + s.size),
    }));
    if (!blobStream && this.added.length > 0) streams.push({ name: '#Blob', content: this.blobHeap(blobSize) });

    // The root up to the stream headers is copied: signature, versions, version string and flags.
    const headerEnd = rootHeaderEnd(bytes, root.fileOffset);
    const fixed = bytes.subarray(root.fileOffset, headerEnd);
    const names = streams.map((s) => Buffer.from(`${s.name}\0`, 'ascii'));
    const headersSize = streams.reduce((n, _s, i) => n + 8 + align4(names[i]!.length), 0);
    let offset = align4(fixed.length + headersSize);
    const placed = streams.map((s) => {
      const at = offset;
      offset = align4(offset + s.content.length);
      return at;
    });
    const out = new Uint8Array(offset);
    const view = new DataView(out.buffer);
    out.set(fixed, 0);
    view.setUint16(fixed.length - 2, streams.length, true);
    let h = fixed.length;
    streams.forEach((s, i) => {
      view.setUint32(h, placed[i]!, true);
      view.setUint32(h + 4, align4(s.content.length), true);
      out.set(names[i]!, h + 8);
      h += 8 + align4(names[i]!.length);
      out.set(s.content, placed[i]!);
    });
    return { bytes: out, relaidTables };
  }

  private blobHeap(size: number): Uint8Array {
    const stream = this.module.root.blob;
    const out = new Uint8Array(size);
    let at = 0;
    if (stream) {
      out.set(this.module.image.bytes.subarray(stream.fileOffset, stream.fileOffset + stream.size));
      at = stream.size;
    }
    for (const part of this.added) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  /** The table stream as it was, with the changed cells written over (no column changed width). */
  private patchTables(): Uint8Array {
    const tables = this.module.tables;
    const stream = this.module.root.tables;
    const out = Uint8Array.from(this.module.image.bytes.subarray(stream.fileOffset, stream.fileOffset + stream.size));
    const view = new DataView(out.buffer);
    for (const [key, value] of this.cells) {
      const column = key % 16;
      const row = Math.floor(key / 16);
      const table = Math.floor(row / 0x1000000);
      const rid = row % 0x1000000;
      const info = tables.tableInfo(table)!;
      const at = tables.rowFileOffset(table, rid) - stream.fileOffset + info.columnOffsets[column]!;
      writeCell(view, at, info.columnSizes[column]!, value, `${TableNames[table]} row ${rid}`);
    }
    return out;
  }

  /** Every table laid out with the new heap index widths (the #Blob index grew to 4 bytes). */
  private layOutTables(heapSizes: number): Uint8Array {
    const tables = this.module.tables;
    const stream = this.module.root.tables;
    const bytes = this.module.image.bytes;
    // Header: everything before the first row, with the new HeapSizes byte.
    let firstRow = stream.fileOffset + stream.size;
    let lastRowEnd = 0;
    const widths: number[][] = [];
    for (let id = 0; id < TABLE_COUNT; id++) {
      const info = tables.tableInfo(id);
      if (!info) continue;
      firstRow = Math.min(firstRow, info.fileOffset);
      lastRowEnd = Math.max(lastRowEnd, info.fileOffset + info.rowSize * info.rowCount);
      widths[id] = TableSchemas[id]!.map((col, i) => (col.type.kind === 'blob' ? 4 : info.columnSizes[i]!));
    }
    if (lastRowEnd === 0) firstRow = lastRowEnd = stream.fileOffset + stream.size; // no rows: the header is the whole stream
    const headerSize = firstRow - stream.fileOffset;
    let size = headerSize;
    for (let id = 0; id < TABLE_COUNT; id++) {
      const w = widths[id];
      if (w) size += w.reduce((a, b) => a + b, 0) * tables.rowCount(id);
    }
    const trailer = bytes.subarray(lastRowEnd, stream.fileOffset + stream.size);
    const out = new Uint8Array(align4(size + trailer.length));
    const view = new DataView(out.buffer);
    out.set(bytes.subarray(stream.fileOffset, firstRow), 0);
    out[6] = heapSizes;
    let at = headerSize;
    for (let id = 0; id < TABLE_COUNT; id++) {
      const w = widths[id];
      if (!w) continue;
      const rows = tables.rowCount(id);
      for (let rid = 1; rid <= rows; rid++) {
        for (let c = 0; c < w.length; c++) {
          const changed = this.cells.get(this.key(id, rid, c));
          writeCell(view, at, w[c]!, changed ?? tables.cell(id, rid, c), `${TableNames[id]} row ${rid}`);
          at += w[c]!;
        }
      }
    }
    out.set(trailer, at);
    return out;
  }
}

function writeCell(view: DataView, at: number, width: number, value: number, where: string): void {
  if (width === 1) view.setUint8(at, value);
  else if (width === 2) {
    if (value > 0xffff)
      throw new FormatError('SG_ERR_MD_BAD_INDEX', `${where}: value ${hex(value)} does not fit its 2-byte column`, {
        structure: 'table stream',
        fileOffset: at,
      });
    view.setUint16(at, value, true);
  } else view.setUint32(at, value, true);
}

/** File offset just past the root's Streams count: where the stream headers begin. */
function rootHeaderEnd(bytes: Uint8Array, rootAt: number): number {
  const versionLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(rootAt + 12, true);
  return rootAt + 16 + versionLength + 4;
}
