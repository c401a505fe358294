// Writes rewritten metadata where the old metadata was, so that `fix` keeps the input's size (ECMA-335 II.25,
// PE/COFF). What compilers put after the metadata in .text (the "tail": managed resources, the signature slot, the
// debug directory and its data, the import table with its lookup table, hint/name entries and DLL name, the entry
// point stub `jmp [IAT]`, Roslyn's mapped field data) moves up by the metadata's growth: within .text's file
// alignment padding (the output has the input's size), or within .text grown in the file by FileAlignment units
// (when its address range has room), or, split where no structure spans, partly into a new section at the end.
// Every pointer into what moved is rewritten, then the output is read back and compared with the input. Method
// bodies, the CLI header, the IAT of Roslyn and mcs (at the start of .text) and everything before the metadata keep
// their addresses.
// The plan is made only when every byte of the tail belongs to a structure read from the headers (or is zero
// padding), and every RVA that points into the metadata or the tail is one of the pointers rewritten here;
// anything else returns undefined and the caller keeps its old layout (a new section for the metadata).
import type { MetadataEditor } from './metadata-writer.js';
import type { ModuleMetadata } from './module-metadata.js';
import { TableId } from './schema.js';
import { CorFlags, parseCorHeader, type CorHeader } from '../pe/cor-header.js';
import { DataDirectoryIndex, getDataDirectory, parsePeImage, rvaToFileOffset, type PeImage, type SectionHeader } from '../pe/pe-image.js';
import { appendSection, growSectionRawData } from '../pe/pe-writer.js';

/** The section that holds the moved tail when .text has no room for it. */
export const STRONG_NAME_TAIL_SECTION = '.sgtail';

/** How the output was laid out. */
export type RelayoutPath =
  /** Everything stays in .text, within its file alignment padding: the output has the input's size. */
  | 'in-place'
  /** .text grows in the file by FileAlignment units (its address space has room), later sections move up in the file. */
  | 'text-grown'
  /** The tail goes into a new section at the end (.text has no room in memory). */
  | 'tail-moved';

export interface Relayout {
  readonly bytes: Uint8Array;
  readonly path: RelayoutPath;
  readonly metadataSize: number;
}

/** The tail moves by a multiple of this, so that every alignment in it (field data: 8) is kept. */
const TAIL_ALIGNMENT = 16;
const DEBUG_ENTRY_SIZE = 28;
const IMPORT_DESCRIPTOR_SIZE = 20;
const RELOC_HIGHLOW = 3;
const RELOC_DIR64 = 10;
const IMAGE_BASE_FIELD = { pe32: 28, pe32Plus: 24 } as const;
const ENTRY_POINT_FIELD = 16;
/** Directories a relayout may move (besides the CLI header's own pointers); any other must not touch the region. */
const MOVABLE_DIRECTORIES = new Set<number>([DataDirectoryIndex.Import, DataDirectoryIndex.Debug, 12 /* IAT */]);

interface Range {
  readonly rva: number;
  readonly size: number;
  readonly what: string;
}

interface Stub {
  readonly rva: number;
  readonly size: number;
  /** RVA of the operand (an absolute address with a base relocation). */
  readonly operand: number;
  readonly operandSize: 4 | 8;
  /** RVA of the IAT slot the operand points at. */
  readonly slot: number;
}

interface Relocation {
  readonly type: number;
  readonly rva: number;
}

/** Everything the tail holds and every pointer into it, read from the headers. */
interface TailPlan {
  readonly section: SectionHeader;
  readonly metadataStart: number;
  readonly tailStart: number;
  readonly tailEnd: number;
  readonly fieldRows: readonly { rid: number; rva: number; size: number }[];
  readonly thunkArrays: readonly { rva: number; count: number }[];
  readonly stub: Stub | undefined;
  readonly relocations: readonly Relocation[] | undefined;
  readonly imageBase: bigint;
  /** Addresses in the tail where no structure spans (where it may be split), in order. */
  readonly splits: readonly number[];
}

/** Import names (DLL and function names) longer than this are not read: the layout is not understood. */
const MAX_NAME = 1024;

/** Length of the NUL-terminated name at `at`. */
function nameLength(bytes: Uint8Array, at: number): number {
  const end = bytes.subarray(at, at + MAX_NAME + 1).indexOf(0);
  if (end < 0) refuse('an import name without its NUL');
  return end;
}

const u32 = (bytes: Uint8Array, at: number): number => new DataView(bytes.buffer, bytes.byteOffset).getUint32(at, true);
const alignUp = (n: number, to: number): number => Math.ceil(n / to) * to;

