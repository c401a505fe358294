// Adds a section at the end of a PE image (PE/COFF: section table, SizeOfImage, SizeOfInitializedData).
// Every RVA stays valid, so code, resources, relocations and the debug directory need no change; file offsets
// move only when the headers must grow (and are moved with them). The caller points directories into the new section.
import { FormatError, hex } from '../core/errors.js';
import {
  DataDirectoryIndex,
  getCertificateTable,
  getDataDirectory,
  getOverlay,
  parsePeImage,
  rvaToFileOffset,
  type ByteRange,
  type PeImage,
  type SectionHeader,
} from './pe-image.js';

/** IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ: what a read-only data section carries. */
export const READ_ONLY_DATA = 0x40000040;

const SECTION_HEADER_SIZE = 40;
const IMAGE_SCN_CNT_CODE = 0x20;

export interface AddedSection {
  /** The new image. */
  readonly bytes: Uint8Array;
  /** RVA and file offset of the new section's first byte. */
  readonly rva: number;
  readonly fileOffset: number;
  /** Bytes the headers grew by (every section's raw data moved up in the file by as much), or 0. */
  readonly headersGrewBy: number;
  /** Where the overlay (bytes that followed the last section) went: right after the new section. */
  readonly overlay?: ByteRange;
}

const alignUp = (n: number, to: number): number => Math.ceil(n / to) * to;

/** Optional header fields the section table depends on (offsets from the start of the optional header). */
const Field = { SizeOfCode: 4, SizeOfInitializedData: 8, SectionAlignment: 32, FileAlignment: 36, SizeOfImage: 56 } as const;

/**
 * Appends a section holding `data` after the last section, in the file and in memory.
 * When the headers have no room for one more section header (compilers leave none: three headers end at 0x1F0,
 * the first section starts at 0x200), the headers grow by FileAlignment and every section's raw data moves up
 * in the file by as much; RVAs do not change, and the file offsets that point at raw data (the debug
 * directory's PointerToRawData, the COFF symbol table) are moved with it. Bytes that sit where the new header
 * goes but belong to no counted section (old x64 and IA64 compilers leave an empty `.reloc` header there that
 * NumberOfSections does not count) move up by one header, past the new one.
 * Overlay data (bytes after the last section) is carried after the new section, unchanged.
 * @throws FormatError SG_ERR_PE_NO_ROOM when the headers cannot grow (the first section starts right after them in
 *   memory, or a data directory points into the bytes after the section table), SG_ERR_PE_OVERLAY for an
 *   Authenticode certificate table (it must be removed first; it would no longer match anyway)
 */
