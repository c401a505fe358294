// Where strongNameAssembly puts the rewritten metadata when it grows: in place in .text's padding, or .text's tail
// (imports, the entry stub, an embedded PDB) moved to a new section, on programs built by mcs and by Roslyn's csc in
// the sizes that need each, then read back by sn -vf and System.Reflection.Metadata (tools/srm-oracle) and run on
// Mono and .NET (tools/fix-host). Each shape is found by compiling the program again with more padding, up to six
// times: compilers and runtimes started about fifty times, so this file runs in the SDK leg (vitest.config.ts,
// `npm run test:sdk`), not in `npm test`. The layout decisions themselves are tested on the fixtures in
// test/strongname/strong-name-writer.test.ts.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { strongNameAssembly } from '../../src/strongname/strong-name-writer.js';
import { STRONG_NAME_TAIL_SECTION } from '../../src/metadata/text-relayout.js';
import { fixture, repoRoot, runMono, scratchFolder } from '../helpers/fixtures.js';
import { hasMcsAndMono, mcsBuild } from '../helpers/pe-shapes.js';
import { csc } from '../helpers/roslyn.js';
import { buildSrmOracle, srmCompare } from '../helpers/srm-oracle.js';
import { buildOnce, requireDotnet, runDotnetTests } from '../sdk/dotnet.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk'));
const hasMcs = hasMcsAndMono;

const { dir, save } = scratchFolder('strong-name-layout-');

