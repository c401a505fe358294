// PE/COFF headers, section table and data directories (ECMA-335 II.25.2, strong-naming.md section 1).
// pe-library's format classes read the header fields; we check every bound first (its views may read
// past the end of a Uint8Array into the shared ArrayBuffer) and do RVA mapping and section order ourselves.
// NtExecutable.from is not used: it copies every section and refuses images with COFF symbols.
import { Format } from 'pe-library';
import { peekU32 } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';

/** Magic values of the optional header. */
export const PeMagic = { PE32: 0x10b, PE32Plus: 0x20b } as const;

/** Data directory indexes used by signgate (II.25.2.3.3). */
export const DataDirectoryIndex = {
  Export: 0,
  Import: 1,
  Resource: 2,
  Exception: 3,
  Certificate: 4,
  BaseRelocation: 5,
  Debug: 6,
  CliHeader: 14,
} as const;

/** A real image has at most a few dozen sections; the format allows 65535. */
export const MAX_SECTIONS = 96;

export interface DataDirectory {
  /** RVA, except for the certificate directory where it is a file offset. */
  readonly virtualAddress: number;
  readonly size: number;
  /** File offset of this 8-byte directory entry. */
  readonly entryFileOffset: number;
}

export interface SectionHeader {
  readonly name: string;
  readonly virtualSize: number;
  readonly virtualAddress: number;
  readonly sizeOfRawData: number;
  readonly pointerToRawData: number;
  readonly characteristics: number;
  /** File offset of this 40-byte section header. */
  readonly headerFileOffset: number;
}

export interface ByteRange {
  readonly fileOffset: number;
  readonly size: number;
}

export interface PeImage {
  readonly bytes: Uint8Array;
  /** e_lfanew: file offset of the PE signature. */
  readonly peHeaderFileOffset: number;
  readonly machine: number;
  readonly numberOfSections: number;
  readonly timeDateStamp: number;
  /** COFF characteristics (0x2000 DLL, 0x0002 executable image). */
  readonly characteristics: number;
  readonly sizeOfOptionalHeader: number;
  readonly optionalHeaderFileOffset: number;
  readonly magic: number;
  readonly isPe32Plus: boolean;
  readonly sizeOfHeaders: number;
  readonly checkSum: number;
  readonly checkSumFileOffset: number;
  readonly subsystem: number;
  readonly dllCharacteristics: number;
  readonly numberOfRvaAndSizes: number;
  readonly dataDirectories: readonly DataDirectory[];
  readonly sectionTableFileOffset: number;
  /** Sections in section-table order (the order strong-name hashing uses). */
  readonly sections: readonly SectionHeader[];
  /** End of the last section's raw data: what lies after it is overlay. */
  readonly endOfRawData: number;
}

const COFF_HEADER_SIZE = 20;
/** Fixed part of the optional header before the data directories. */
const OPTIONAL_FIXED_SIZE = { [PeMagic.PE32]: 96, [PeMagic.PE32Plus]: 112 } as const;

function truncated(structure: string, fileOffset: number, needed: number, fileLength: number): FormatError {
  return new FormatError('SG_ERR_PE_TRUNCATED', `${structure} needs ${needed} bytes at ${hex(fileOffset)}, but the file is ${fileLength} bytes long`, {
    structure,
    fileOffset,
    needed,
    available: Math.max(0, fileLength - fileOffset),
  });
}

/**
 * Parses the PE headers and the section table. Section raw data must lie inside the file.
 * @throws FormatError SG_ERR_PE_* for anything that is not a readable PE image.
 */
