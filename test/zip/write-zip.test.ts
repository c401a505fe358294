// The package writer: what it writes is read back by yauzl, entry by entry, with each CRC-32 recomputed by
// buffer-crc32 (an implementation apart from Node's zlib that the writer uses).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import crc32 from 'buffer-crc32';
import yauzl from 'yauzl';
import { afterAll, describe, expect, test } from 'vitest';
import { SignGateError } from '../../src/core/errors.js';
import { writeZipFile, zipEntryOfFile } from '../../src/workflows/files.js';
import { prepareZipEntry, prepareZipEntryAsync, writeZip } from '../../src/zip/write-zip.js';
import { fixturePath } from '../helpers/fixtures.js';

interface ReadBack {
  name: string;
  method: number;
  crc32: number;
  externalAttributes: number;
  date: Date;
  bytes: Buffer;
}

function readBack(path: string): Promise<ReadBack[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, validateEntrySizes: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const out: ReadBack[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e);
          const parts: Buffer[] = [];
          stream.on('data', (d: Buffer) => parts.push(d));
          stream.on('end', () => {
            out.push({
              name: entry.fileName,
              method: entry.compressionMethod,
              crc32: entry.crc32,
              externalAttributes: entry.externalFileAttributes,
              date: entry.getLastModDate(),
              bytes: Buffer.concat(parts),
            });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'signgate-write-zip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeZip', () => {
  const assembly = readFileSync(fixturePath('addin/SampleAddin.dll'));
  const random = randomBytes(300 * 1024);
  const onDisk = join(dir, 'on-disk.dll');
  writeFileSync(onDisk, assembly);

  test('every kind of source comes back byte for byte with a correct CRC-32; random data is stored, an assembly deflated', async () => {
    const target = join(dir, 'package.zip');
    await writeZipFile(target, [
      { name: 'Addins/Contoso.Addin.dll', source: { bytes: assembly } },
      { name: 'random.bin', source: { bytes: random } },
      zipEntryOfFile('from-disk.dll', onDisk),
      { name: 'prepared.dll', source: { prepared: prepareZipEntry(assembly) } },
      { name: 'empty.txt', source: { bytes: new Uint8Array(0) } },
      { name: 'Überprüfung/Ä.txt', source: { bytes: new TextEncoder().encode('signing log\r\n') } },
    ]);
    const entries = await readBack(target);
    expect(entries.map((e) => e.name)).toEqual(['Addins/Contoso.Addin.dll', 'random.bin', 'from-disk.dll', 'prepared.dll', 'empty.txt', 'Überprüfung/Ä.txt']);
    const expected = [assembly, random, assembly, assembly, Buffer.alloc(0), Buffer.from('signing log\r\n')];
    entries.forEach((e, i) => {
      expect(e.bytes.equals(expected[i]!)).toBe(true);
      expect(e.crc32).toBe(crc32.unsigned(expected[i]!));
      expect(e.externalAttributes >>> 16).toBe(0o100644);
      // A fixed local date: the same content gives the same package in any time zone.
      expect([e.date.getFullYear(), e.date.getMonth(), e.date.getDate(), e.date.getHours()]).toEqual([2000, 0, 1, 0]);
    });
    expect(entries[0]!.method).toBe(8);
    expect(entries[1]!.method).toBe(0);
    // No temporary file is left beside the package.
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  test('a large file is judged on samples: assemblies are deflated, random data of the same size stored', () => {
    const large = Buffer.concat(Array.from({ length: 40 }, () => assembly));
    const largeRandom = randomBytes(large.length);
    expect(large.length).toBeGreaterThan(4 * 8 * 1024);
    const a = prepareZipEntry(large);
    expect(a.method).toBe('deflate');
    expect(a.data.length).toBeLessThan(large.length * 0.9);
    const r = prepareZipEntry(largeRandom);
    expect(r.method).toBe('store');
    expect(r.data).toBe(largeRandom);
    expect(r.crc32).toBe(crc32.unsigned(largeRandom));
  });

  test('the same entries give the same bytes, whichever way they were prepared', async () => {
    const a = join(dir, 'a.zip');
    const b = join(dir, 'b.zip');
    await writeZipFile(a, [
      { name: 'x.dll', source: { bytes: assembly } },
      { name: 'r.bin', source: { bytes: random } },
    ]);
    await writeZipFile(b, [
      { name: 'x.dll', source: { prepared: await prepareZipEntryAsync(assembly) } },
      { name: 'r.bin', source: { prepared: prepareZipEntry(random) } },
    ]);
    expect(readFileSync(a).equals(readFileSync(b))).toBe(true);
  });

  test('the package goes to any output, a batch of chunks at a time: in memory it is the bytes of the file', async () => {
    const entries = [
      { name: 'x.dll', source: { bytes: assembly } },
      { name: 'r.bin', source: { read: async () => random } },
    ];
    const written: Uint8Array[] = [];
    const kept: Uint8Array[] = [];
    await writeZip({ name: 'in memory', write: async (chunks) => void written.push(...chunks) }, entries, kept);
    await writeZipFile(join(dir, 'file.zip'), entries);
    expect(Buffer.concat(written).equals(readFileSync(join(dir, 'file.zip')))).toBe(true);
    expect(Buffer.concat(kept).equals(Buffer.concat(written))).toBe(true);
  });

  test('a file that cannot be read fails the package, and neither the package nor a temporary file is left', async () => {
    const target = join(dir, 'broken.zip');
    await expect(
      writeZipFile(target, [{ name: 'a.dll', source: { bytes: assembly } }, zipEntryOfFile('gone.dll', join(dir, 'no-such-file.dll'))]),
    ).rejects.toThrow(/no-such-file/);
    expect(readdirSync(dir).filter((n) => n.startsWith('.') || n === 'broken.zip')).toEqual([]);
  });

  test('more entries than a ZIP without Zip64 holds is refused with a clear error, before anything is written', async () => {
    const target = join(dir, 'too-many.zip');
    const entries = Array.from({ length: 0x10000 }, (_, i) => ({ name: `f${i}`, source: { bytes: new Uint8Array(0) } }));
    const error = await writeZipFile(target, entries).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SignGateError);
    expect((error as SignGateError).message).toMatch(/65,535 entries.*Split the files/);
    expect(readdirSync(dir).filter((n) => n.startsWith('.') || n === 'too-many.zip')).toEqual([]);
  });
});