class NotUnderstood extends Error {}
const refuse = (why: string): never => {
  throw new NotUnderstood(why);
};

/**
 * Reads what lies after the metadata in its section and every pointer into it; throws NotUnderstood for anything
 * it does not know.
 */
function planTail(image: PeImage, cor: CorHeader, module: ModuleMetadata, slotKept: boolean): TailPlan {
  const bytes = image.bytes;
  if (!(cor.flags & CorFlags.ILOnly) || cor.flags & CorFlags.NativeEntryPoint) refuse('not IL-only');
  for (const d of [cor.codeManagerTable, cor.vtableFixups, cor.exportAddressTableJumps, cor.managedNativeHeader]) {
    if (d.rva !== 0 || d.size !== 0) refuse('native code directories in the CLI header');
  }
  const metadataStart = cor.metadata.rva;
  const section = image.sections.find((s) => metadataStart >= s.virtualAddress && metadataStart < s.virtualAddress + s.virtualSize);
  if (!section || section.virtualSize === 0 || section.virtualSize > section.sizeOfRawData) refuse('metadata section');
  const s = section!;
  const tailStart = metadataStart + cor.metadata.size;
  const tailEnd = s.virtualAddress + s.virtualSize;
  if (cor.metadata.size % 4 !== 0 || tailStart > tailEnd) refuse('metadata size');
  // The file alignment padding after the section's data is where the tail grows: it must hold nothing.
  const rawEnd = s.pointerToRawData + s.sizeOfRawData;
  for (let i = s.pointerToRawData + s.virtualSize; i < rawEnd; i++) if (bytes[i] !== 0) refuse('bytes after VirtualSize');
  const region = { start: metadataStart, end: tailEnd };
  const inRegion = (rva: number) => rva >= region.start && rva < region.end;
  const inTail = (rva: number) => rva >= tailStart && rva < tailEnd;
  const known: Range[] = [];
  /** A structure that must lie wholly in the tail or wholly outside the metadata and tail. */
  const structure = (rva: number, size: number, what: string): boolean => {
    const end = rva + Math.max(size, 1);
    const overlaps = rva < region.end && end > region.start;
    if (!overlaps) return false;
    if (!(rva >= tailStart && rva + size <= tailEnd)) refuse(`${what} straddles or lies in the metadata`);
    known.push({ rva, size, what });
    return true;
  };

  // Data directories: only Import, Debug and IAT may point into the region.
  for (const [index, d] of image.dataDirectories.entries()) {
    if (index === DataDirectoryIndex.Certificate || (d.virtualAddress === 0 && d.size === 0)) continue;
    if (MOVABLE_DIRECTORIES.has(index)) structure(d.virtualAddress, d.size, `directory ${index}`);
    else if (d.virtualAddress < region.end && d.virtualAddress + Math.max(d.size, 1) > region.start) refuse(`directory ${index} in the region`);
  }
  if (cor.resources.size > 0 || cor.resources.rva !== 0) structure(cor.resources.rva, cor.resources.size, 'managed resources');
  if (cor.strongNameSignature.size > 0 || cor.strongNameSignature.rva !== 0) {
    if (structure(cor.strongNameSignature.rva, cor.strongNameSignature.size, 'signature slot') && !slotKept) refuse('a slot of another size');
  }

  // Debug directory entries and their data (data not mapped into memory is refused: it would need its own move).
  const debug = getDataDirectory(image, DataDirectoryIndex.Debug);
  if (debug.virtualAddress !== 0 && debug.size > 0) {
    if (debug.size % DEBUG_ENTRY_SIZE !== 0) refuse('debug directory size');
    const at = rvaToFileOffset(image, debug.virtualAddress, debug.size, 'debug directory');
    for (let i = 0; i < debug.size / DEBUG_ENTRY_SIZE; i++) {
      const e = at + i * DEBUG_ENTRY_SIZE;
      const size = u32(bytes, e + 16);
      const address = u32(bytes, e + 20);
      const pointer = u32(bytes, e + 24);
      if (address === 0) {
        if (pointer !== 0 && size !== 0) refuse('debug data outside the image');
        continue;
      }
      if (pointer !== rvaToFileOffset(image, address, size, 'debug data')) refuse('debug data pointers disagree');
      structure(address, size, `debug data ${i}`);
    }
  }

  // Imports: descriptors, lookup tables, IAT, hint/name entries, DLL names.
  const thunk = image.isPe32Plus ? 8 : 4;
  const thunkArrays = new Map<number, number>();
  const iatSlots = new Set<number>();
  const imports = getDataDirectory(image, DataDirectoryIndex.Import);
  if (imports.virtualAddress !== 0) {
    // The table must lie inside a section (this refuses it otherwise); its descriptors are read by RVA below.
    rvaToFileOffset(image, imports.virtualAddress, IMPORT_DESCRIPTOR_SIZE, 'import table');
    let count = 0;
    for (; ; count++) {
      if (count > 64) refuse('import descriptors');
      const d = rvaToFileOffset(image, imports.virtualAddress + count * IMPORT_DESCRIPTOR_SIZE, IMPORT_DESCRIPTOR_SIZE, 'import descriptor');
      const lookup = u32(bytes, d);
      const name = u32(bytes, d + 12);
      const first = u32(bytes, d + 16);
      if (lookup === 0 && name === 0 && first === 0) break;
      if (name === 0 || first === 0) refuse('import descriptor');
      structure(name, nameLength(bytes, rvaToFileOffset(image, name, 1, 'DLL name')) + 1, 'DLL name');
      for (const [array, isIat] of [
        [lookup, false],
        [first, true],
      ] as const) {
        if (array === 0) continue;
        let n = 0;
        for (; ; n++) {
          if (n > 256) refuse('import thunks');
          const t = rvaToFileOffset(image, array + n * thunk, thunk, 'import thunk');
          const low = u32(bytes, t);
          const high = thunk === 8 ? u32(bytes, t + 4) : 0;
          if (low === 0 && high === 0) break;
          if (isIat) iatSlots.add(array + n * thunk);
          const byOrdinal = thunk === 8 ? high === 0x80000000 : (low & 0x80000000) !== 0;
          if (byOrdinal) continue;
          if (high !== 0) refuse('import thunk');
          structure(low, 2 + nameLength(bytes, rvaToFileOffset(image, low, 3, 'hint/name') + 2) + 1, 'hint/name');
        }
        const previous = thunkArrays.get(array);
        if (previous !== undefined && previous !== n) refuse('import thunk arrays');
        thunkArrays.set(array, n);
        structure(array, (n + 1) * thunk, isIat ? 'IAT' : 'import lookup table');
      }
    }
    structure(imports.virtualAddress, (count + 1) * IMPORT_DESCRIPTOR_SIZE, 'import descriptors');
  }

  // The image base and the entry point: none, or a stub that jumps through an IAT slot.
  const opt = image.optionalHeaderFileOffset;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const imageBase = image.isPe32Plus ? view.getBigUint64(opt + IMAGE_BASE_FIELD.pe32Plus, true) : BigInt(view.getUint32(opt + IMAGE_BASE_FIELD.pe32, true));
  const entry = view.getUint32(opt + ENTRY_POINT_FIELD, true);
  let stub: Stub | undefined;
  if (entry !== 0) {
    const e = rvaToFileOffset(image, entry, image.isPe32Plus ? 12 : 6, 'entry point');
    if (!image.isPe32Plus && bytes[e] === 0xff && bytes[e + 1] === 0x25) {
      stub = { rva: entry, size: 6, operand: entry + 2, operandSize: 4, slot: Number(BigInt(u32(bytes, e + 2)) - imageBase) };
    } else if (image.isPe32Plus && bytes[e] === 0x48 && bytes[e + 1] === 0xa1 && bytes[e + 10] === 0xff && bytes[e + 11] === 0xe0) {
      stub = { rva: entry, size: 12, operand: entry + 2, operandSize: 8, slot: Number(view.getBigUint64(e + 2, true) - imageBase) };
    } else refuse('entry point');
    if (!iatSlots.has(stub!.slot)) refuse('entry point stub target');
    structure(stub!.rva, stub!.size, 'entry point stub');
  }

  // Base relocations: inside the region, only the stub's operand.
  let relocations: Relocation[] | undefined;
  const relocDir = getDataDirectory(image, DataDirectoryIndex.BaseRelocation);
  if (relocDir.virtualAddress !== 0 && relocDir.size > 0) {
    relocations = [];
    const at = rvaToFileOffset(image, relocDir.virtualAddress, relocDir.size, 'base relocations');
    for (let b = at; b < at + relocDir.size; ) {
      if (b + 8 > at + relocDir.size) refuse('relocation block');
      const page = u32(bytes, b);
      const size = u32(bytes, b + 4);
      if (size < 8 || size % 2 !== 0 || b + size > at + relocDir.size) refuse('relocation block');
      for (let k = b + 8; k < b + size; k += 2) {
        const entry = bytes[k]! | (bytes[k + 1]! << 8);
        const type = entry >>> 12;
        if (type === 0) continue;
        // HIGHADJ (4) takes a second slot, and others belong to other machines: only these two are rewritten.
        if (type !== RELOC_HIGHLOW && type !== RELOC_DIR64) refuse(`relocation type ${type}`);
        const rva = page + (entry & 0xfff);
        if (inRegion(rva) || (rva < region.start && rva + 8 > region.start)) {
          const expected = stub && rva === stub.operand && type === (stub.operandSize === 4 ? RELOC_HIGHLOW : RELOC_DIR64);
          if (!expected) refuse('relocation into the region');
        }
        relocations.push({ type, rva });
      }
      b += size;
    }
    if (stub && inTail(stub.rva) && !relocations.some((r) => r.rva === stub!.operand)) refuse('the stub has no relocation');
  }

  // Method bodies may not lie in the region; field data may lie in the tail (Roslyn puts it last) and moves.
  const tables = module.tables;
  for (let rid = 1; rid <= tables.rowCount(TableId.MethodDef); rid++) {
    const rva = tables.cell(TableId.MethodDef, rid, 0);
    if (rva !== 0 && inRegion(rva)) refuse('a method body after the metadata');
  }
  const fieldRows: { rid: number; rva: number; size: number }[] = [];
  for (let rid = 1; rid <= tables.rowCount(TableId.FieldRva); rid++) {
    const rva = tables.cell(TableId.FieldRva, rid, 0);
    if (!inRegion(rva)) continue;
    if (!inTail(rva)) refuse('field data in the metadata');
    fieldRows.push({ rid, rva, size: 0 });
  }
  // Field data runs from each field's RVA to the next known structure (or the tail's end).
  const starts = known.map((k) => k.rva).sort((a, b) => a - b);
  for (const [i, f] of fieldRows.entries()) {
    const next = [...starts, ...fieldRows.map((g) => g.rva)].filter((r) => r > f.rva).reduce((a, b) => Math.min(a, b), tailEnd);
    fieldRows[i] = { ...f, size: next - f.rva };
    known.push({ rva: f.rva, size: next - f.rva, what: 'field data' });
  }
  // Every byte of the tail is a known structure or zero padding.
  const covered = new Uint8Array(tailEnd - tailStart);
  for (const k of known) covered.fill(1, k.rva - tailStart, k.rva - tailStart + k.size);
  const tailAt = s.pointerToRawData + (tailStart - s.virtualAddress);
  for (let i = 0; i < covered.length; i++) if (!covered[i] && bytes[tailAt + i] !== 0) refuse('unknown bytes in the tail');

  return {
    section: s,
    metadataStart,
    tailStart,
    tailEnd,
    fieldRows,
    thunkArrays: [...thunkArrays].map(([rva, count]) => ({ rva, count })),
    stub,
    relocations,
    imageBase,
    splits: [...new Set(known.map((k) => k.rva))].filter((p) => !known.some((k) => k.rva < p && p < k.rva + k.size)).sort((a, b) => a - b),
  };
}

