// lazyModuleMetadata reads a module's metadata as it is asked for (fix plans a set from a few rows of it): what it
// gives is what ModuleMetadata over the whole file gives, values and errors alike, and of a large metadata it reads
// what the rows asked for need.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { lazyModuleMetadata } from '../../src/metadata/lazy-metadata.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { TableId } from '../../src/metadata/schema.js';
import { parseCorHeader } from '../../src/pe/cor-header.js';
import { parsePeImage, rvaToFileOffset } from '../../src/pe/pe-image.js';
import { classifyStrongName } from '../../src/strongname/strong-name.js';
import { friendNames, unfixableReason } from '../../src/strongname/strong-name-writer.js';
import { fixture, fixturesDir } from '../helpers/fixtures.js';
import { methodPtrAttributes, sharedAttributeBlob, sharedStringTails } from '../helpers/hostile-assemblies.js';
import { BlobsBuilder, StringsBuilder, buildMetadata, coded, compressedU32, withMetadata } from '../helpers/metadata-image.js';

/**
 * The module over a copy of `bytes` whose metadata is zero until read: each read copies the file's bytes (as far
 * as the file goes) and is counted. Read `pieceBytes` at a time (1: exactly what is asked for).
 */
function lazily(bytes: Uint8Array, pieceBytes?: number): { module: () => ModuleMetadata; bytesRead: () => number } {
  const copy = Uint8Array.from(bytes);
  try {
    const image = parsePeImage(bytes);
    const md = parseCorHeader(image).metadata;
    const at = rvaToFileOffset(image, md.rva, md.size, 'metadata root');
    copy.fill(0, at, at + md.size);
  } catch {
    // the same error comes from the lazy module
  }
  let read = 0;
  const readBytes = (at: number, length: number) => {
    const end = Math.min(bytes.length, at + length);
    if (end > at) copy.set(bytes.subarray(at, end), at);
    read += Math.max(0, end - at);
  };
  return { module: () => lazyModuleMetadata(parsePeImage(copy), readBytes, {}, pieceBytes), bytesRead: () => read };
}

/** What fix plans from: the rows, the assembly's attributes and their verdicts; or the error, as code and message. */
function planned(module: () => ModuleMetadata): unknown {
  try {
    const m = module();
    const unfixable = unfixableReason(m);
    if (unfixable || !m.hasManifest) return { unfixable };
    const status = classifyStrongName(m, { verify: false });
    return {
      assembly: m.assembly,
      references: m.assemblyReferences,
      resources: m.manifestResources,
      attributes: m.assemblyAttributes,
      friends: friendNames(m),
      state: status.state,
      description: status.description,
      // Work as charged to the budgets; the CustomAttribute table is scanned once, not once per question.
      work: { ...m.work, rowsScanned: undefined },
    };
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message };
  }
}

function assemblies(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) assemblies(join(dir, e.name), out);
    else if (/\.(dll|exe)$/i.test(e.name)) out.push(join(dir, e.name));
  }
  return out;
}

