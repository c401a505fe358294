// A small metadata writer for tests: heaps, a #~ or #- table stream from rows given by column name,
// a metadata root (ECMA-335 II.24.2), and a graft that puts the result into a copy of a real image.
import { CodedIndex, TABLE_COUNT, TableSchemas, type ColumnDef } from '../../src/metadata/schema.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { parseCorHeader } from '../../src/pe/cor-header.js';

const align = (n: number, to: number) => Math.ceil(n / to) * to;

/** #Strings: index 0 is the empty string. */
export class StringsBuilder {
  private readonly parts: Uint8Array[] = [new Uint8Array(1)];
  private size = 1;

  /** Appends raw bytes (the caller adds the NUL) and returns their index. */
  raw(bytes: Uint8Array): number {
    const at = this.size;
    this.parts.push(bytes);
    this.size += bytes.length;
    return at;
  }

  add(value: string): number {
    return this.raw(Buffer.from(`${value}\0`, 'utf8'));
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

/** #Blob: index 0 is the empty blob; each blob gets its compressed length prefix (II.24.2.4). */
export class BlobsBuilder {
  private readonly parts: Uint8Array[] = [new Uint8Array(1)];
  private size = 1;

  add(content: Uint8Array): number {
    const at = this.size;
    const prefix = compressedU32(content.length);
    this.parts.push(prefix, content);
    this.size += prefix.length + content.length;
    return at;
  }

  bytes(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

export function compressedU32(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  if (n < 0x4000) return Uint8Array.of(0x80 | (n >>> 8), n & 0xff);
  return Uint8Array.of(0xc0 | (n >>> 24), (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
}

/** A coded index value: the table's tag in the low bits (II.24.2.6). */
export function coded(name: keyof typeof CodedIndex, table: number, rid: number): number {
  const def = CodedIndex[name];
  const tag = (def.tables as readonly number[]).indexOf(table);
  if (tag < 0) throw new Error(`${name} has no tag for table ${table}`);
  return ((rid << def.bits) | tag) >>> 0;
}

export interface MetadataSpec {
  readonly tableStream?: '#~' | '#-';
  readonly strings: Uint8Array;
  readonly blobs: Uint8Array;
  /** Raw #GUID heap (16 bytes per GUID). */
  readonly guids?: Uint8Array;
  /** Rows per table id; a missing column is 0. */
  readonly rows: Partial<Record<number, readonly Readonly<Record<string, number>>[]>>;
  /** More rows, all columns 0, per table id (after those in `rows`): large tables without building each row. */
  readonly zeroRows?: Partial<Record<number, number>>;
  /** The HeapSizes byte (default 0x07: every heap index 4 bytes); clear bits make that heap's indexes 2 bytes. */
  readonly heapSizes?: number;
  /** The Sorted mask (default 0: no table claims to be sorted). */
  readonly sorted?: bigint;
}

/** The Sorted mask compilers write: the tables ECMA-335 and Portable PDB require sorted (SRM checks the PDB ones). */
export const SORTED_TABLES = [0x09, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x18, 0x19, 0x1c, 0x1d, 0x29, 0x2a, 0x2c, 0x32, 0x36, 0x37].reduce(
  (mask, id) => mask | (1n << BigInt(id)),
  0n,
);

/** The table stream, with heap indexes as `heapSizes` says (default all 4 bytes) and row-count-sized table indexes. */
function tableStream(spec: MetadataSpec): Uint8Array {
  const uncompressed = spec.tableStream === '#-';
  const counts = Array.from({ length: TABLE_COUNT }, (_, id) => (spec.rows[id]?.length ?? 0) + (spec.zeroRows?.[id] ?? 0));
  const heapSizes = spec.heapSizes ?? 0x07;
  const indexSize = (table: number) => (counts[table]! >= 0x10000 ? 4 : 2);
  const size = (column: ColumnDef): number => {
    const t = column.type;
    switch (t.kind) {
      case 'u1':
        return 1;
      case 'u2':
        return 2;
      case 'u4':
        return 4;
      case 'string':
        return heapSizes & 0x01 ? 4 : 2;
      case 'guid':
        return heapSizes & 0x02 ? 4 : 2;
      case 'blob':
        return heapSizes & 0x04 ? 4 : 2;
      case 'table':
        return indexSize(t.table);
      case 'list':
        return indexSize(uncompressed && counts[t.ptrTable]! > 0 ? t.ptrTable : t.table);
      case 'coded': {
        const def = CodedIndex[t.coded];
        const max = Math.max(...def.tables.map((table) => (table < 0 ? 0 : counts[table]!)));
        return max >= 1 << (16 - def.bits) ? 4 : 2;
      }
    }
  };
  const present = counts
    .map((n, id) => [n, id] as const)
    .filter(([n]) => n > 0)
    .map(([, id]) => id);
  let valid = 0n;
  for (const id of present) valid |= 1n << BigInt(id);
  const rowBytes = present.map((id) => {
    const schema = TableSchemas[id]!;
    const sizes = schema.map(size);
    const rowSize = sizes.reduce((a, b) => a + b, 0);
    const rows = spec.rows[id] ?? [];
    const out = Buffer.alloc(rowSize * counts[id]!);
    rows.forEach((row, r) => {
      let at = r * rowSize;
      schema.forEach((column, c) => {
        const value = row[column.name] ?? 0;
        if (sizes[c] === 1) out.writeUInt8(value, at);
        else if (sizes[c] === 2) out.writeUInt16LE(value, at);
        else out.writeUInt32LE(value >>> 0, at);
        at += sizes[c]!;
      });
    });
    return out;
  });
  const header = Buffer.alloc(24 + 4 * present.length);
  header.writeUInt8(2, 4); // MajorVersion
  header.writeUInt8(heapSizes, 6); // HeapSizes
  header.writeUInt8(1, 7); // Reserved, always 1
  header.writeBigUInt64LE(valid, 8);
  header.writeBigUInt64LE(spec.sorted ?? 0n, 16);
  present.forEach((id, i) => header.writeUInt32LE(counts[id]!, 24 + 4 * i));
  return Buffer.concat([header, ...rowBytes]);
}

/** A metadata root (BSJB) with the table stream, #Strings, #GUID and #Blob. */
export function buildMetadata(spec: MetadataSpec): Uint8Array {
  const version = Buffer.alloc(12);
  version.write('v4.0.30319');
  const streams: [string, Uint8Array][] = [
    [spec.tableStream ?? '#~', tableStream(spec)],
    ['#Strings', spec.strings],
    ['#GUID', spec.guids ?? new Uint8Array(16).fill(0x5a)],
    ['#Blob', spec.blobs],
  ];
  const headerSize = (name: string) => 8 + align(name.length + 1, 4);
  const rootSize = 16 + version.length + 4 + streams.reduce((n, [name]) => n + headerSize(name), 0);
  const root = Buffer.alloc(rootSize);
  root.writeUInt32LE(0x424a5342, 0); // BSJB
  root.writeUInt16LE(1, 4);
  root.writeUInt16LE(1, 6);
  root.writeUInt32LE(version.length, 12);
  version.copy(root, 16);
  root.writeUInt16LE(streams.length, 16 + version.length + 2);
  let at = 16 + version.length + 4;
  let offset = rootSize;
  const bodies: Uint8Array[] = [];
  for (const [name, body] of streams) {
    const padded = Buffer.alloc(align(body.length, 4));
    padded.set(body);
    root.writeUInt32LE(offset, at);
    root.writeUInt32LE(padded.length, at + 4);
    root.write(name, at + 8, 'latin1');
    at += headerSize(name);
    offset += padded.length;
    bodies.push(padded);
  }
  return Buffer.concat([root, ...bodies]);
}

/**
 * A copy of `base` whose CLI header points at `metadata`, appended to the last section (whose raw and
 * virtual sizes grow to hold it). Everything else, including the signature slot, stays where it was.
 */
export function withMetadata(base: Uint8Array, metadata: Uint8Array): Uint8Array {
  const image = parsePeImage(base);
  const cor = parseCorHeader(image);
  const last = image.sections[image.sections.length - 1]!;
  const fileAlignment = 0x200;
  const mdFileOffset = last.pointerToRawData + align(last.sizeOfRawData, fileAlignment);
  const mdRva = last.virtualAddress + (mdFileOffset - last.pointerToRawData);
  const rawSize = mdFileOffset - last.pointerToRawData + align(metadata.length, fileAlignment);
  const out = Buffer.alloc(last.pointerToRawData + rawSize);
  out.set(base.subarray(0, Math.min(base.length, last.pointerToRawData + last.sizeOfRawData)));
  out.set(metadata, mdFileOffset);
  out.writeUInt32LE(rawSize, last.headerFileOffset + 8); // VirtualSize
  out.writeUInt32LE(rawSize, last.headerFileOffset + 16); // SizeOfRawData
  const sizeOfImageAt = image.optionalHeaderFileOffset + 56;
  out.writeUInt32LE(align(last.virtualAddress + rawSize, 0x2000), sizeOfImageAt);
  out.writeUInt32LE(mdRva, cor.fileOffset + 8); // MetaData.VirtualAddress
  out.writeUInt32LE(metadata.length, cor.fileOffset + 12); // MetaData.Size
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}