export function parsePeImage(input: Uint8Array): PeImage {
  const bytes = plainBytes(input);
  const len = bytes.length;
  if (len < 2 || bytes[0] !== 0x4d || bytes[1] !== 0x5a) {
    if (len < 2) throw truncated('DOS header', 0, 64, len);
    throw new FormatError('SG_ERR_PE_NOT_MZ', `no MZ signature at 0x0 (found ${hex(bytes[0]!)} ${hex(bytes[1]!)})`, {
      structure: 'DOS header',
      fileOffset: 0,
    });
  }
  if (len < 64) throw truncated('DOS header', 0, 64, len);
  const dos = Format.ImageDosHeader.from(bytes);
  const lfanew = dos.newHeaderAddress >>> 0;
  if (lfanew < 0x40 || lfanew > len - 4) {
    throw new FormatError('SG_ERR_PE_BAD_LFANEW', `e_lfanew at 0x3C is ${hex(lfanew)}, outside the ${len}-byte file`, {
      structure: 'DOS header',
      fileOffset: 0x3c,
    });
  }
  if (peekU32(bytes, lfanew) !== 0x00004550) {
    throw new FormatError('SG_ERR_PE_NOT_PE', `no PE\\0\\0 signature at ${hex(lfanew)} (e_lfanew)`, {
      structure: 'PE signature',
      fileOffset: lfanew,
    });
  }
  const coffAt = lfanew + 4;
  if (coffAt + COFF_HEADER_SIZE + 2 > len) throw truncated('COFF header', coffAt, COFF_HEADER_SIZE + 2, len);
  const optAt = coffAt + COFF_HEADER_SIZE;
  const magic = bytes[optAt]! | (bytes[optAt + 1]! << 8);
  if (magic !== PeMagic.PE32 && magic !== PeMagic.PE32Plus) {
    throw new FormatError('SG_ERR_PE_BAD_MAGIC', `optional header magic at ${hex(optAt)} is ${hex(magic)}, not 0x10B or 0x20B`, {
      structure: 'optional header',
      fileOffset: optAt,
    });
  }
  const fixedSize = OPTIONAL_FIXED_SIZE[magic];
  // pe-library's view spans the fixed part plus all 16 directories: check that much is in the file.
  if (optAt + fixedSize + 16 * 8 > len) throw truncated('optional header', optAt, fixedSize + 16 * 8, len);
  const nt = Format.ImageNtHeaders.from(bytes, lfanew);
  const file = nt.fileHeader;
  const opt = nt.optionalHeader;
  const sizeOfOptionalHeader = file.sizeOfOptionalHeader;
  const numberOfRvaAndSizes = opt.numberOfRvaAndSizes >>> 0;
  const directoryCount = Math.min(numberOfRvaAndSizes, 16);
  if (sizeOfOptionalHeader < fixedSize + directoryCount * 8) {
    throw new FormatError(
      'SG_ERR_PE_BAD_OPTIONAL_HEADER',
      `SizeOfOptionalHeader is ${hex(sizeOfOptionalHeader)}, too small for ${directoryCount} data directories (${hex(fixedSize + directoryCount * 8)})`,
      { structure: 'COFF header', fileOffset: coffAt + 16 },
    );
  }
  const numberOfSections = file.numberOfSections;
  if (numberOfSections > MAX_SECTIONS) {
    throw new FormatError(
      'SG_ERR_PE_TOO_MANY_SECTIONS',
      `NumberOfSections at ${hex(coffAt + 2)} is ${numberOfSections}; signgate reads at most ${MAX_SECTIONS}`,
      {
        structure: 'COFF header',
        fileOffset: coffAt + 2,
      },
    );
  }
  const directoryAt = optAt + fixedSize;
  const directories = nt.optionalHeaderDataDirectory;
  const dataDirectories: DataDirectory[] = [];
  for (let i = 0; i < directoryCount; i++) {
    const entry = directories.get(i);
    dataDirectories.push({ virtualAddress: entry.virtualAddress >>> 0, size: entry.size >>> 0, entryFileOffset: directoryAt + i * 8 });
  }
  const sectionTableFileOffset = optAt + sizeOfOptionalHeader;
  const tableSize = numberOfSections * 40;
  if (sectionTableFileOffset + tableSize > len) throw truncated('section table', sectionTableFileOffset, tableSize, len);
  const table = Format.ImageSectionHeaderArray.from(bytes.buffer as ArrayBuffer, numberOfSections, bytes.byteOffset + sectionTableFileOffset);
  const sections: SectionHeader[] = [];
  let endOfRawData = 0;
  for (let i = 0; i < numberOfSections; i++) {
    const s = table.get(i);
    const headerFileOffset = sectionTableFileOffset + i * 40;
    const pointerToRawData = s.pointerToRawData >>> 0;
    const sizeOfRawData = s.sizeOfRawData >>> 0;
    if (sizeOfRawData > 0 && pointerToRawData + sizeOfRawData > len) {
      throw new FormatError(
        'SG_ERR_PE_SECTION_OUT_OF_FILE',
        `section ${JSON.stringify(s.name)} raw data ${hex(pointerToRawData)}+${hex(sizeOfRawData)} ends past the end of the ${len}-byte file`,
        { structure: 'section header', fileOffset: headerFileOffset, needed: pointerToRawData + sizeOfRawData, available: len },
      );
    }
    if (sizeOfRawData > 0) endOfRawData = Math.max(endOfRawData, pointerToRawData + sizeOfRawData);
    sections.push({
      name: s.name,
      virtualSize: s.virtualSize >>> 0,
      virtualAddress: s.virtualAddress >>> 0,
      sizeOfRawData,
      pointerToRawData,
      characteristics: s.characteristics >>> 0,
      headerFileOffset,
    });
  }
  return {
    bytes,
    peHeaderFileOffset: lfanew,
    machine: file.machine,
    numberOfSections,
    timeDateStamp: file.timeDateStamp >>> 0,
    characteristics: file.characteristics,
    sizeOfOptionalHeader,
    optionalHeaderFileOffset: optAt,
    magic,
    isPe32Plus: magic === PeMagic.PE32Plus,
    sizeOfHeaders: opt.sizeOfHeaders >>> 0,
    checkSum: opt.checkSum >>> 0,
    checkSumFileOffset: optAt + 64,
    subsystem: opt.subsystem,
    dllCharacteristics: opt.dllCharacteristics,
    numberOfRvaAndSizes,
    dataDirectories,
    sectionTableFileOffset,
    sections,
    endOfRawData: Math.max(endOfRawData, Math.min(opt.sizeOfHeaders >>> 0, len)),
  };
}

