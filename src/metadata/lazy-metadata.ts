// A module's metadata over a buffer that holds only what has been read of the file so far. The metadata root and
// the table stream's header are read first; a table row, a whole table (where a reader scans it), a string and a
// blob are read when they are first asked for. `fix` plans a set from the Assembly row, the AssemblyRef and
// ManifestResource rows and the assembly's attributes: of FSharp.Compiler.Service.dll's 11 MB of metadata that is
// its CustomAttribute table (2.5 MB, scanned for the assembly's rows) and a few KiB more.
//
// What is read is what ModuleMetadata would read from the whole file, byte for byte: the same parsers run over the
// same bytes, and so give the same values and the same errors. One difference: the assembly's attributes are found
// once and charged to the reader's budget once, where ModuleMetadata finds (and charges) them on every call, so a
// file near the budget's limit that fix planning refused after three scans is now planned. Nothing outside the
// metadata is read here.
import { parseCorHeader } from '../pe/cor-header.js';
import { rvaToFileOffset, type PeImage } from '../pe/pe-image.js';
import type { ByteCursor } from '../binary/byte-cursor.js';
import type { ReaderMeter } from './budget.js';
import { BlobHeap, StringHeap } from './heaps.js';
import { ModuleMetadata, type CustomAttributeRow, type ModuleMetadataOptions } from './module-metadata.js';
import { parseMetadataRoot, type MetadataRoot, type StreamHeader } from './root.js';
import { CodedIndex, TableId, TableNames } from './schema.js';
import { MetadataTables, type TableInfo } from './tables.js';

/**
 * Reads `length` bytes of the file at file offset `at` into the image's buffer at the same offset (fewer at the end
 * of the file; the rest stays zero, as a read of the whole metadata cut at the end of the file leaves it).
 */
export type ReadBytes = (at: number, length: number) => void;

/** The metadata root is at most this long: 16 fixed bytes, a 256-byte version, 4 more, 32 stream headers of 40. */
const MAX_ROOT_BYTES = 16 + 256 + 4 + 32 * 40;
/** The table stream's header is at most this long: 24 fixed bytes, 64 row counts, 4 bytes of extra data. */
const MAX_TABLES_HEADER_BYTES = 24 + 64 * 4 + 4;
/** Bytes are read in pieces of this size (from the start of the metadata), each once. */
const PIECE_BYTES = 16 * 1024;

/** Which pieces of the metadata have been read; reads only within it. */
class MetadataPieces {
  private readonly loaded: Uint8Array;

  constructor(
    private readonly read: ReadBytes,
    private readonly start: number,
    private readonly size: number,
    private readonly piece: number,
  ) {
    this.loaded = new Uint8Array(Math.ceil(size / piece));
  }

  /** Makes the bytes [from, to) of the file present (clamped to the metadata). */
  ensure(from: number, to: number): void {
    const first = Math.max(0, Math.floor((from - this.start) / this.piece));
    const last = Math.min(this.loaded.length, Math.ceil((to - this.start) / this.piece));
    for (let piece = first; piece < last; piece++) {
      if (this.loaded[piece]) continue;
      // One read for a run of pieces not read yet.
      let end = piece + 1;
      while (end < last && !this.loaded[end]) end++;
      const at = this.start + piece * this.piece;
      this.read(at, Math.min(this.start + this.size, this.start + end * this.piece) - at);
      this.loaded.fill(1, piece, end);
      piece = end - 1;
    }
  }
}

class LazyTables extends MetadataTables {
  constructor(
    bytes: Uint8Array,
    root: MetadataRoot,
    private readonly pieces: MetadataPieces,
  ) {
    super(bytes, root);
  }

  override cell(table: number, rid: number, column: number): number {
    const info = super.tableInfo(table);
    if (info && rid >= 1 && rid <= info.rowCount) {
      const at = info.fileOffset + (rid - 1) * info.rowSize;
      this.pieces.ensure(at, at + info.rowSize);
    }
    return super.cell(table, rid, column);
  }

  /** The table's layout, with the whole table read: who asks for it reads its rows directly. */
  override tableInfo(table: number): TableInfo | undefined {
    const info = super.tableInfo(table);
    if (info) this.pieces.ensure(info.fileOffset, info.fileOffset + info.rowCount * info.rowSize);
    return info;
  }
}

class LazyStrings extends StringHeap {
  constructor(
    bytes: Uint8Array,
    stream: StreamHeader | undefined,
    private readonly readerMeter: ReaderMeter,
    private readonly pieces: MetadataPieces,
  ) {
    super(bytes, stream, readerMeter);
  }