/**
 * The image with `editor`'s metadata written at the old metadata's address and the tail moved behind it, and a
 * zeroed signature slot of `slotSize` bytes when `slotSize` > 0 (else the slot the image has is kept, moved with
 * the tail), or undefined when the layout is not understood (the caller keeps its own layout).
 * Overlay data is not handled: an image with bytes after its last section that must grow is left to the caller.
 */
export function relayoutText(image: PeImage, module: ModuleMetadata, editor: MetadataEditor, slotSize: number): Relayout | undefined {
  const cor = parseCorHeader(image);
  let plan: TailPlan | undefined;
  try {
    plan = planTail(image, cor, module, slotSize === 0);
    return writeRelayout(image, cor, plan, editor, slotSize);
  } catch {
    // Not understood (NotUnderstood), or a structure the headers name does not map (FormatError): the caller's layout.
    for (const f of plan?.fieldRows ?? []) editor.setCell(TableId.FieldRva, f.rid, 'rva', f.rva);
    return undefined;
  }
}

function writeRelayout(image: PeImage, cor: CorHeader, plan: TailPlan, editor: MetadataEditor, slotSize: number): Relayout | undefined {
  const s = plan.section;
  const firstBuild = editor.build().bytes.length;
  const metadataEnd = plan.metadataStart + firstBuild;
  const opt = new DataView(image.bytes.buffer, image.bytes.byteOffset + image.optionalHeaderFileOffset);
  const fileAlignment = opt.getUint32(36, true);
  const sizeOfImage = opt.getUint32(56, true);
  // How far .text may reach in memory (the next section, or the image's end) and in the file (its raw data).
  const virtualLimit = Math.min(sizeOfImage, ...image.sections.filter((x) => x.virtualAddress > s.virtualAddress).map((x) => x.virtualAddress));
  const sectionLimit = Math.min(s.virtualAddress + s.sizeOfRawData, virtualLimit);

  // In place: slot after the metadata, the tail after it, moved by a multiple of TAIL_ALIGNMENT.
  const delta = alignUp(Math.max(0, metadataEnd + slotSize - plan.tailStart), TAIL_ALIGNMENT);
  let path: RelayoutPath;
  let map: (rva: number) => number;
  let slotRva = metadataEnd;
  /** Where the tail is split: before it, the tail moves within .text; from it on, into the new section. */
  let split = plan.tailEnd;
  let out: Uint8Array;
  let textEnd: number;
  const grownBy = alignUp(plan.tailEnd + delta - (s.virtualAddress + s.sizeOfRawData), fileAlignment);
  let grown: Uint8Array | undefined;
  if (plan.tailEnd + delta > sectionLimit && plan.tailEnd + delta <= virtualLimit) {
    try {
      grown = growSectionRawData(image, s, grownBy);
    } catch {
      grown = undefined;
    }
  }
  if (plan.tailEnd + delta <= sectionLimit || grown) {
    path = grown ? 'text-grown' : 'in-place';
    map = (rva) => (rva >= plan.tailStart && rva < plan.tailEnd ? rva + delta : rva);
    out = grown ?? Uint8Array.from(image.bytes);
    textEnd = plan.tailEnd + delta;
  } else {
    // The tail is split where no structure spans: the part before the split moves up by `delta` within .text (grown in
    // the file if need be), the rest goes into a new section. The split is as late as .text's room in memory allows,
    // so that the new section holds the fewest bytes (the imports and the stub, typically, not the embedded PDB).
    split = plan.splits.filter((p) => p > plan.tailStart && p + delta <= virtualLimit).reduce((a, b) => Math.max(a, b), plan.tailStart);
    const inText = split > plan.tailStart;
    // Without a split the slot stays in .text when it fits there; else it opens the new section.
    const slotInText = inText || metadataEnd + slotSize <= sectionLimit;
    if (metadataEnd > sectionLimit) return undefined;
    textEnd = inText ? split + delta : slotInText ? metadataEnd + slotSize : metadataEnd;
    let base = image;
    if (textEnd > s.virtualAddress + s.sizeOfRawData)
      base = parsePeImage(growSectionRawData(image, s, alignUp(textEnd - (s.virtualAddress + s.sizeOfRawData), fileAlignment)));
    const head = slotInText ? 0 : alignUp(slotSize, TAIL_ALIGNMENT);
    const offset = head + (split % TAIL_ALIGNMENT);
    if (base.bytes.length > base.endOfRawData) return undefined; // overlay: the caller's layout keeps it
    let added;
    try {
      added = appendSection(base, STRONG_NAME_TAIL_SECTION, new Uint8Array(offset + plan.tailEnd - split), s.characteristics);
    } catch {
      return undefined;
    }
    path = 'tail-moved';
    out = added.bytes;
    const at = split;
    const moved = added.rva + offset - split;
    map = (rva) => (rva >= plan.tailStart && rva < at ? rva + delta : rva >= at && rva < plan.tailEnd ? rva + moved : rva);
    if (!slotInText) slotRva = added.rva;
  }
  // Relocations, written anew when one moved; they must fit where the old ones were.
  let relocationBytes: Uint8Array | undefined;
  if (plan.relocations && plan.relocations.some((r) => map(r.rva) !== r.rva)) {
    relocationBytes = relocationBlocks(plan.relocations.map((r) => ({ type: r.type, rva: map(r.rva) })));
    if (relocationBytes.length > getDataDirectory(image, DataDirectoryIndex.BaseRelocation).size) return undefined;
  }
  // Field data that moves: the FieldRVA rows say where (the table's RVA column is 4 bytes: the size is the same).
  for (const f of plan.fieldRows) editor.setCell(TableId.FieldRva, f.rid, 'rva', map(f.rva));
  const metadata = editor.build().bytes;
  if (metadata.length !== firstBuild) {
    for (const f of plan.fieldRows) editor.setCell(TableId.FieldRva, f.rid, 'rva', f.rva);
    return undefined;
  }

  const outImage = parsePeImage(out);
  const view = new DataView(out.buffer, out.byteOffset);
  // The section header and its raw data may have moved with the headers: found again by address.
  const text = outImage.sections.find((x) => x.virtualAddress === s.virtualAddress)!;
  // The tail, copied from the input to where it goes; then the metadata and the slot over what was there.
  const pieces = [
    [plan.tailStart, split],
    [split, plan.tailEnd],
  ]
    .filter(([from, to]) => to! > from!)
    .map(([from, to]) => {
      const at = rvaToFileOffset(image, from!, to! - from!, 'tail');
      return { rva: from!, bytes: image.bytes.slice(at, at + to! - from!) };
    });
  const textAt = rvaToFileOffset(outImage, plan.metadataStart, 0, 'metadata');
  out.fill(0, textAt, text.pointerToRawData + text.sizeOfRawData);
  // .text's VirtualSize covers what it holds now, and never less than before: when part of the tail left for the new
  // section, the bytes it left are zeros within .text, and SizeOfRawData stays within VirtualSize rounded up to
  // FileAlignment, which .NET's image checks require (a larger raw size is refused as a bad image).
  view.setUint32(text.headerFileOffset + 8, Math.max(textEnd - s.virtualAddress, s.virtualSize), true);
  const finalImage = parsePeImage(out);
  const put = (rva: number, size: number) => rvaToFileOffset(finalImage, rva, size, 'relaid structure');
  for (const piece of pieces) out.set(piece.bytes, put(map(piece.rva), piece.bytes.length));
  out.set(metadata, textAt);

  // The CLI header (it is before the metadata and does not move).
  const corAt = parseCorHeader(outImage).fileOffset;
  view.setUint32(corAt + 12, metadata.length, true);
  if (cor.resources.rva !== 0) view.setUint32(corAt + 24, map(cor.resources.rva), true);
  if (slotSize > 0) {
    view.setUint32(corAt + 32, slotRva, true);
    view.setUint32(corAt + 36, slotSize, true);
  } else if (cor.strongNameSignature.rva !== 0) view.setUint32(corAt + 32, map(cor.strongNameSignature.rva), true);

  // Data directories that may have moved.
  for (const index of MOVABLE_DIRECTORIES) {
    const d = getDataDirectory(outImage, index);
    if (d.virtualAddress !== 0) view.setUint32(d.entryFileOffset, map(d.virtualAddress), true);
  }
  // Debug entries: both the RVA and the file offset of their data.
  const debug = getDataDirectory(image, DataDirectoryIndex.Debug);
  if (debug.virtualAddress !== 0 && debug.size > 0) {
    const d = put(map(debug.virtualAddress), debug.size);
    for (let i = 0; i < debug.size / DEBUG_ENTRY_SIZE; i++) {
      const e = d + i * DEBUG_ENTRY_SIZE;
      const address = view.getUint32(e + 20, true);
      if (address === 0) continue;
      view.setUint32(e + 20, map(address), true);
      view.setUint32(e + 24, put(map(address), view.getUint32(e + 16, true)), true);
    }
  }
  // Imports: descriptors, then each lookup table and IAT (hint/name RVAs).
  const imports = getDataDirectory(image, DataDirectoryIndex.Import);
  if (imports.virtualAddress !== 0) {
    for (let i = 0; ; i++) {
      const d = put(map(imports.virtualAddress) + i * IMPORT_DESCRIPTOR_SIZE, IMPORT_DESCRIPTOR_SIZE);
      if (view.getUint32(d, true) === 0 && view.getUint32(d + 12, true) === 0 && view.getUint32(d + 16, true) === 0) break;
      for (const field of [0, 12, 16]) {
        const value = view.getUint32(d + field, true);
        if (value !== 0) view.setUint32(d + field, map(value), true);
      }
    }
    const thunk = image.isPe32Plus ? 8 : 4;
    for (const array of plan.thunkArrays) {
      for (let n = 0; n < array.count; n++) {
        const t = put(map(array.rva) + n * thunk, thunk);
        const low = view.getUint32(t, true);
        const byOrdinal = thunk === 8 ? view.getUint32(t + 4, true) === 0x80000000 : (low & 0x80000000) !== 0;
        if (!byOrdinal) view.setUint32(t, map(low), true);
      }
    }
  }
  // The entry point stub and its operand (the absolute address of its IAT slot).
  if (plan.stub) {
    const stub = plan.stub;
    view.setUint32(outImage.optionalHeaderFileOffset + ENTRY_POINT_FIELD, map(stub.rva), true);
    const operandAt = put(map(stub.operand), stub.operandSize);
    const address = plan.imageBase + BigInt(map(stub.slot));
    if (stub.operandSize === 4) view.setUint32(operandAt, Number(address), true);
    else view.setBigUint64(operandAt, address, true);
  }
  if (relocationBytes) {
    const dir = getDataDirectory(finalImage, DataDirectoryIndex.BaseRelocation);
    const r = put(dir.virtualAddress, dir.size);
    out.fill(0, r, r + dir.size);
    out.set(relocationBytes, r);
    view.setUint32(dir.entryFileOffset + 4, relocationBytes.length, true);
  }
  // Read back, independently of how it was written: anything not as in the input, and the caller's layout is used.
  if (!sameStructures(image, parsePeImage(out), plan, map, metadata)) {
    for (const f of plan.fieldRows) editor.setCell(TableId.FieldRva, f.rid, 'rva', f.rva);
    return undefined;
  }
  return { bytes: out, path, metadataSize: metadata.length };
}

