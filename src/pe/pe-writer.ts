// Adds a section at the end of a PE image (PE/COFF: section table, SizeOfImage, SizeOfInitializedData).
// Nothing already in the image moves: every RVA and file offset stays valid, so code, resources,
// relocations and the debug directory need no change. The caller points directories into the new section.
import { FormatError, hex } from '../core/errors.js';
import { DataDirectoryIndex, getCertificateTable, getDataDirectory, getOverlay, parsePeImage, rvaToFileOffset, type PeImage } from './pe-image.js';

/** IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ: what a read-only data section carries. */
export const READ_ONLY_DATA = 0x40000040;

const SECTION_HEADER_SIZE = 40;

export interface AddedSection {
  /** The new image. */
  readonly bytes: Uint8Array;
  /** RVA and file offset of the new section's first byte. */
  readonly rva: number;
  readonly fileOffset: number;
}

const alignUp = (n: number, to: number): number => Math.ceil(n / to) * to;

/** Optional header fields the section table depends on (offsets from the start of the optional header). */
const Field = { SizeOfInitializedData: 8, SectionAlignment: 32, FileAlignment: 36, SizeOfImage: 56 } as const;

/**
 * Appends a section holding `data` after the last section, in the file and in memory.
 * When the headers have no room for one more section header (compilers leave none: three headers end at 0x1F0,
 * the first section starts at 0x200), the headers grow by FileAlignment and every section's raw data moves up
 * in the file by as much; RVAs do not change, and the file offsets that point at raw data (the debug
 * directory's PointerToRawData, the COFF symbol table) are moved with it.
 * @throws FormatError SG_ERR_PE_NO_ROOM when the headers cannot grow (the first section starts right after them in memory),
 *   SG_ERR_PE_OVERLAY when bytes other than nothing follow the last section (an Authenticode
 *   certificate table must be removed first; it would no longer match anyway)
 */
export function appendSection(image: PeImage, name: string, data: Uint8Array, characteristics = READ_ONLY_DATA): AddedSection {
  const opt = new DataView(image.bytes.buffer, image.bytes.byteOffset + image.optionalHeaderFileOffset);
  const sectionAlignment = opt.getUint32(Field.SectionAlignment, true);
  const fileAlignment = opt.getUint32(Field.FileAlignment, true);
  if (!isPowerOfTwo(fileAlignment) || !isPowerOfTwo(sectionAlignment) || fileAlignment > sectionAlignment) {
    throw new FormatError('SG_ERR_PE_BAD_OPTIONAL_HEADER', `FileAlignment ${hex(fileAlignment)} and SectionAlignment ${hex(sectionAlignment)} are not powers of two with FileAlignment <= SectionAlignment`, {
      structure: 'optional header',
      fileOffset: image.optionalHeaderFileOffset + Field.SectionAlignment,
    });
  }
  if (getCertificateTable(image)) {
    throw new FormatError('SG_ERR_PE_OVERLAY', `the file carries an Authenticode certificate table; a section cannot be added in front of it`, {
      structure: 'certificate table',
      fileOffset: getCertificateTable(image)!.fileOffset,
    });
  }
  const overlay = getOverlay(image);
  if (overlay) {
    throw new FormatError('SG_ERR_PE_OVERLAY', `${overlay.size} bytes follow the last section at ${hex(overlay.fileOffset)} (overlay data); signgate does not move them`, {
      structure: 'overlay',
      fileOffset: overlay.fileOffset,
    });
  }
  if (!hasRoomForSectionHeader(image)) {
    image = parsePeImage(withRoomForSectionHeader(image, fileAlignment));
  }
  const bytes = image.bytes;
  const headerAt = image.sectionTableFileOffset + image.numberOfSections * SECTION_HEADER_SIZE;
  let virtualEnd = 0;
  for (const s of image.sections) virtualEnd = Math.max(virtualEnd, s.virtualAddress + Math.max(s.virtualSize, s.sizeOfRawData));
  const rva = alignUp(virtualEnd, sectionAlignment);
  const fileOffset = alignUp(Math.max(image.endOfRawData, image.sizeOfHeaders), fileAlignment);
  const rawSize = alignUp(data.length, fileAlignment);
  const out = new Uint8Array(fileOffset + rawSize);
  out.set(bytes.subarray(0, Math.min(bytes.length, fileOffset)));
  out.set(data, fileOffset);
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
  view.setUint32(o + Field.SizeOfInitializedData, (view.getUint32(o + Field.SizeOfInitializedData, true) + rawSize) >>> 0, true);
  return { bytes: out, rva, fileOffset };
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

/** The image with its headers grown by `fileAlignment` bytes and every raw-data file offset moved to match. */
function withRoomForSectionHeader(image: PeImage, fileAlignment: number): Uint8Array {
  const bytes = image.bytes;
  const headerAt = image.sectionTableFileOffset + image.numberOfSections * SECTION_HEADER_SIZE;
  for (let i = headerAt; i < Math.min(firstRawData(image), headerAt + SECTION_HEADER_SIZE); i++) {
    if (bytes[i] !== 0) {
      throw new FormatError('SG_ERR_PE_NO_ROOM', `the bytes after the section table at ${hex(headerAt)} are in use (${hex(bytes[i]!)} at ${hex(i)})`, { structure: 'section table', fileOffset: i });
    }
  }
  const delta = alignUp(SECTION_HEADER_SIZE, fileAlignment);
  const oldHeaders = image.sizeOfHeaders;
  const newHeaders = oldHeaders + delta;
  const firstVirtual = Math.min(...image.sections.map((s) => s.virtualAddress));
  if (newHeaders > firstVirtual || firstRawData(image) < oldHeaders) {
    throw new FormatError('SG_ERR_PE_NO_ROOM', `the headers (${hex(oldHeaders)} bytes) cannot grow to ${hex(newHeaders)}: the first section starts at RVA ${hex(firstVirtual)}`, {
      structure: 'optional header',
      fileOffset: image.optionalHeaderFileOffset + 60,
    });
  }
  const out = new Uint8Array(bytes.length + delta);
  out.set(bytes.subarray(0, oldHeaders));
  out.set(bytes.subarray(oldHeaders), newHeaders);
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
  return out;
}
