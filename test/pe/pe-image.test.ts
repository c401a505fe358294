import { describe, expect, test } from 'vitest';
import { parseCorHeader, CorFlags } from '../../src/pe/cor-header.js';
import { findSectionByRva, getCertificateTable, getOverlay, parsePeImage, rvaToFileOffset, PeMagic } from '../../src/pe/pe-image.js';
import { fixture } from '../helpers/fixtures.js';

describe('PE headers', () => {
  test('PE32 library from mcs: header chain as in strong-naming.md section 9', () => {
    const image = parsePeImage(fixture('assemblies/delay-1024.dll'));
    expect(image.peHeaderFileOffset).toBe(0x80);
    expect(image.magic).toBe(PeMagic.PE32);
    expect(image.sizeOfOptionalHeader).toBe(0xe0);
    expect(image.checkSumFileOffset).toBe(0xd8);
    expect(image.dataDirectories[4]!.entryFileOffset).toBe(0x118);
    expect(image.dataDirectories[14]!.entryFileOffset).toBe(0x168);
    expect(image.sections.map((s) => s.name)).toEqual(['.text', '.rsrc', '.reloc']);
    expect(image.sections[0]!.pointerToRawData).toBe(0x200);
    expect(image.characteristics & 0x2000).toBe(0x2000);
  });

  test('PE32+ from mcs -platform:x64 uses the PE32+ directory offsets', () => {
    const image = parsePeImage(fixture('assemblies/pe32plus-signed.dll'));
    expect(image.isPe32Plus).toBe(true);
    expect(image.machine).toBe(0x8664);
    expect(image.sizeOfOptionalHeader).toBe(0xf0);
    expect(image.dataDirectories[4]!.entryFileOffset).toBe(0x128);
    expect(image.dataDirectories[14]!.entryFileOffset).toBe(0x178);
  });

  test('CLI header: flags at CLI + 16, slot mapped into .text', () => {
    const image = parsePeImage(fixture('assemblies/signed-1024.dll'));
    const cor = parseCorHeader(image);
    expect(cor.cb).toBe(0x48);
    expect(cor.flagsFileOffset).toBe(cor.fileOffset + 16);
    expect(cor.flags & CorFlags.StrongNameSigned).toBe(CorFlags.StrongNameSigned);
    expect(cor.strongNameSignature.size).toBe(128);
    const at = rvaToFileOffset(image, cor.strongNameSignature.rva, 128, 'slot');
    expect(findSectionByRva(image, cor.strongNameSignature.rva)!.name).toBe('.text');
    expect(at).toBeGreaterThan(cor.fileOffset);
  });

  test('an RVA range crossing the end of raw data is refused', () => {
    const image = parsePeImage(fixture('assemblies/delay-1024.dll'));
    const text = image.sections[0]!;
    expect(() => rvaToFileOffset(image, text.virtualAddress + text.sizeOfRawData - 4, 8, 'probe')).toThrowError(
      expect.objectContaining({ code: 'SG_ERR_PE_RVA_UNMAPPED' }),
    );
  });

  test('overlay after the last section is reported; no certificate table', () => {
    const plain = parsePeImage(fixture('assemblies/signed-1024.dll'));
    expect(getOverlay(plain)).toBeNull();
    const withOverlay = parsePeImage(fixture('variants/signed-with-overlay.dll'));
    expect(getOverlay(withOverlay)).toEqual({ fileOffset: plain.bytes.length, size: 512 });
    expect(getCertificateTable(withOverlay)).toBeNull();
  });
});

describe('the bytes an image keeps', () => {
  test('a Buffer is read through a plain Uint8Array over the same memory (no copy), with the same result', () => {
    const buffer = Buffer.from(fixture('assemblies/signed-1024.dll'));
    const image = parsePeImage(buffer);
    expect(Object.getPrototypeOf(image.bytes)).toBe(Uint8Array.prototype);
    expect(image.bytes.buffer).toBe(buffer.buffer);
    expect(image.bytes.byteOffset).toBe(buffer.byteOffset);
    const { bytes: _a, ...fromBuffer } = image;
    const { bytes: _b, ...fromCopy } = parsePeImage(new Uint8Array(buffer));
    expect(fromBuffer).toEqual(fromCopy);
  });
});
