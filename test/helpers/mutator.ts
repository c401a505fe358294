// A seeded, structure-aware mutator of .NET assemblies, as an attacker or a broken build tool would damage one: it
// finds the structures with our own reader on the intact file (heap and coded indexes, row counts, stream headers,
// the public key blob's fields, signature and attribute blobs) and changes one of them, or flips random bytes. The
// same seed gives the same mutant, so a failing case can be replayed from the seed alone.
import { peekU32 } from '../../src/binary/byte-cursor.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { CodedIndex, TableId, TableNames, TableSchemas } from '../../src/metadata/schema.js';
import { parsePeImage } from '../../src/pe/pe-image.js';

/** xorshift32: small, seeded and the same on every machine. */
export function rng(seed: number): () => number {
  // Neighbouring seeds start far apart (a small seed's first outputs would all be small).
  let x = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

export interface Mutant {
  readonly seed: number;
  /** What was changed, in words (for a failing case's message). */
  readonly what: string;
  readonly bytes: Uint8Array;
}

interface Cell {
  readonly table: number;
  readonly column: string;
  readonly kind: string;
  readonly at: number;
  readonly size: number;
  /** The tag bits of a coded index (0 for other kinds). */
  readonly tagBits: number;
}

/** Where the structures of one intact file are: found once, used for every mutant of it. */
export interface Landmarks {
  readonly bytes: Uint8Array;
  readonly cells: readonly Cell[];
  /** File offsets of the #~ header's row counts. */
  readonly rowCounts: readonly number[];
  /** File offsets of each stream header's offset field (size follows it, then the name). */
  readonly streamHeaders: readonly number[];
  /** File offset of the Assembly row's public key blob content, and its length (0: none). */
  readonly publicKey: { readonly at: number; readonly length: number; readonly prefixAt: number };
  /** Content offsets and lengths of signature blobs (MethodDef, MemberRef, Field, StandAloneSig, TypeSpec) and of custom attribute values. */
  readonly signatures: readonly { readonly at: number; readonly length: number }[];
  readonly attributeValues: readonly { readonly at: number; readonly length: number }[];
}

export function landmarks(bytes: Uint8Array): Landmarks {
  const module = new ModuleMetadata(parsePeImage(bytes));
  const { tables, root } = module;
  const cells: Cell[] = [];
  for (let table = 0; table <= TableId.GenericParamConstraint; table++) {
    const info = tables.tableInfo(table);
    if (!info) continue;
    TableSchemas[table]!.forEach((col, c) => {
      if (col.type.kind === 'u1' || col.type.kind === 'u2' || col.type.kind === 'u4') return;
      for (let rid = 1; rid <= info.rowCount; rid++)
        cells.push({
          table,
          column: col.name,
          kind: col.type.kind,
          at: info.fileOffset + (rid - 1) * info.rowSize + info.columnOffsets[c]!,
          size: info.columnSizes[c]!,
          tagBits: col.type.kind === 'coded' ? CodedIndex[col.type.coded].bits : 0,
        });
    });
  }
  // The #~ header: 24 bytes, then a row count for each present table.
  const present = Array.from({ length: 64 }, (_, id) => id).filter((id) => tables.isPresent(id));
  const rowCounts = present.map((_, i) => root.tables.fileOffset + 24 + 4 * i);
  // The root: signature, versions, reserved, version length and string, flags, stream count, then the headers.
  const versionLength = peekU32(bytes, root.fileOffset + 12);
  const streamHeaders: number[] = [];
  let at = root.fileOffset + 16 + versionLength + 4;
  for (let i = 0; i < root.streams.length; i++) {
    streamHeaders.push(at);
    let name = at + 8;
    while (bytes[name] !== 0) name++;
    at = (name + 1 + 3) & ~3;
  }
  const blobSpan = (index: number) => ({ at: module.blobs.contentFileOffset(index), length: module.blobs.get(index).length });
  const keyIndex = module.hasManifest ? tables.cell(TableId.Assembly, 1, tables.column(TableId.Assembly, 'publicKey')) : 0;
  const key = keyIndex ? blobSpan(keyIndex) : { at: 0, length: 0 };
  const blobsOf = (table: number, column: string) =>
    Array.from({ length: tables.rowCount(table) }, (_, i) => tables.cell(table, i + 1, tables.column(table, column)))
      .filter((index) => index !== 0)
      .map(blobSpan)
      .filter((b) => b.length > 0);
  return {
    bytes,
    cells,
    rowCounts,
    streamHeaders,
    publicKey: { ...key, prefixAt: keyIndex ? (root.blob?.fileOffset ?? 0) + keyIndex : 0 },
    signatures: [
      ...blobsOf(TableId.MethodDef, 'signature'),
      ...blobsOf(TableId.MemberRef, 'signature'),
      ...blobsOf(TableId.Field, 'signature'),
      ...blobsOf(TableId.StandAloneSig, 'signature'),
      ...blobsOf(TableId.TypeSpec, 'signature'),
    ],
    attributeValues: blobsOf(TableId.CustomAttribute, 'value'),
  };
}

function write(bytes: Uint8Array, at: number, size: number, value: number): void {
  for (let i = 0; i < size; i++) bytes[at + i] = (value >>> (8 * i)) & 0xff;
}

function read(bytes: Uint8Array, at: number, size: number): number {
  let value = 0;
  for (let i = size - 1; i >= 0; i--) value = value * 256 + bytes[at + i]!;
  return value;
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** A value near `value`, near a limit, or anywhere in the cell's range. */
function nearby(random: () => number, value: number, size: number): number {
  const max = size === 4 ? 0xffffffff : 0xffff;
  const r = random();
  if (r < 0.4) return Math.min(max, value + 1 + Math.floor(random() * 64));
  if (r < 0.6) return Math.max(0, value - 1 - Math.floor(random() * 4));
  if (r < 0.8) return max - Math.floor(random() * 4);
  return Math.floor(random() * (max + 1));
}

/** The public key blob's damages: magic, bit length, exponent, cbPublicKey, a 2-byte blob, the blob type and hash algorithm. */
export const KEY_DAMAGES: readonly { readonly name: string; readonly apply: (b: Uint8Array, at: number, random: () => number, prefixAt: number) => void }[] = [
  { name: 'magic', apply: (b, at, random) => write(b, at + 20, 4, Math.floor(random() * 0xffffffff)) },
  { name: 'bitlen 0', apply: (b, at) => write(b, at + 24, 4, 0) },
  { name: 'bitlen 1023', apply: (b, at) => write(b, at + 24, 4, 1023) },
  { name: 'bitlen 2^20', apply: (b, at) => write(b, at + 24, 4, 1 << 20) },
  { name: 'exponent 0', apply: (b, at) => write(b, at + 28, 4, 0) },
  { name: 'cbPublicKey 65535', apply: (b, at) => write(b, at + 8, 4, 65535) },
  // The blob's length prefix says 2: a blob of 2 bytes, the rest of the key left as heap bytes.
  { name: 'a 2-byte blob', apply: (b, _at, _random, prefixAt) => write(b, prefixAt, 1, 2) },
  { name: 'bType', apply: (b, at) => write(b, at + 12, 1, 0x07) },
  { name: 'hash alg', apply: (b, at) => write(b, at + 4, 4, 0x1234) },
];

/** `bytes` (a copy of the landmarks' file) with its public key blob damaged by KEY_DAMAGES[index]. */
export function withDamagedKey(marks: Landmarks, index: number, random: () => number = rng(index)): Uint8Array {
  const bytes = Uint8Array.from(marks.bytes);
  KEY_DAMAGES[index]!.apply(bytes, marks.publicKey.at, random, marks.publicKey.prefixAt);
  return bytes;
}

/**
 * The mutant of `seed`: one structure changed (a table cell, a row count, a stream header, a key blob field, a
 * signature or attribute blob byte), or 1 to 8 random bytes flipped, or the file cut short.
 */
export function mutate(marks: Landmarks, seed: number): Mutant {
  const random = rng(seed);
  const bytes = Uint8Array.from(marks.bytes);
  const kind = random();
  const done = (what: string): Mutant => ({ seed, what, bytes });
  if (kind < 0.35 && marks.cells.length) {
    const cell = pick(random, marks.cells);
    const before = read(bytes, cell.at, cell.size);
    let value = nearby(random, before, cell.size);
    if (cell.kind === 'coded' && random() < 0.5) {
      // Another tag (and sometimes the lowest bits of the row), the rest of the row kept.
      const bits = cell.tagBits + Math.floor(random() * 3);
      value = (before & ~((1 << bits) - 1)) | Math.floor(random() * (1 << bits));
    }
    write(bytes, cell.at, cell.size, value);
    return done(`${TableNames[cell.table]}.${cell.column} (${cell.kind}) at 0x${cell.at.toString(16)}: ${before} -> ${value}`);
  }
  if (kind < 0.42) {
    const at = pick(random, marks.rowCounts);
    const before = read(bytes, at, 4);
    const value = nearby(random, before, 4);
    write(bytes, at, 4, value);
    return done(`row count at 0x${at.toString(16)}: ${before} -> ${value}`);
  }
  if (kind < 0.5) {
    const header = pick(random, marks.streamHeaders);
    const field = Math.floor(random() * 3);
    if (field === 2) {
      const at = header + 8 + Math.floor(random() * 4);
      bytes[at] = random() < 0.5 ? bytes[at]! ^ 0x20 : Math.floor(random() * 256);
      return done(`stream header name byte at 0x${at.toString(16)}`);
    }
    const at = header + 4 * field;
    const before = read(bytes, at, 4);
    const value = nearby(random, before, 4);
    write(bytes, at, 4, value);
    return done(`stream header ${field === 0 ? 'offset' : 'size'} at 0x${at.toString(16)}: ${before} -> ${value}`);
  }
  if (kind < 0.6 && marks.publicKey.length) {
    const damage = pick(random, KEY_DAMAGES);
    damage.apply(bytes, marks.publicKey.at, random, marks.publicKey.prefixAt);
    return done(`public key blob: ${damage.name}`);
  }
  if (kind < 0.72) {
    const blobs = random() < 0.6 ? marks.signatures : marks.attributeValues;
    if (blobs.length) {
      const blob = pick(random, blobs);
      const at = blob.at + Math.floor(random() * blob.length);
      bytes[at] = Math.floor(random() * 256);
      return done(`${blobs === marks.signatures ? 'signature' : 'attribute value'} blob byte at 0x${at.toString(16)}`);
    }
  }
  if (kind < 0.78) {
    const length = Math.floor(random() * bytes.length);
    return { seed, what: `cut to ${length} bytes`, bytes: bytes.subarray(0, length) };
  }
  const flips = 1 + Math.floor(random() * 8);
  const at: number[] = [];
  for (let f = 0; f < flips; f++) {
    // Half of them in the first 1 KiB (headers), half anywhere.
    const where = random() < 0.5 ? Math.floor(random() * Math.min(1024, bytes.length)) : Math.floor(random() * bytes.length);
    bytes[where] = Math.floor(random() * 256);
    at.push(where);
  }
  return done(`random bytes at ${at.map((a) => `0x${a.toString(16)}`).join(', ')}`);
}