  /** Reads as far as StringHeap looks for the NUL (maxNameBytes and one). */
  override get(index: number): string {
    if (index > 0 && index < this.size) {
      const from = this.start + index;
      this.pieces.ensure(from, Math.min(this.start + this.size, from + this.readerMeter.budgets.maxNameBytes + 1));
    }
    return super.get(index);
  }
}

class LazyBlobs extends BlobHeap {
  constructor(
    bytes: Uint8Array,
    stream: StreamHeader | undefined,
    private readonly pieces: MetadataPieces,
  ) {
    super(bytes, stream);
  }

  /** The length prefix is read first (at most 4 bytes), then the content it gives. */
  override cursor(index: number): ByteCursor {
    if (index > 0 && index < this.size) this.pieces.ensure(this.start + index, Math.min(this.start + this.size, this.start + index + 4));
    const cursor = super.cursor(index);
    this.pieces.ensure(cursor.start, cursor.end);
    return cursor;
  }
}

/**
 * ModuleMetadata over `image`, whose buffer holds the PE headers and the CLI header but not (yet) the metadata:
 * `read` fills it in as the metadata is read. The assembly's attributes are found once (planning asks for them for
 * each of ReferenceAssembly, InternalsVisibleTo and AssemblySignatureKey).
 * `pieceBytes` is how much is read at least at a time (tests read byte by byte: what is not asked for stays zero).
 * @throws FormatError as `new ModuleMetadata(image)` over the whole file
 */
export function lazyModuleMetadata(image: PeImage, read: ReadBytes, options: ModuleMetadataOptions = {}, pieceBytes = PIECE_BYTES): ModuleMetadata {
  // What the constructor reads first, in its order: the same errors come from the same calls.
  const md = parseCorHeader(image).metadata;
  const at = rvaToFileOffset(image, md.rva, md.size, 'metadata root');
  const pieces = new MetadataPieces(read, at, md.size, pieceBytes);
  pieces.ensure(at, at + Math.min(md.size, MAX_ROOT_BYTES));
  const root = parseMetadataRoot(image.bytes, at, md.size);
  pieces.ensure(root.tables.fileOffset, root.tables.fileOffset + Math.min(root.tables.size, MAX_TABLES_HEADER_BYTES));
  if (root.guid) pieces.ensure(root.guid.fileOffset, root.guid.fileOffset + root.guid.size);
  return new LazyModuleMetadata(image, pieces, options);
}

class LazyModuleMetadata extends ModuleMetadata {
  private attributes: CustomAttributeRow[] | undefined;

  constructor(image: PeImage, pieces: MetadataPieces, options: ModuleMetadataOptions) {
    super(image, options);
    // The constructor's tables and heaps read the buffer as it is; these read what they need first.
    const bytes = image.bytes;
    Object.assign(this, {
      tables: new LazyTables(bytes, this.root, pieces),
      strings: new LazyStrings(bytes, this.root.strings, this.meter, pieces),
      blobs: new LazyBlobs(bytes, this.root.blob, pieces),
    });
  }

  override get assemblyAttributes(): CustomAttributeRow[] {
    return (this.attributes ??= this.hasManifest ? this.assemblyAttributeRows().map((rid) => this.customAttribute(rid)) : []);
  }

  /**
   * The CustomAttribute rows whose parent is the Assembly row, in table order. Every row is looked at, as
   * customAttributesOf does (the table should be sorted by parent, but unsorted files exist), and charged alike; the
   * raw parent value is searched for in the table's bytes (the system's search, not a loop over 200,000 rows), and a
   * match counts where a row starts. After a match inside a row the search goes on at the next row: at most one
   * search per row.
   */
  private assemblyAttributeRows(): number[] {
    const C = TableId.CustomAttribute;
    const info = this.tables.tableInfo(C);
    if (!info) return [];
    this.meter.rowsScanned(info.rowCount, info.fileOffset, TableNames[C]!);
    const def = CodedIndex.HasCustomAttribute;
    const wanted = ((1 << def.bits) | (def.tables as readonly number[]).indexOf(TableId.Assembly)) >>> 0;
    const parent = Buffer.alloc(info.columnSizes[0]!);
    parent.writeUIntLE(wanted, 0, parent.length);
    const bytes = this.image.bytes;
    const step = info.rowSize;
    const table = Buffer.from(bytes.buffer, bytes.byteOffset + info.fileOffset, info.rowCount * step);
    const rows: number[] = [];
    for (let at = table.indexOf(parent); at >= 0; ) {
      const row = Math.floor(at / step);
      if (at === row * step) rows.push(row + 1);
      at = table.indexOf(parent, (row + 1) * step);
    }
    return rows;
  }
}