/**
 * The same memory as a plain Uint8Array. Every view of a Buffer is a Buffer, made by Node's own subarray (a
 * JavaScript function and a FastBuffer per call); the readers take thousands of small views of each file.
 */
function plainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The data directory at `index`, or a zero entry when the header has fewer directories. */
export function getDataDirectory(image: PeImage, index: number): DataDirectory {
  return image.dataDirectories[index] ?? { virtualAddress: 0, size: 0, entryFileOffset: -1 };
}

/** The section whose virtual range holds `rva` (first match in table order, as SRM and Mono do). */
export function findSectionByRva(image: PeImage, rva: number): SectionHeader | undefined {
  for (const s of image.sections) {
    const span = s.virtualSize || s.sizeOfRawData;
    if (rva >= s.virtualAddress && rva < s.virtualAddress + span) return s;
  }
  return undefined;
}

/**
 * Maps `size` bytes at `rva` to a file offset. The whole range must lie in one section's raw data:
 * bytes past SizeOfRawData are zero-fill in memory and do not exist in the file.
 * @throws FormatError SG_ERR_PE_RVA_UNMAPPED
 */
export function rvaToFileOffset(image: PeImage, rva: number, size: number, structure: string): number {
  const s = findSectionByRva(image, rva);
  const rel = s ? rva - s.virtualAddress : 0;
  if (!s || rel + size > s.sizeOfRawData) {
    throw new FormatError(
      'SG_ERR_PE_RVA_UNMAPPED',
      s
        ? `${structure} at RVA ${hex(rva)} (${size} bytes) runs past the raw data of section ${JSON.stringify(s.name)}`
        : `${structure} at RVA ${hex(rva)} is not inside any section`,
      { structure, fileOffset: s ? s.pointerToRawData + rel : -1, needed: size },
    );
  }
  return s.pointerToRawData + rel;
}

/** Authenticode certificate table (data directory 4; its address is a file offset), or null. */
export function getCertificateTable(image: PeImage): ByteRange | null {
  const dir = getDataDirectory(image, DataDirectoryIndex.Certificate);
  if (dir.size === 0) return null;
  return { fileOffset: dir.virtualAddress, size: dir.size };
}

/** Bytes after the last section's raw data, excluding the certificate table (not covered by strong names). */
export function getOverlay(image: PeImage): ByteRange | null {
  const start = image.endOfRawData;
  let end = image.bytes.length;
  const cert = getCertificateTable(image);
  if (cert && cert.fileOffset >= start && cert.fileOffset + cert.size >= end) end = cert.fileOffset;
  return end > start ? { fileOffset: start, size: end - start } : null;
}

/** Pairs of sections whose raw file bytes overlap. */
export function findOverlappingSections(image: PeImage): [SectionHeader, SectionHeader] | undefined {
  const withData = image.sections.filter((s) => s.sizeOfRawData > 0);
  for (let i = 0; i < withData.length; i++) {
    for (let j = i + 1; j < withData.length; j++) {
      const a = withData[i]!;
      const b = withData[j]!;
      if (a.pointerToRawData < b.pointerToRawData + b.sizeOfRawData && b.pointerToRawData < a.pointerToRawData + a.sizeOfRawData) {
        return [a, b];
      }
    }
  }
  return undefined;
}