export function appendSection(image: PeImage, name: string, data: Uint8Array, characteristics = READ_ONLY_DATA): AddedSection {
  const opt = new DataView(image.bytes.buffer, image.bytes.byteOffset + image.optionalHeaderFileOffset);
  const sectionAlignment = opt.getUint32(Field.SectionAlignment, true);
  const fileAlignment = opt.getUint32(Field.FileAlignment, true);
  if (!isPowerOfTwo(fileAlignment) || !isPowerOfTwo(sectionAlignment) || fileAlignment > sectionAlignment) {
    throw new FormatError(
      'SG_ERR_PE_BAD_OPTIONAL_HEADER',
      `FileAlignment ${hex(fileAlignment)} and SectionAlignment ${hex(sectionAlignment)} are not powers of two with FileAlignment <= SectionAlignment`,
      {
        structure: 'optional header',
        fileOffset: image.optionalHeaderFileOffset + Field.SectionAlignment,
      },
    );
  }
  if (getCertificateTable(image)) {
    throw new FormatError('SG_ERR_PE_OVERLAY', `the file carries an Authenticode certificate table; a section cannot be added in front of it`, {
      structure: 'certificate table',
      fileOffset: getCertificateTable(image)!.fileOffset,
    });
  }
  let grewBy = 0;
  if (!hasRoomForSectionHeader(image)) {
    const room = withRoomForSectionHeader(image, fileAlignment);
    image = parsePeImage(room.bytes);
    grewBy = room.grewBy;
  }
  const overlay = getOverlay(image);
  const bytes = image.bytes;
  const headerAt = image.sectionTableFileOffset + image.numberOfSections * SECTION_HEADER_SIZE;
  let virtualEnd = 0;
  for (const s of image.sections) virtualEnd = Math.max(virtualEnd, s.virtualAddress + Math.max(s.virtualSize, s.sizeOfRawData));
  const rva = alignUp(virtualEnd, sectionAlignment);
  const fileOffset = alignUp(Math.max(image.endOfRawData, image.sizeOfHeaders), fileAlignment);
  const rawSize = alignUp(data.length, fileAlignment);
  const out = new Uint8Array(fileOffset + rawSize + (overlay?.size ?? 0));
  out.set(bytes.subarray(0, Math.min(image.endOfRawData, fileOffset)));
  out.set(data, fileOffset);
  if (overlay) out.set(bytes.subarray(overlay.fileOffset, overlay.fileOffset + overlay.size), fileOffset + rawSize);
  const view = new DataView(out.buffer);
  const nameBytes = Buffer.from(name, 'ascii');
  if (nameBytes.length > 8) throw new RangeError(`section name ${name} is longer than 8 bytes`);
  out.set(nameBytes, headerAt);
  view.setUint32(headerAt + 8, data.length, true); // VirtualSize
  view.setUint32(headerAt + 12, rva, true);
  view.setUint32(headerAt + 16, rawSize, true);
  view.setUint32(headerAt + 20, fileOffset, true);
  view.setUint32(headerAt + 36, characteristics >>> 0, true);
  view.setUint16(image.peHeaderFileOffset + 4 + 2, image.numberOfSections + 1, true);
  const o = image.optionalHeaderFileOffset;
  view.setUint32(o + Field.SizeOfImage, alignUp(rva + data.length, sectionAlignment), true);
  // A code section counts in SizeOfCode, any other in SizeOfInitializedData.
  const sizeField = characteristics & IMAGE_SCN_CNT_CODE ? Field.SizeOfCode : Field.SizeOfInitializedData;
  view.setUint32(o + sizeField, (view.getUint32(o + sizeField, true) + rawSize) >>> 0, true);
  return { bytes: out, rva, fileOffset, headersGrewBy: grewBy, ...(overlay ? { overlay: { fileOffset: fileOffset + rawSize, size: overlay.size } } : {}) };
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

function firstRawData(image: PeImage): number {
  return Math.min(image.sizeOfHeaders, ...image.sections.filter((s) => s.sizeOfRawData > 0).map((s) => s.pointerToRawData));
}

function hasRoomForSectionHeader(image: PeImage): boolean {
  const headerAt = image.sectionTableFileOffset + image.numberOfSections * SECTION_HEADER_SIZE;
  if (headerAt + SECTION_HEADER_SIZE > firstRawData(image)) return false;
  for (let i = headerAt; i < headerAt + SECTION_HEADER_SIZE; i++) if (image.bytes[i] !== 0) return false;
  return true;
}

/** Size of one IMAGE_DEBUG_DIRECTORY entry; PointerToRawData is its last field. */
const DEBUG_ENTRY_SIZE = 28;

/**
 * The image with room for one more section header right after the table. Bytes in use there (an uncounted section
 * header) move up by one header; when that or the header itself does not fit before the first section's raw data,
 * the headers grow by FileAlignment and every raw-data file offset moves to match.
 */
function withRoomForSectionHeader(image: PeImage, fileAlignment: number): { bytes: Uint8Array; grewBy: number } {
  const bytes = image.bytes;
  const headerAt = image.sectionTableFileOffset + image.numberOfSections * SECTION_HEADER_SIZE;
  const oldHeaders = image.sizeOfHeaders;
  const rawStart = firstRawData(image);
  if (rawStart < oldHeaders) {
    throw new FormatError(
      'SG_ERR_PE_NO_ROOM',
      `section raw data starts at ${hex(rawStart)}, inside the headers (SizeOfHeaders ${hex(oldHeaders)}); the headers cannot grow`,
      {
        structure: 'section table',
        fileOffset: headerAt,
      },
    );
  }
  // The bytes after the table that are in use (not counted as a section, so the loader ignores them).
  let usedEnd = headerAt;
  for (let i = headerAt; i < rawStart; i++) if (bytes[i] !== 0) usedEnd = i + 1;
  if (usedEnd > headerAt) {
    // They are kept, one header further up, unless the image maps them: a directory that points there would move.
    for (const [index, d] of image.dataDirectories.entries()) {
      if (index === DataDirectoryIndex.Certificate || d.virtualAddress === 0 || d.size === 0) continue;
      if (d.virtualAddress < usedEnd && d.virtualAddress + d.size > headerAt) {
        throw new FormatError(
          'SG_ERR_PE_NO_ROOM',
          `the bytes after the section table at ${hex(headerAt)} are in use by data directory ${index} (RVA ${hex(d.virtualAddress)}), exactly where the new section header would go; signgate does not move them`,
          { structure: 'section table', fileOffset: headerAt },
        );
      }
    }
  }
  const needed = Math.max(headerAt, usedEnd) + SECTION_HEADER_SIZE;
  const delta = needed <= rawStart ? 0 : alignUp(needed - rawStart, fileAlignment);
  const newHeaders = oldHeaders + delta;
  const firstVirtual = Math.min(...image.sections.map((s) => s.virtualAddress));
  if (newHeaders > firstVirtual) {
    throw new FormatError(
      'SG_ERR_PE_NO_ROOM',
      `the headers (${hex(oldHeaders)} bytes) must grow to ${hex(newHeaders)} to hold one more section header, but the first section starts at RVA ${hex(firstVirtual)} (SectionAlignment leaves no room in the first page); signgate cannot add its section to this image`,
      { structure: 'optional header', fileOffset: image.optionalHeaderFileOffset + 60 },
    );
  }
  const out = new Uint8Array(bytes.length + delta);
  out.set(bytes.subarray(0, headerAt));
  out.set(bytes.subarray(headerAt, usedEnd), headerAt + SECTION_HEADER_SIZE);
  out.set(bytes.subarray(rawStart), rawStart + delta);
  if (delta === 0) return { bytes: out, grewBy: 0 };
  const view = new DataView(out.buffer);
  view.setUint32(image.optionalHeaderFileOffset + 60, newHeaders, true);
  const moved = (offset: number) => (offset >= oldHeaders ? offset + delta : offset);
  for (const s of image.sections) {
    if (s.pointerToRawData !== 0) view.setUint32(s.headerFileOffset + 20, moved(s.pointerToRawData), true);
  }
  const symbols = view.getUint32(image.peHeaderFileOffset + 4 + 8, true);
  if (symbols !== 0) view.setUint32(image.peHeaderFileOffset + 4 + 8, moved(symbols), true);
  const debug = getDataDirectory(image, DataDirectoryIndex.Debug);
  if (debug.virtualAddress !== 0 && debug.size >= DEBUG_ENTRY_SIZE) {
    const count = Math.floor(debug.size / DEBUG_ENTRY_SIZE);
    const at = moved(rvaToFileOffset(image, debug.virtualAddress, count * DEBUG_ENTRY_SIZE, 'debug directory'));
    for (let i = 0; i < count; i++) {
      const field = at + i * DEBUG_ENTRY_SIZE + 24;
      const pointer = view.getUint32(field, true);
      if (pointer !== 0) view.setUint32(field, moved(pointer), true);
    }
  }
  return { bytes: out, grewBy: delta };
}

/**
 * The image with `by` zero bytes (a multiple of FileAlignment) added to the raw data of `section`, at its end. The
 * raw data of every section after it in the file moves up by as much, with the file pointers into it (the COFF
 * symbol table; the debug directory's PointerToRawData is the caller's, who knows where the directory is) and the
 * overlay. No RVA changes: the caller may then use the new bytes up to the section's next RVA.
 * @throws FormatError SG_ERR_PE_NO_ROOM when another section's raw data overlaps or starts inside the section's, or
 *   `by` is not a multiple of FileAlignment; SG_ERR_PE_OVERLAY for an Authenticode certificate table
 */
export function growSectionRawData(image: PeImage, section: SectionHeader, by: number): Uint8Array {
  const opt = new DataView(image.bytes.buffer, image.bytes.byteOffset + image.optionalHeaderFileOffset);
  const fileAlignment = opt.getUint32(Field.FileAlignment, true);
  const end = section.pointerToRawData + section.sizeOfRawData;
  const where = { structure: 'section header', fileOffset: section.headerFileOffset };
  if (getCertificateTable(image))
    throw new FormatError('SG_ERR_PE_OVERLAY', 'the file carries an Authenticode certificate table; a section cannot grow in front of it', where);
  if (by <= 0 || !isPowerOfTwo(fileAlignment) || by % fileAlignment !== 0) {
    throw new FormatError(
      'SG_ERR_PE_NO_ROOM',
      `section ${JSON.stringify(section.name)} cannot grow by ${by} bytes (FileAlignment ${hex(fileAlignment)})`,
      where,
    );
  }
  for (const s of image.sections) {
    if (s.headerFileOffset === section.headerFileOffset || s.sizeOfRawData === 0) continue;
    if (s.pointerToRawData < end && s.pointerToRawData + s.sizeOfRawData > section.pointerToRawData) {
      throw new FormatError('SG_ERR_PE_NO_ROOM', `section ${JSON.stringify(s.name)}'s raw data overlaps that of ${JSON.stringify(section.name)}`, where);
    }
  }
  const bytes = image.bytes;
  const out = new Uint8Array(bytes.length + by);
  out.set(bytes.subarray(0, end));
  out.set(bytes.subarray(end), end + by);
  const view = new DataView(out.buffer);
  const moved = (offset: number) => (offset >= end ? offset + by : offset);
  for (const s of image.sections) {
    if (s.headerFileOffset === section.headerFileOffset) view.setUint32(s.headerFileOffset + 16, s.sizeOfRawData + by, true);
    else if (s.sizeOfRawData !== 0) view.setUint32(s.headerFileOffset + 20, moved(s.pointerToRawData), true);
  }
  const symbols = view.getUint32(image.peHeaderFileOffset + 4 + 8, true);
  if (symbols !== 0) view.setUint32(image.peHeaderFileOffset + 4 + 8, moved(symbols), true);
  const o = image.optionalHeaderFileOffset;
  const sizeField = section.characteristics & IMAGE_SCN_CNT_CODE ? Field.SizeOfCode : Field.SizeOfInitializedData;
  view.setUint32(o + sizeField, (view.getUint32(o + sizeField, true) + by) >>> 0, true);
  return out;
}
