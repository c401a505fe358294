// Reads a ZIP package with yauzl into memory, with caps on entry count and total inflated size and a
// check of every entry name (no absolute paths, no `..`, no drive letters, no symlinks).
import yauzl from 'yauzl';
import { SignGateError } from '../core/errors.js';

export interface ZipLimits {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = { maxEntries: 10_000, maxTotalBytes: 1024 * 1024 * 1024 };

export interface ZipFileEntry {
  /** `/`-separated relative path. */
  readonly name: string;
  readonly bytes: Buffer;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** Why an entry name is unsafe to extract, or undefined when it is safe. */
export function unsafeEntryReason(name: string): string | undefined {
  const n = name.replace(/\\/g, '/');
  if (n.startsWith('/')) return 'an absolute path';
  if (/^[A-Za-z]:/.test(n)) return 'a drive letter';
  if (n.split('/').some((s) => s === '..')) return 'a ".." segment';
  if (n.includes('\0')) return 'a NUL character';
  return undefined;
}

function fail(message: string): SignGateError {
  return new SignGateError('SG_ERR_HTTP_BAD_RESPONSE', message);
}

/** Reads every file entry; directories are skipped. Unsafe names, symlinks and oversized packages are refused. */
export function readZip(buffer: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipFileEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength), { lazyEntries: true, decodeStrings: true, validateEntrySizes: true }, (openError, zip) => {
      if (openError || !zip) return reject(fail(`the package is not a ZIP file (${openError?.message ?? 'unreadable'})`));
      const out: ZipFileEntry[] = [];
      let total = 0;
      // yauzl refuses some unsafe names itself ("invalid relative path"); either way nothing is written.
      zip.on('error', (e: Error) => reject(fail(`the ZIP package is damaged or unsafe (${e.message}); nothing was extracted`)));
      zip.on('end', () => resolve(out));
      zip.on('entry', (entry: yauzl.Entry) => {
        const reason = unsafeEntryReason(entry.fileName);
        if (reason) return reject(fail(`the ZIP entry ${JSON.stringify(entry.fileName)} has ${reason}; nothing was extracted`));
        if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return reject(fail(`the ZIP entry ${JSON.stringify(entry.fileName)} is a symbolic link; nothing was extracted`));
        if (out.length + 1 > limits.maxEntries) return reject(fail(`the ZIP package has more than ${limits.maxEntries} entries`));
        total += entry.uncompressedSize;
        if (total > limits.maxTotalBytes) return reject(fail(`the ZIP package inflates to more than ${limits.maxTotalBytes} bytes`));
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(fail(`the ZIP entry ${entry.fileName} cannot be read`));
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('error', (e: Error) => reject(fail(`the ZIP entry ${entry.fileName} is damaged: ${e.message}`)));
          stream.on('end', () => {
            out.push({ name: entry.fileName, bytes: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
