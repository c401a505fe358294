// appendSection over the PE shapes old compilers wrote (Mono.Cecil's hello.x64.exe, hello.ia64.exe and
// hello.textonly.x64.exe, rebuilt here from mcs output): an uncounted empty section header right after the table,
// overlay bytes after the last section. Every RVA stays, every section's raw bytes stay, only file offsets move.
import { describe, expect, test } from 'vitest';
import { appendSection, growSectionRawData } from '../../src/pe/pe-writer.js';
import { parsePeImage, type PeImage } from '../../src/pe/pe-image.js';
import { isSignGateError } from '../../src/core/errors.js';
import { fixture } from '../helpers/fixtures.js';
import { withOverlay, withUncountedRelocHeader } from '../helpers/pe-shapes.js';

const DATA = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);

/** Each section's name, RVA and raw bytes: what must not change. */
const sectionsOf = (image: PeImage) =>
  image.sections.map((s) => ({
    name: s.name,
    rva: s.virtualAddress,
    virtualSize: s.virtualSize,
    raw: Buffer.from(image.bytes.subarray(s.pointerToRawData, s.pointerToRawData + s.sizeOfRawData)).toString('hex'),
  }));

const errorOf = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    if (isSignGateError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  return undefined;
};

describe('appendSection', () => {
  test('an uncounted section header after the table moves up by one header; the headers grow by FileAlignment; RVAs and raw bytes stay', () => {
    const shape = withUncountedRelocHeader(fixture('assemblies/unsigned.dll'));
    const before = parsePeImage(shape);
    expect(before.numberOfSections).toBe(2);
    const tableEnd = before.sectionTableFileOffset + 2 * 40;
    const uncounted = Buffer.from(shape.subarray(tableEnd, tableEnd + 40));
    expect(uncounted.subarray(0, 6).toString('latin1')).toBe('.reloc');

    const added = appendSection(before, '.sgmeta', DATA);
    const after = parsePeImage(added.bytes);
    expect(added.headersGrewBy).toBe(0x200);
    expect(after.sizeOfHeaders).toBe(before.sizeOfHeaders + 0x200);
    expect(after.sections.map((s) => s.name)).toEqual(['.text', '.rsrc', '.sgmeta']);
    expect(sectionsOf(after).slice(0, 2)).toEqual(sectionsOf(before));
    expect(after.sections.map((s) => s.pointerToRawData).slice(0, 2)).toEqual(before.sections.map((s) => s.pointerToRawData + 0x200));
    // The uncounted header is kept, right after the new one.
    expect(Buffer.from(added.bytes.subarray(tableEnd + 40, tableEnd + 80)).equals(uncounted)).toBe(true);
    expect(Buffer.from(added.bytes.subarray(added.fileOffset, added.fileOffset + DATA.length)).equals(Buffer.from(DATA))).toBe(true);
    expect(added.rva).toBe(0x6000);
  });

  test('with room for both, the uncounted header moves up by one header and the headers stay as they are', () => {
    // One counted section (.text) and the uncounted header after it, as hello.textonly.x64.exe has.
    const input = fixture('assemblies/unsigned.dll');
    const image = parsePeImage(input);
    const rsrc = image.sections[1]!;
    const reloc = image.sections[2]!;
    const shape = Uint8Array.from(input.subarray(0, rsrc.pointerToRawData));
    const view = new DataView(shape.buffer);
    view.setUint16(image.peHeaderFileOffset + 4 + 2, 1, true);
    shape.fill(0, reloc.headerFileOffset, reloc.headerFileOffset + 40);
    for (const d of [2, 5]) shape.fill(0, image.dataDirectories[d]!.entryFileOffset, image.dataDirectories[d]!.entryFileOffset + 8);
    const before = parsePeImage(shape);
    const uncounted = Buffer.from(shape.subarray(rsrc.headerFileOffset, rsrc.headerFileOffset + 40));
    const added = appendSection(before, '.sgmeta', DATA);
    const after = parsePeImage(added.bytes);
    expect(added.headersGrewBy).toBe(0);
    expect(after.sizeOfHeaders).toBe(before.sizeOfHeaders);
    expect(after.sections.map((s) => s.name)).toEqual(['.text', '.sgmeta']);
    expect(after.sections[1]!.headerFileOffset).toBe(rsrc.headerFileOffset);
    expect(Buffer.from(added.bytes.subarray(rsrc.headerFileOffset + 40, rsrc.headerFileOffset + 80)).equals(uncounted)).toBe(true);
    expect(sectionsOf(after).slice(0, 1)).toEqual(sectionsOf(before));
    expect(after.sections[0]!.pointerToRawData).toBe(before.sections[0]!.pointerToRawData);
  });

  test('overlay bytes after the last section are carried after the new section', () => {
    const tail = Uint8Array.from([0, 0x20, 0, 0, 0x0c, 0, 0, 0, 0x40, 0xa3, 0, 0]);
    const shape = withOverlay(fixture('assemblies/unsigned.dll'), tail);
    const before = parsePeImage(shape);
    const added = appendSection(before, '.sgmeta', DATA);
    expect(added.overlay).toEqual({ fileOffset: added.fileOffset + 0x200, size: 12 });
    expect(added.bytes.length).toBe(added.fileOffset + 0x200 + 12);
    expect(Buffer.from(added.bytes.subarray(-12)).equals(Buffer.from(tail))).toBe(true);
    expect(sectionsOf(parsePeImage(added.bytes)).slice(0, 3)).toEqual(sectionsOf(before));
  });

  test('headers that cannot grow in the first page are refused, naming SectionAlignment', () => {
    const shape = withUncountedRelocHeader(fixture('assemblies/unsigned.dll'));
    const image = parsePeImage(shape);
    // The first section starts in memory right after the 0x200 bytes of headers.
    const lowered = Uint8Array.from(shape);
    new DataView(lowered.buffer).setUint32(image.sections[0]!.headerFileOffset + 12, 0x200, true);
    const error = errorOf(() => appendSection(parsePeImage(lowered), '.sgmeta', DATA));
    expect(error?.code).toBe('SG_ERR_PE_NO_ROOM');
    expect(error?.message).toContain('must grow to 0x400');
    expect(error?.message).toContain('first section starts at RVA 0x200 (SectionAlignment leaves no room');
  });

  test('bytes after the table that a data directory points at are not moved: refused', () => {
    const shape = withUncountedRelocHeader(fixture('assemblies/unsigned.dll'));
    const image = parsePeImage(shape);
    const tableEnd = image.sectionTableFileOffset + 2 * 40;
    const bound = Uint8Array.from(shape);
    const view = new DataView(bound.buffer);
    view.setUint32(image.dataDirectories[11]!.entryFileOffset, tableEnd, true); // bound imports, as native linkers place them
    view.setUint32(image.dataDirectories[11]!.entryFileOffset + 4, 16, true);
    const error = errorOf(() => appendSection(parsePeImage(bound), '.sgmeta', DATA));
    expect(error?.code).toBe('SG_ERR_PE_NO_ROOM');
    expect(error?.message).toContain('in use by data directory 11');
  });
});