/** What the headers say lies in an image: read the same way from the input and the output, then compared. */
function structuresOf(image: PeImage): { resources: string; debug: string[]; imports: string[]; entry: string; relocations: string[] } {
  const bytes = image.bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const hexOf = (rva: number, size: number) =>
    Buffer.from(bytes.subarray(rvaToFileOffset(image, rva, size, 'structure'), rvaToFileOffset(image, rva, size, 'structure') + size)).toString('hex');
  const cor = parseCorHeader(image);
  const resources = cor.resources.size > 0 ? hexOf(cor.resources.rva, cor.resources.size) : '';
  const debug: string[] = [];
  const d = getDataDirectory(image, DataDirectoryIndex.Debug);
  if (d.virtualAddress !== 0) {
    const at = rvaToFileOffset(image, d.virtualAddress, d.size, 'debug directory');
    for (let i = 0; i < d.size / DEBUG_ENTRY_SIZE; i++) {
      const e = at + i * DEBUG_ENTRY_SIZE;
      const size = view.getUint32(e + 16, true);
      const address = view.getUint32(e + 20, true);
      const pointer = view.getUint32(e + 24, true);
      const head = Buffer.from(bytes.subarray(e, e + 20)).toString('hex');
      const byPointer = pointer === 0 ? '' : Buffer.from(bytes.subarray(pointer, pointer + size)).toString('hex');
      debug.push(`${head} ${address === 0 ? '' : hexOf(address, size)} ${byPointer}`);
    }
  }
  const thunk = image.isPe32Plus ? 8 : 4;
  const cString = (rva: number) => {
    const at = rvaToFileOffset(image, rva, 1, 'name');
    return Buffer.from(bytes.subarray(at, at + nameLength(bytes, at))).toString('latin1');
  };
  const slotNames = new Map<number, string>();
  const imports: string[] = [];
  const i = getDataDirectory(image, DataDirectoryIndex.Import);
  if (i.virtualAddress !== 0) {
    for (let n = 0; ; n++) {
      const at = rvaToFileOffset(image, i.virtualAddress + n * IMPORT_DESCRIPTOR_SIZE, IMPORT_DESCRIPTOR_SIZE, 'import descriptor');
      const lookup = view.getUint32(at, true);
      const name = view.getUint32(at + 12, true);
      const first = view.getUint32(at + 16, true);
      if (lookup === 0 && name === 0 && first === 0) break;
      const names = (array: number, record: boolean) => {
        const out: string[] = [];
        if (array === 0) return out;
        for (let k = 0; ; k++) {
          const t = rvaToFileOffset(image, array + k * thunk, thunk, 'thunk');
          const low = view.getUint32(t, true);
          const high = thunk === 8 ? view.getUint32(t + 4, true) : 0;
          if (low === 0 && high === 0) break;
          const ordinal = thunk === 8 ? high === 0x80000000 : (low & 0x80000000) !== 0;
          const text = ordinal ? `#${low & 0xffff}` : `${view.getUint16(rvaToFileOffset(image, low, 2, 'hint'), true)}:${cString(low + 2)}`;
          if (record) slotNames.set(array + k * thunk, `${cString(name)}!${text}`);
          out.push(text);
        }
        return out;
      };
      imports.push(
        `${cString(name)} [${names(lookup, false).join(',')}] [${names(first, true).join(',')}] ${Buffer.from(bytes.subarray(at + 4, at + 12)).toString('hex')}`,
      );
    }
  }
  const entryRva = view.getUint32(image.optionalHeaderFileOffset + ENTRY_POINT_FIELD, true);
  let entry = '';
  if (entryRva !== 0) {
    const e = rvaToFileOffset(image, entryRva, 6, 'entry point');
    const base = image.isPe32Plus
      ? view.getBigUint64(image.optionalHeaderFileOffset + IMAGE_BASE_FIELD.pe32Plus, true)
      : BigInt(view.getUint32(image.optionalHeaderFileOffset + IMAGE_BASE_FIELD.pe32, true));
    const operand = image.isPe32Plus ? view.getBigUint64(e + 2, true) : BigInt(view.getUint32(e + 2, true));
    const tail = image.isPe32Plus ? Buffer.from(bytes.subarray(e + 10, e + 12)).toString('hex') : '';
    entry = `${Buffer.from(bytes.subarray(e, e + 2)).toString('hex')} ${slotNames.get(Number(operand - base)) ?? 'unknown slot'} ${tail}`;
  }
  const relocations: string[] = [];
  const r = getDataDirectory(image, DataDirectoryIndex.BaseRelocation);
  if (r.virtualAddress !== 0 && r.size > 0) {
    const at = rvaToFileOffset(image, r.virtualAddress, r.size, 'base relocations');
    for (let b = at; b + 8 <= at + r.size; ) {
      const page = view.getUint32(b, true);
      const size = view.getUint32(b + 4, true);
      if (size < 8) break;
      for (let k = b + 8; k < b + size; k += 2) {
        const entry = view.getUint16(k, true);
        if (entry >>> 12 !== 0) relocations.push(`${entry >>> 12}:${page + (entry & 0xfff)}`);
      }
      b += size;
    }
  }
  return { resources, debug, imports, entry, relocations };
}

