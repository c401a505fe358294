// The exact bytes a strong-name signature covers (strong-naming.md section 7.2), as a sequence of chunks.
// Views into the file are yielded without copying; only the NT headers are copied to zero two fields.
import { FormatError, hex } from '../core/errors.js';
import type { CorHeader } from '../pe/cor-header.js';
import { DataDirectoryIndex, findOverlappingSections, rvaToFileOffset, type PeImage } from '../pe/pe-image.js';

/** Where the signature lives in the file. */
export interface SignatureSlot {
  readonly rva: number;
  readonly fileOffset: number;
  readonly size: number;
}

/** Standard SizeOfOptionalHeader values; anything else is hashed differently by different tools (section 10). */
const STANDARD_OPTIONAL_HEADER = { pe32: 0xe0, pe32Plus: 0xf0 } as const;

/**
 * The signature slot from the CLI header, or null when the header reserves none (RVA or size 0).
 * @throws FormatError SG_ERR_PE_RVA_UNMAPPED when the slot does not lie inside one section's raw data.
 */
export function getSignatureSlot(image: PeImage, cor: CorHeader): SignatureSlot | null {
  const { rva, size } = cor.strongNameSignature;
  if (rva === 0 || size === 0) return null;
  const fileOffset = rvaToFileOffset(image, rva, size, 'strong-name signature slot');
  return { rva, fileOffset, size };
}

/** Size in bytes of the fixed IMAGE_NT_HEADERS that the reference hasher copies (signature + COFF + optional header). */
export function ntHeadersSize(image: PeImage): number {
  return 4 + 20 + (image.isPe32Plus ? STANDARD_OPTIONAL_HEADER.pe32Plus : STANDARD_OPTIONAL_HEADER.pe32);
}

/**
 * Checks that the image has the shape every strong-name implementation hashes the same way.
 * @throws FormatError SG_ERR_SN_NONSTANDARD_HEADER, SG_ERR_PE_SECTION_OVERLAP
 */
export function assertHashableLayout(image: PeImage): void {
  const expected = image.isPe32Plus ? STANDARD_OPTIONAL_HEADER.pe32Plus : STANDARD_OPTIONAL_HEADER.pe32;
  if (image.sizeOfOptionalHeader !== expected) {
    throw new FormatError(
      'SG_ERR_SN_NONSTANDARD_HEADER',
      `SizeOfOptionalHeader is ${hex(image.sizeOfOptionalHeader)}, not the standard ${hex(expected)}; strong-name tools disagree on which header bytes such a file signs`,
      { structure: 'COFF header', fileOffset: image.peHeaderFileOffset + 4 + 16 },
    );
  }
  const overlap = findOverlappingSections(image);
  if (overlap) {
    throw new FormatError(
      'SG_ERR_PE_SECTION_OVERLAP',
      `sections ${JSON.stringify(overlap[0].name)} and ${JSON.stringify(overlap[1].name)} share raw file bytes, which would be hashed twice`,
      { structure: 'section table', fileOffset: overlap[1].headerFileOffset },
    );
  }
}

/**
 * Checks that no section's raw data covers the hashed headers (DOS header, NT headers, section table).
 * In such a file the CheckSum field is hashed twice, once zeroed as a header and once as it stands inside the
 * section: writing the checksum after signing then changes signed bytes, and no verifier accepts the result.
 * @throws FormatError SG_ERR_SN_HEADERS_IN_SECTION
 */
export function assertHeadersOutsideSections(image: PeImage): void {
  const headersEnd = image.sectionTableFileOffset + image.numberOfSections * 40;
  for (const s of image.sections) {
    if (s.sizeOfRawData === 0 || s.pointerToRawData >= headersEnd) continue;
    throw new FormatError(
      'SG_ERR_SN_HEADERS_IN_SECTION',
      `section ${JSON.stringify(s.name)} raw data starts at ${hex(s.pointerToRawData)}, inside the PE headers that end at ${hex(headersEnd)}; its bytes include the CheckSum at ${hex(image.checkSumFileOffset)}`,
      { structure: 'section header', fileOffset: s.headerFileOffset + 20, needed: headersEnd, available: s.pointerToRawData },
    );
  }
}

/**
 * Yields the signed content in order: DOS header and stub, the NT headers with CheckSum and the
 * certificate directory entry zeroed, the section table, then each section's raw data in table
 * order without the signature slot. Header padding, gaps and overlay are not covered.
 * @throws FormatError as assertHashableLayout
 */
export function* signedContent(image: PeImage, slot: SignatureSlot): Generator<Uint8Array> {
  assertHashableLayout(image);
  const bytes = image.bytes;
  const L = image.peHeaderFileOffset;
  const H = ntHeadersSize(image);
  // 1. DOS header and stub, as is.
  yield bytes.subarray(0, L);
  // 2. NT headers: a copy with CheckSum and the Certificate Table entry set to zero.
  const nt = new Uint8Array(bytes.subarray(L, L + H)); // a copy (Uint8Array.from would iterate byte by byte)
  nt.fill(0, image.checkSumFileOffset - L, image.checkSumFileOffset - L + 4);
  const cert = image.dataDirectories[DataDirectoryIndex.Certificate];
  if (cert) nt.fill(0, cert.entryFileOffset - L, cert.entryFileOffset - L + 8);
  yield nt;
  // 3. Section table, as is.
  yield bytes.subarray(image.sectionTableFileOffset, image.sectionTableFileOffset + image.numberOfSections * 40);
  // 4. Each section's raw data in table order, minus the slot (which may sit anywhere in one section).
  const slotEnd = slot.fileOffset + slot.size;
  for (const s of image.sections) {
    if (s.sizeOfRawData === 0) continue;
    const start = s.pointerToRawData;
    const end = start + s.sizeOfRawData;
    if (slotEnd <= start || slot.fileOffset >= end) {
      yield bytes.subarray(start, end);
      continue;
    }
    if (slot.fileOffset > start) yield bytes.subarray(start, slot.fileOffset);
    if (slotEnd < end) yield bytes.subarray(slotEnd, end);
  }
}

/** Total number of bytes the signature covers. */
export function signedContentLength(image: PeImage, slot: SignatureSlot): number {
  let n = 0;
  for (const chunk of signedContent(image, slot)) n += chunk.length;
  return n;
}
