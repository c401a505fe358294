// parsePeImage reads the header fields at their fixed offsets itself; pe-library's format classes (which it used
// before) serve as the oracle: every field must agree on the fixtures and on every regular image under
// /usr/lib/mono (Mono's own build of thousands of assemblies, none written by us).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Format } from 'pe-library';
import { describe, expect, test } from 'vitest';
import { parsePeImage, type PeImage } from '../../src/pe/pe-image.js';
import { fixturesDir, hasMono } from '../helpers/fixtures.js';

function images(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) images(path, out);
    else if (entry.isFile() && /\.(dll|exe|netmodule)$/i.test(entry.name)) out.push(path);
  }
  return out;
}

/** The fields as pe-library reads them. */
function oracle(bytes: Uint8Array, image: PeImage) {
  const nt = Format.ImageNtHeaders.from(bytes, Format.ImageDosHeader.from(bytes).newHeaderAddress >>> 0);
  const table = Format.ImageSectionHeaderArray.from(bytes.buffer as ArrayBuffer, image.numberOfSections, bytes.byteOffset + image.sectionTableFileOffset);
  const directories = nt.optionalHeaderDataDirectory;
  return {
    machine: nt.fileHeader.machine,
    numberOfSections: nt.fileHeader.numberOfSections,
    timeDateStamp: nt.fileHeader.timeDateStamp >>> 0,
    characteristics: nt.fileHeader.characteristics,
    sizeOfOptionalHeader: nt.fileHeader.sizeOfOptionalHeader,
    sizeOfHeaders: nt.optionalHeader.sizeOfHeaders >>> 0,
    checkSum: nt.optionalHeader.checkSum >>> 0,
    subsystem: nt.optionalHeader.subsystem,
    dllCharacteristics: nt.optionalHeader.dllCharacteristics,
    numberOfRvaAndSizes: nt.optionalHeader.numberOfRvaAndSizes >>> 0,
    directories: image.dataDirectories.map((_, i) => ({ virtualAddress: directories.get(i).virtualAddress >>> 0, size: directories.get(i).size >>> 0 })),
    sections: Array.from({ length: image.numberOfSections }, (_, i) => {
      const s = table.get(i);
      return { name: s.name, virtualSize: s.virtualSize >>> 0, virtualAddress: s.virtualAddress >>> 0, sizeOfRawData: s.sizeOfRawData >>> 0, pointerToRawData: s.pointerToRawData >>> 0, characteristics: s.characteristics >>> 0 };
    }),
  };
}

function ours(image: PeImage): ReturnType<typeof oracle> {
  return {
    machine: image.machine,
    numberOfSections: image.numberOfSections,
    timeDateStamp: image.timeDateStamp,
    characteristics: image.characteristics,
    sizeOfOptionalHeader: image.sizeOfOptionalHeader,
    sizeOfHeaders: image.sizeOfHeaders,
    checkSum: image.checkSum,
    subsystem: image.subsystem,
    dllCharacteristics: image.dllCharacteristics,
    numberOfRvaAndSizes: image.numberOfRvaAndSizes,
    directories: image.dataDirectories.map((d) => ({ virtualAddress: d.virtualAddress, size: d.size })),
    sections: image.sections.map((s) => ({ name: s.name, virtualSize: s.virtualSize, virtualAddress: s.virtualAddress, sizeOfRawData: s.sizeOfRawData, pointerToRawData: s.pointerToRawData, characteristics: s.characteristics })),
  };
}

function compareAll(files: readonly string[]): number {
  let compared = 0;
  for (const file of files) {
    const bytes = new Uint8Array(readFileSync(file));
    let image: PeImage;
    try {
      image = parsePeImage(bytes);
    } catch {
      continue; // a file we refuse; the corrupt-fixture tests say why
    }
    expect(ours(image), file).toEqual(oracle(bytes, image));
    compared++;
  }
  return compared;
}

describe('PE header fields agree with pe-library', () => {
  test('every fixture image we read', () => {
    expect(compareAll(images(fixturesDir))).toBeGreaterThan(60);
  });

  // Mono is installed in CI (.ci/run), and helpers/fixtures.ts fails there without it.
  test.skipIf(!hasMono)('every regular image under /usr/lib/mono', () => {
    expect(compareAll(images('/usr/lib/mono'))).toBeGreaterThan(1000);
  }, 120_000);
});