describe.skipIf(!runDotnetTests || !hasMcs)('where the rewritten metadata goes: at the old metadata, the rest of .text moved behind it', () => {
  const host = (folder: string, name: string) =>
    spawnSync('dotnet', [join(repoRoot, 'tools', 'fix-host', 'bin', 'Release', 'fix-host.dll'), folder, name], {
      encoding: 'utf8',
      env: { ...process.env, DOTNET_CLI_TELEMETRY_OPTOUT: '1' },
    });
  beforeAll(async () => {
    requireDotnet();
    await buildSrmOracle();
    const build = await buildOnce(join(repoRoot, 'tools', 'fix-host'));
    if (build.status !== 0) throw new Error(build.output);
  });

  /** The hello program with a string constant of `n` characters, which pads the #US heap by 2n bytes. */
  const padded = (n: number) =>
    `public static class Program { public static int Main() { System.Console.WriteLine("foo!" + "${'x'.repeat(n)}".Length); return 0; } }`;
  /** What `build` makes of `padded(n)` for the n whose .text data ends `target` bytes past a multiple of `modulo` (within 16). */
  const sized = (build: (source: string) => Uint8Array, modulo: number, target: number): Uint8Array => {
    let n = 0;
    for (let i = 0; i < 6; i++) {
      const bytes = build(padded(n));
      const end = parsePeImage(bytes).sections[0]!.virtualSize % modulo;
      if (end >= target && end < target + 16) return bytes;
      n += Math.ceil(((((target - end) % modulo) + modulo) % modulo) / 2);
    }
    throw new Error(`no build ends at ${target} modulo ${modulo}`);
  };
  const mcsSized = (platform: 'anycpu' | 'x64', modulo: number, target: number) => sized((source) => mcsBuild(platform, { source }), modulo, target);

  test('mcs exes: in place (the output has the input size) when the padding has room, else the tail in a new section; sn -vf, SRM, Mono and .NET agree', {
    timeout: 240_000,
  }, async () => {
    const shapes: [string, Uint8Array, 'in-place' | 'tail-moved'][] = [];
    for (const platform of ['anycpu', 'x64'] as const) {
      // .text's data ends 0x60 bytes into a 512-byte unit: 416 bytes of padding hold the 300 it grows by.
      shapes.push([`inplace-${platform}.exe`, mcsSized(platform, 0x200, 0x60), 'in-place']);
      // .text's data ends 0x60 bytes before the next section's address (SectionAlignment 0x2000): no room in memory.
      shapes.push([`moved-${platform}.exe`, mcsSized(platform, 0x2000, 0x2000 - 0x60), 'tail-moved']);
    }
    const folder = join(dir, 'placed');
    const pairs: [string, string][] = [];
    for (const [name, bytes, path] of shapes) {
      const result = strongNameAssembly(bytes, { key: pair });
      const before = parsePeImage(bytes);
      const after = parsePeImage(result.bytes);
      const module = readModule(result.bytes);
      expect(module.corHeader.metadata.rva, name).toBe(readModule(bytes).corHeader.metadata.rva);
      if (path === 'in-place') {
        expect(result.bytes.length, name).toBe(bytes.length);
        expect(
          after.sections.map((s) => s.name),
          name,
        ).toEqual(before.sections.map((s) => s.name));
      } else {
        // The headers grow by 512 bytes for the new section header, the section holds the tail (imports, the stub).
        expect(
          after.sections.map((s) => s.name),
          name,
        ).toEqual([...before.sections.map((s) => s.name), STRONG_NAME_TAIL_SECTION]);
        expect(result.bytes.length, name).toBe(bytes.length + 512 + 512);
        const tail = after.sections.at(-1)!;
        expect(tail.characteristics, name).toBe(before.sections[0]!.characteristics);
        const entry = new DataView(result.bytes.buffer).getUint32(after.optionalHeaderFileOffset + 16, true);
        expect(entry >= tail.virtualAddress && entry < tail.virtualAddress + tail.virtualSize, name).toBe(true);
      }
      expect(verifyStrongName(module, { expectedKey: pair.publicKey }).valid, name).toBe(true);
      const fixed = save(`placed/${name}`, result.bytes);
      pairs.push([save(`placed/in/${name}`, bytes), fixed]);
      expect(runMono('sn', ['-q', '-vf', fixed]).status, name).toBe(0);
      const mono = spawnSync('mono', [fixed], { encoding: 'utf8' });
      expect(mono.stdout + mono.stderr, name).toContain('foo!');
      expect(mono.status, name).toBe(0);
      const dotnet = host(folder, name);
      expect(dotnet.stdout, `${name}: ${dotnet.stderr}`).toContain('foo!');
    }
    for (const r of await srmCompare(pairs)) {
      expect(r.error, r.rewritten).toBeNull();
      expect(r.differences, r.rewritten).toEqual([]);
    }
  });

  test('a Roslyn exe with a resource, field data and a portable PDB: .text grows by one unit at most; the resource, the array and the PDB still match', {
    timeout: 240_000,
  }, async () => {
    const folder = join(dir, 'roslyn');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'greeting.txt'), 'hello from the resource');
    writeFileSync(
      join(folder, 'p.cs'),
      `public static class Program {
  static readonly int[] Primes = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53 };
  public static int Main() {
    var stream = typeof(Program).Assembly.GetManifestResourceStream("greeting.txt");
    System.Console.WriteLine(new System.IO.StreamReader(stream).ReadToEnd());
    int sum = 0; foreach (var p in Primes) sum += p;
    System.Console.WriteLine("sum " + sum);
    try { throw new System.InvalidOperationException("where"); } catch (System.Exception e) { System.Console.WriteLine(e.StackTrace); }
    return 0;
  }
}`,
    );
    const input = join(folder, 'Roslyn.exe');
    csc(['-target:exe', '-debug:portable', `-resource:${join(folder, 'greeting.txt')},greeting.txt`, `-out:${input}`, join(folder, 'p.cs')]);
    const bytes = new Uint8Array(readFileSync(input));
    const result = strongNameAssembly(bytes, { key: pair });
    const before = parsePeImage(bytes);
    const after = parsePeImage(result.bytes);
    expect(after.sections.map((s) => s.name)).toEqual(before.sections.map((s) => s.name));
    expect([bytes.length, bytes.length + 512]).toContain(result.bytes.length);
    const out = join(folder, 'fixed');
    const fixed = save('roslyn/fixed/Roslyn.exe', result.bytes);
    copyFileSync(join(folder, 'Roslyn.pdb'), join(out, 'Roslyn.pdb'));
    expect(runMono('sn', ['-q', '-vf', fixed]).status).toBe(0);
    const [srm] = await srmCompare([[input, fixed]]);
    expect(srm!.error).toBeNull();
    expect(srm!.differences).toEqual([]);
    expect(srm!.changes).toEqual(expect.arrayContaining(['managed resources moved', 'debug data 0 (CodeView) moved', 'debug data 1 (PdbChecksum) moved']));
    expect(srm!.changes!.some((c) => /^field data [0-9a-f]{8} moved$/.test(c))).toBe(true);
    // The PDB's id is the CodeView entry's GUID and the entry's stamp; its SHA-256 (id zeroed) is the PdbChecksum entry's.
    const pdb = readFileSync(join(out, 'Roslyn.pdb'));
    const entries = debugEntries(result.bytes);
    const codeView = entries.find((e) => e.type === 2)!;
    const pdbStream = pdbIdOffset(pdb);
    expect(codeView.data.subarray(0, 4).toString('latin1')).toBe('RSDS');
    expect(codeView.data.subarray(4, 20).equals(pdb.subarray(pdbStream, pdbStream + 16))).toBe(true);
    expect(codeView.stamp).toBe(pdb.readUInt32LE(pdbStream + 16));
    const checksum = entries.find((e) => e.type === 19)!;
    const zeroed = Buffer.from(pdb);
    zeroed.fill(0, pdbStream, pdbStream + 20);
    const { createHash } = await import('node:crypto');
    expect(checksum.data.subarray(7).equals(createHash('sha256').update(zeroed).digest())).toBe(true);
    // It runs: the resource and the array read back, and Mono finds the PDB (file and line in the stack trace).
    const mono = spawnSync('mono', ['--debug', fixed], { encoding: 'utf8' });
    expect(mono.status, mono.stderr).toBe(0);
    expect(mono.stdout).toContain('hello from the resource');
    expect(mono.stdout).toContain('sum 381');
    expect(mono.stdout).toMatch(/p\.cs:(line )?8/);
    const dotnet = host(out, 'Roslyn.exe');
    expect(dotnet.status, dotnet.stderr).toBe(0);
    expect(dotnet.stdout).toContain('hello from the resource');
    expect(dotnet.stdout).toContain('sum 381');
  });

  test('a Roslyn exe with an embedded PDB and little room in memory: only the imports and the stub go to the new section', { timeout: 240_000 }, async () => {
    const folder = join(dir, 'split');
    mkdirSync(join(folder, 'fixed'), { recursive: true });
    const build = (source: string) => {
      writeFileSync(join(folder, 'p.cs'), source);
      csc(['-target:exe', '-deterministic', '-debug:embedded', `-out:${join(folder, 'Split.exe')}`, join(folder, 'p.cs')]);
      return new Uint8Array(readFileSync(join(folder, 'Split.exe')));
    };
    // .text's data ends 0x100 bytes before the next section: the imports and the stub (0x5A bytes) must leave.
    const bytes = sized(build, 0x2000, 0x2000 - 0x100);
    const result = strongNameAssembly(bytes, { key: pair });
    const after = parsePeImage(result.bytes);
    expect(after.sections.at(-1)!.name).toBe(STRONG_NAME_TAIL_SECTION);
    expect(after.sections.at(-1)!.virtualSize).toBeLessThanOrEqual(0x80);
    expect(result.bytes.length).toBe(bytes.length + 512 + 512);
    const embedded = debugEntries(result.bytes).find((e) => e.type === 17)!;
    expect(embedded.data.equals(debugEntries(bytes).find((e) => e.type === 17)!.data)).toBe(true);
    const fixed = save('split/fixed/Split.exe', result.bytes);
    expect(runMono('sn', ['-q', '-vf', fixed]).status).toBe(0);
    const [srm] = await srmCompare([[save('split/Split.in.exe', bytes), fixed]]);
    expect(srm!.error).toBeNull();
    expect(srm!.differences).toEqual([]);
    expect(srm!.changes!.some((c) => /^debug data \d \(EmbeddedPortablePdb\) moved$/.test(c))).toBe(true);
    const mono = spawnSync('mono', [fixed], { encoding: 'utf8' });
    expect(mono.stdout, mono.stderr).toContain('foo!');
    expect(host(join(folder, 'fixed'), 'Split.exe').stdout).toContain('foo!');
  });

  test('a Roslyn exe whose embedded PDB must leave .text too: .text keeps its VirtualSize, so its raw data stays within it and .NET loads the output', async () => {
    const folder = join(dir, 'pdb-moved');
    mkdirSync(join(folder, 'fixed'), { recursive: true });
    const build = (source: string) => {
      // Sixty methods with locals: an embedded PDB of a few KiB, several FileAlignment units to leave .text.
      const methods = Array.from({ length: 60 }, (_, i) => `public static int M${i}(int a) { int b = a * ${i}; int c = b + ${i}; return c - a; }`).join('\n');
      writeFileSync(join(folder, 'p.cs'), `${source}\npublic static class More {\n${methods}\n}\n`);
      csc(['-target:exe', '-deterministic', '-debug:embedded', `-out:${join(folder, 'Moved.exe')}`, join(folder, 'p.cs')]);
      return new Uint8Array(readFileSync(join(folder, 'Moved.exe')));
    };
    // .text's data ends 0x20 bytes before the next section: less room than the metadata grows by, so the split comes
    // before the debug data and the embedded PDB (more than a FileAlignment unit) moves to the new section.
    const bytes = sized(build, 0x2000, 0x2000 - 0x20);
    const result = strongNameAssembly(bytes, { key: pair });
    const before = parsePeImage(bytes);
    const after = parsePeImage(result.bytes);
    expect(after.sections.at(-1)!.name).toBe(STRONG_NAME_TAIL_SECTION);
    expect(after.sections.at(-1)!.virtualSize).toBeGreaterThan(0x400);
    // The image rule .NET holds each section to (CoreCLR refused such outputs as "Bad IL format" when .text's
    // VirtualSize shrank below its raw data): raw data within VirtualSize rounded up to FileAlignment.
    const fileAlignment = new DataView(result.bytes.buffer, result.bytes.byteOffset).getUint32(after.optionalHeaderFileOffset + 36, true);
    for (const section of after.sections)
      expect(section.sizeOfRawData, section.name).toBeLessThanOrEqual(Math.ceil(section.virtualSize / fileAlignment) * fileAlignment);
    expect(after.sections[0]!.virtualSize).toBe(before.sections[0]!.virtualSize);
    const fixed = save('pdb-moved/fixed/Moved.exe', result.bytes);
    expect(runMono('sn', ['-q', '-vf', fixed]).status).toBe(0);
    const ran = host(join(folder, 'fixed'), 'Moved.exe');
    expect(ran.stdout, ran.stderr).toContain('foo!');
  });
});

