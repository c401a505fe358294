// ZIP archives for the archive path: a project folder zipped with yazl (a ZIP writer apart from the one that writes result packages),
// and the hostile ones a well-behaved library will not make (through hostile-zip.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import yazl from 'yazl';
import { buildZip, type RawEntry } from './hostile-zip.js';
import { fixturePath } from './fixtures.js';

/** Zips entries in memory (deflated). */
export function zipEntries(entries: { name: string; bytes: Uint8Array }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(Buffer.from(e.bytes), e.name, { mtime: new Date(Date.UTC(2020, 0, 1)) });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}

/** Every file below a fixture folder, named relative to it. */
export function folderEntries(folder: string): { name: string; bytes: Buffer }[] {
  const root = fixturePath(folder);
  const out: { name: string; bytes: Buffer }[] = [];
  const walk = (dir: string) => {
    for (const n of readdirSync(dir).sort()) {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ name: relative(root, p).split('\\').join('/'), bytes: readFileSync(p) });
    }
  };
  walk(root);
  return out;
}

/** The sample add-in as a user zips it: its files, a readme, a settings file and a nested archive left as it is. */
export async function sampleProjectArchive(): Promise<{ zip: Buffer; entries: { name: string; bytes: Buffer }[] }> {
  const nested = await zipEntries([{ name: 'inner.txt', bytes: Buffer.from('inside a nested archive\n') }]);
  const entries = [
    ...folderEntries('addin'),
    { name: 'README.txt', bytes: Buffer.from('Sample add-in, release 1.4.2\r\n') },
    { name: 'config/settings.json', bytes: Buffer.from('{"level":3}\n') },
    { name: 'docs/source.zip', bytes: nested },
  ];
  return { zip: await zipEntries(entries), entries };
}

/**
 * A password-protected archive as ZipCrypto writes it: general-purpose bit 0 set, and each stored entry's data
 * preceded by the 12-byte encryption header (so the stored size is 12 more than the file's size).
 */
export function encryptedArchive(entries: RawEntry[]): Buffer {
  const zip = buildZip(entries.map((e) => ({ ...e, data: Buffer.concat([Buffer.alloc(12, 0xa5), Buffer.from(e.data)]) })));
  let offset = 0;
  for (const e of entries) {
    // Local header: flags at 6, uncompressed size at 22.
    zip.writeUInt16LE(zip.readUInt16LE(offset + 6) | 1, offset + 6);
    zip.writeUInt32LE(e.data.length, offset + 22);
    offset += 30 + Buffer.byteLength(e.name) + 12 + e.data.length;
  }
  for (const e of entries) {
    // Central header: flags at 8, uncompressed size at 24.
    zip.writeUInt16LE(zip.readUInt16LE(offset + 8) | 1, offset + 8);
    zip.writeUInt32LE(e.data.length, offset + 24);
    offset += 46 + Buffer.byteLength(e.name);
  }
  return zip;
}