describe('growSectionRawData', () => {
  test('.text grows by 512 bytes of zeros at its end; later sections move up in the file, their bytes and every RVA stay; SizeOfCode grows', () => {
    const input = withOverlay(fixture('assemblies/unsigned.dll'), Uint8Array.from([1, 2, 3]));
    const before = parsePeImage(input);
    const text = before.sections[0]!;
    const out = growSectionRawData(before, text, 0x200);
    const after = parsePeImage(out);
    expect(out.length).toBe(input.length + 0x200);
    expect(after.sections[0]!.sizeOfRawData).toBe(text.sizeOfRawData + 0x200);
    expect(after.sections.slice(1).map((s) => s.pointerToRawData)).toEqual(before.sections.slice(1).map((s) => s.pointerToRawData + 0x200));
    const raw = (image: PeImage, i: number) =>
      Buffer.from(image.bytes.subarray(image.sections[i]!.pointerToRawData, image.sections[i]!.pointerToRawData + before.sections[i]!.sizeOfRawData)).toString(
        'hex',
      );
    for (let i = 0; i < before.sections.length; i++) expect(raw(after, i)).toBe(raw(before, i));
    expect(after.sections.map((s) => [s.virtualAddress, s.virtualSize])).toEqual(before.sections.map((s) => [s.virtualAddress, s.virtualSize]));
    expect(out.subarray(text.pointerToRawData + text.sizeOfRawData, text.pointerToRawData + text.sizeOfRawData + 0x200).every((b) => b === 0)).toBe(true);
    expect(Array.from(out.subarray(-3))).toEqual([1, 2, 3]);
    const sizeOfCode = (image: PeImage) => new DataView(image.bytes.buffer).getUint32(image.optionalHeaderFileOffset + 4, true);
    expect(sizeOfCode(after)).toBe(sizeOfCode(before) + 0x200);
  });

  test('a size that is not a multiple of FileAlignment, or sections whose raw data overlap, are refused', () => {
    const image = parsePeImage(fixture('assemblies/unsigned.dll'));
    expect(errorOf(() => growSectionRawData(image, image.sections[0]!, 100))?.code).toBe('SG_ERR_PE_NO_ROOM');
    const overlapping = Uint8Array.from(image.bytes);
    new DataView(overlapping.buffer).setUint32(image.sections[1]!.headerFileOffset + 20, image.sections[0]!.pointerToRawData + 0x100, true);
    const shape = parsePeImage(overlapping);
    const error = errorOf(() => growSectionRawData(shape, shape.sections[0]!, 0x200));
    expect(error?.code).toBe('SG_ERR_PE_NO_ROOM');
    expect(error?.message).toContain('".rsrc"\'s raw data overlaps that of ".text"');
  });

  test('appendSection counts a code section in SizeOfCode, a data section in SizeOfInitializedData', () => {
    const image = parsePeImage(fixture('assemblies/unsigned.dll'));
    const field = (bytes: Uint8Array, at: number) => new DataView(bytes.buffer).getUint32(image.optionalHeaderFileOffset + at, true);
    const code = appendSection(image, '.sgtail', DATA, 0x60000020).bytes;
    expect([field(code, 4), field(code, 8)]).toEqual([field(image.bytes, 4) + 0x200, field(image.bytes, 8)]);
    const data = appendSection(image, '.sgmeta', DATA).bytes;
    expect([field(data, 4), field(data, 8)]).toEqual([field(image.bytes, 4), field(image.bytes, 8) + 0x200]);
  });
});