/** The debug directory entries of a PE image: type, stamp and the data at PointerToRawData. */
function debugEntries(bytes: Uint8Array): { type: number; stamp: number; data: Buffer }[] {
  const image = parsePeImage(bytes);
  const dir = image.dataDirectories[6]!;
  const text = image.sections.find((s) => dir.virtualAddress >= s.virtualAddress && dir.virtualAddress < s.virtualAddress + s.virtualSize)!;
  const at = text.pointerToRawData + dir.virtualAddress - text.virtualAddress;
  const buffer = Buffer.from(bytes);
  return Array.from({ length: dir.size / 28 }, (_, i) => {
    const e = at + i * 28;
    const size = buffer.readUInt32LE(e + 16);
    const pointer = buffer.readUInt32LE(e + 24);
    return { type: buffer.readUInt32LE(e + 12), stamp: buffer.readUInt32LE(e + 4), data: buffer.subarray(pointer, pointer + size) };
  });
}

/** File offset of a portable PDB's id (the first 20 bytes of its #Pdb stream). */
function pdbIdOffset(pdb: Buffer): number {
  const versionLength = pdb.readUInt32LE(12);
  let at = 16 + versionLength + 2;
  const streams = pdb.readUInt16LE(at);
  at += 2;
  for (let i = 0; i < streams; i++) {
    const offset = pdb.readUInt32LE(at);
    let end = at + 8;
    while (pdb[end] !== 0) end++;
    const name = pdb.subarray(at + 8, end).toString('latin1');
    if (name === '#Pdb') return offset;
    at = (end + 4) & ~3;
  }
  throw new Error('no #Pdb stream');
}
