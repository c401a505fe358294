// PE shapes of old compilers that signgate fix must handle, made from a small mcs build by editing its bytes
// (the shapes of Mono.Cecil's hello.x64.exe, hello.ia64.exe and hello.textonly.x64.exe):
// - an empty `.reloc` section header right after the table that NumberOfSections does not count;
// - IA64 in the machine field;
// - a few bytes after the last section (overlay).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { has } from './fixtures.js';

/** Mono's C# compiler and runtime are installed. In CI they must be: .ci/run installs mono-devel. */
export const hasMcsAndMono = has('mcs') && has('mono');
if (process.env.CI && !hasMcsAndMono) throw new Error('CI is set but mcs or mono is not installed; .ci/run must apt-get install mono-devel');

export const HELLO_SOURCE = 'public static class Program { public static int Main() { System.Console.WriteLine("foo!"); return 0; } }';

/** `HELLO_SOURCE` (or `source`) built by mcs for `platform` (x86, x64, anycpu) as an exe or a library. */
export function mcsBuild(platform: 'x86' | 'x64' | 'anycpu', options: { target?: 'exe' | 'library'; source?: string; name?: string } = {}): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'pe-shapes-'));
  const target = options.target ?? 'exe';
  const out = join(dir, `${options.name ?? 'hello'}.${target === 'exe' ? 'exe' : 'dll'}`);
  writeFileSync(join(dir, 'hello.cs'), options.source ?? HELLO_SOURCE);
  execFileSync('mcs', ['-nologo', `-target:${target}`, `-platform:${platform}`, `-out:${out}`, join(dir, 'hello.cs')]);
  return new Uint8Array(readFileSync(out));
}

/**
 * The last section (`.reloc`, as mcs writes it) left as an empty header the table does not count: NumberOfSections
 * one less, its sizes zero, the base relocation directory cleared (relocations stripped), its raw data cut off. Its 40 bytes stay right
 * after the counted table, where a new section header would go.
 */
export function withUncountedRelocHeader(input: Uint8Array): Uint8Array {
  const image = parsePeImage(input);
  const last = image.sections.at(-1)!;
  if (last.name !== '.reloc' || last.pointerToRawData + last.sizeOfRawData !== input.length)
    throw new Error(`expected .reloc last and at the end, found ${last.name}`);
  const out = Uint8Array.from(input.subarray(0, last.pointerToRawData));
  const view = new DataView(out.buffer);
  view.setUint16(image.peHeaderFileOffset + 4 + 2, image.numberOfSections - 1, true);
  view.setUint32(last.headerFileOffset + 8, 0, true); // VirtualSize
  view.setUint32(last.headerFileOffset + 16, 0, true); // SizeOfRawData
  const relocations = image.dataDirectories[5]!.entryFileOffset;
  out.fill(0, relocations, relocations + 8);
  view.setUint16(image.peHeaderFileOffset + 4 + 18, image.characteristics | 0x0001, true); // IMAGE_FILE_RELOCS_STRIPPED, as .NET wants of an exe without relocations
  return out;
}

/** The machine field set to `machine` (0x200 IA64, 0x8664 x64). */
export function withMachine(input: Uint8Array, machine: number): Uint8Array {
  const out = Uint8Array.from(input);
  new DataView(out.buffer).setUint16(parsePeImage(input).peHeaderFileOffset + 4, machine, true);
  return out;
}

/** `bytes` appended after the last section. */
export function withOverlay(input: Uint8Array, bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(input.length + bytes.length);
  out.set(input);
  out.set(bytes, input.length);
  return out;
}