describe('lazyModuleMetadata', () => {
  test('gives what ModuleMetadata over the whole file gives, for every assembly of the fixtures and the hostile shapes', () => {
    const files = assemblies(fixturesDir).map((f) => [f, fixture(f.slice(fixturesDir.length + 1))] as const);
    expect(files.length).toBeGreaterThan(50);
    const shapes = [
      ['shared string tails', sharedStringTails(60, 64 * 1024)],
      ['MethodPtr attributes', methodPtrAttributes(3_000)],
      ['shared attribute blob', sharedAttributeBlob(300, 64 * 1024)],
    ] as const;
    let errors = 0;
    for (const [name, bytes] of [...files, ...shapes]) {
      const whole = planned(() => new ModuleMetadata(parsePeImage(Uint8Array.from(bytes))));
      if ((whole as { code?: string }).code) errors++;
      // Read byte by byte, a byte not asked for is zero: a reader that reads too little shows here.
      for (const piece of [1, 7, undefined]) expect(planned(lazily(bytes, piece).module), `${name} (${piece ?? 'default'}-byte pieces)`).toEqual(whole);
    }
    // Broken files are among them: their errors are the same too.
    expect(errors).toBeGreaterThan(0);
  });

  test('a truncated file and one whose metadata is damaged give the same errors', () => {
    const good = fixture('bench/LargeAddin.dll');
    const at = new ModuleMetadata(parsePeImage(Uint8Array.from(good))).root.fileOffset;
    const variants = [good.subarray(0, at + 200), Uint8Array.from(good).fill(0xff, at + 108, at + 140), Uint8Array.from(good).fill(0x58, at, at + 4)];
    for (const bytes of variants) {
      const whole = planned(() => new ModuleMetadata(parsePeImage(Uint8Array.from(bytes))));
      expect((whole as { code?: string }).code).toBeDefined();
      for (const piece of [1, undefined]) expect(planned(lazily(bytes, piece).module)).toEqual(whole);
    }
  });

  // The CustomAttribute table out of order (the assembly's attributes first and last), and the Assembly row's
  // parent value (0x2E) at the start of another column: rows are matched where they start, and all of them.
  test("finds the assembly's attributes in an unsorted table, and only where a row starts", () => {
    const strings = new StringsBuilder();
    const blobs = new BlobsBuilder();
    const ctor = strings.add('.ctor');
    const friend = (name: string) => blobs.add(Buffer.concat([Uint8Array.of(0x01, 0x00), compressedU32(name.length), Buffer.from(name), Uint8Array.of(0, 0)]));
    const ivt = { typeRef: 1 };
    const rows = {
      [TableId.Module]: [{ name: strings.add('Unsorted.dll'), mvid: 0 }],
      [TableId.TypeRef]: [
        {
          resolutionScope: coded('ResolutionScope', TableId.AssemblyRef, 1),
          typeName: strings.add('InternalsVisibleToAttribute'),
          typeNamespace: strings.add('System.Runtime.CompilerServices'),
        },
      ],
      [TableId.TypeDef]: [{ typeName: strings.add('<Module>'), fieldList: 1, methodList: 1 }],
      [TableId.MemberRef]: [
        { class: coded('MemberRefParent', TableId.TypeRef, ivt.typeRef), name: ctor, signature: blobs.add(Uint8Array.of(0x20, 0x01, 0x01, 0x0e)) },
      ],
      [TableId.Assembly]: [{ hashAlgId: 0x8004, majorVersion: 1, name: strings.add('Unsorted') }],
      [TableId.AssemblyRef]: [{ majorVersion: 4, name: strings.add('mscorlib') }],
      [TableId.CustomAttribute]: [
        { parent: coded('HasCustomAttribute', TableId.Assembly, 1), type: coded('CustomAttributeType', TableId.MemberRef, 1), value: friend('First') },
        // On the TypeDef, its value index 0x2E: the bytes 2E 00 that the Assembly row's attributes start with.
        { parent: coded('HasCustomAttribute', TableId.TypeDef, 1), type: coded('CustomAttributeType', TableId.MemberRef, 1), value: 0x2e },
        { parent: coded('HasCustomAttribute', TableId.Module, 1), type: coded('CustomAttributeType', TableId.MemberRef, 1), value: friend('NotAFriend') },
        { parent: coded('HasCustomAttribute', TableId.Assembly, 1), type: coded('CustomAttributeType', TableId.MemberRef, 1), value: friend('Last') },
      ],
    };
    while (blobs.bytes().length <= 0x2e) blobs.add(Uint8Array.of(0));
    const bytes = withMetadata(fixture('assemblies/delay-1024.dll'), buildMetadata({ strings: strings.bytes(), blobs: blobs.bytes(), rows }));
    const module = lazily(bytes, 1).module();
    expect(module.assemblyAttributes.map((a) => a.rid)).toEqual([1, 4]);
    expect(friendNames(module)).toEqual(['First', 'Last']);
    expect(planned(lazily(bytes).module)).toEqual(planned(() => new ModuleMetadata(parsePeImage(Uint8Array.from(bytes)))));
  });

  test('reads of a large metadata the rows that are asked for, the table that is scanned and the strings and blobs they name', () => {
    const strings = new StringsBuilder();
    const blobs = new BlobsBuilder();
    const types = Array.from({ length: 20_000 }, (_, i) => ({
      flags: 0x100001,
      typeName: strings.add(`Type${i}WithALongishName`),
      typeNamespace: strings.add(`Space${i % 50}`),
      fieldList: 1,
      methodList: 1,
    }));
    const values = Array.from({ length: 2_000 }, (_, i) => blobs.add(Buffer.from(`value ${i} `.repeat(10))));
    const bytes = withMetadata(
      fixture('assemblies/delay-1024.dll'),
      buildMetadata({
        strings: strings.bytes(),
        blobs: blobs.bytes(),
        rows: {
          [TableId.Module]: [{ name: strings.add('Large.dll'), mvid: 0 }],
          [TableId.TypeDef]: [{ typeName: strings.add('<Module>'), fieldList: 1, methodList: 1 }, ...types],
          [TableId.Assembly]: [{ hashAlgId: 0x8004, majorVersion: 1, name: strings.add('Large') }],
          [TableId.AssemblyRef]: [{ majorVersion: 4, name: strings.add('mscorlib'), publicKeyOrToken: values[1_000]! }],
        },
      }),
    );
    const size = new ModuleMetadata(parsePeImage(Uint8Array.from(bytes))).corHeader.metadata.size;
    expect(size).toBeGreaterThan(1024 * 1024);
    const lazy = lazily(bytes);
    expect(planned(lazy.module)).toEqual(planned(() => new ModuleMetadata(parsePeImage(Uint8Array.from(bytes)))));
    expect(lazy.bytesRead()).toBeLessThan(size / 8);
  });
});