/** The output holds the metadata written, and every structure of the tail as the input had it, where `map` says. */
function sameStructures(input: PeImage, output: PeImage, plan: TailPlan, map: (rva: number) => number, metadata: Uint8Array): boolean {
  try {
    const a = structuresOf(input);
    const b = structuresOf(output);
    const cor = parseCorHeader(output);
    const at = rvaToFileOffset(output, cor.metadata.rva, metadata.length, 'metadata');
    if (cor.metadata.rva !== plan.metadataStart || cor.metadata.size !== metadata.length) return false;
    if (!Buffer.from(output.bytes.subarray(at, at + metadata.length)).equals(Buffer.from(metadata))) return false;
    for (const f of plan.fieldRows) {
      const from = rvaToFileOffset(input, f.rva, f.size, 'field data');
      const to = rvaToFileOffset(output, map(f.rva), f.size, 'field data');
      if (!Buffer.from(input.bytes.subarray(from, from + f.size)).equals(Buffer.from(output.bytes.subarray(to, to + f.size)))) return false;
    }
    const relocated = (list: string[], m: (rva: number) => number) =>
      list
        .map((x) => {
          const [t, rva] = x.split(':');
          return `${t}:${m(Number(rva))}`;
        })
        .sort();
    return (
      a.resources === b.resources &&
      JSON.stringify(a.debug) === JSON.stringify(b.debug) &&
      JSON.stringify(a.imports) === JSON.stringify(b.imports) &&
      a.entry === b.entry &&
      JSON.stringify(relocated(a.relocations, map)) === JSON.stringify(relocated(b.relocations, (x) => x))
    );
  } catch {
    return false;
  }
}

/** Base relocation blocks for `entries`: one per 4 KiB page, in order, each padded to 4 bytes with an ABSOLUTE entry. */
function relocationBlocks(entries: readonly Relocation[]): Uint8Array {
  const pages = new Map<number, number[]>();
  for (const e of [...entries].sort((a, b) => a.rva - b.rva)) {
    const page = e.rva & ~0xfff;
    const list = pages.get(page) ?? [];
    list.push((e.type << 12) | (e.rva & 0xfff));
    pages.set(page, list);
  }
  const parts: number[] = [];
  for (const [page, list] of [...pages].sort((a, b) => a[0] - b[0])) {
    if (list.length % 2 === 1) list.push(0);
    const size = 8 + list.length * 2;
    parts.push(page & 0xff, (page >>> 8) & 0xff, (page >>> 16) & 0xff, page >>> 24, size & 0xff, (size >>> 8) & 0xff, 0, 0);
    for (const e of list) parts.push(e & 0xff, e >>> 8);
  }
  return Uint8Array.from(parts);
}
