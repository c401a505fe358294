// Reads a ZIP package with yauzl into memory, with caps on entry count and total inflated size and a
// check of every entry name (no absolute paths, no `..`, no drive letters, no symlinks).
import yauzl from 'yauzl';
import { SignGateError } from '../core/errors.js';

export interface ZipLimits {
  readonly maxEntries: number;
  readonly maxTotalBytes: number;
  /**
   * Most an entry may inflate per byte stored (a zip bomb inflates a thousandfold); checked for entries that inflate
   * to at least `ratioFloorBytes`, as tiny files compress well without harm (archive uploads: 64 KiB, see
   * archiveZipLimits). Default: no check.
   */
  readonly maxRatio?: number;
  /** Default, when maxRatio is given without it: 1 MiB. */
  readonly ratioFloorBytes?: number;
}

/** Why a ZIP was refused, for callers that answer differently per cause (the service says "encrypted" as such). */
export type ZipRefusalReason = 'not-zip' | 'damaged' | 'unsafe-name' | 'symlink' | 'encrypted' | 'too-many-entries' | 'too-large' | 'ratio';

/** A ZIP refused before anything of it was used; `reason` says why in one word, the message in a sentence. */
export class ZipRefusal extends SignGateError {
  constructor(
    readonly reason: ZipRefusalReason,
    message: string,
  ) {
    super('SG_ERR_HTTP_BAD_RESPONSE', message);
    this.name = 'ZipRefusal';
  }
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

function fail(message: string, reason: ZipRefusalReason = 'damaged'): ZipRefusal {
  return new ZipRefusal(reason, message);
}

/** Reads every file entry; directories are skipped. Unsafe names, symlinks, encrypted entries and oversized packages are refused. */
export function readZip(buffer: Uint8Array, limits: ZipLimits = DEFAULT_ZIP_LIMITS): Promise<ZipFileEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength),
      { lazyEntries: true, decodeStrings: true, validateEntrySizes: true },
      (openError, zip) => {
        if (openError || !zip) return reject(fail(`the package is not a ZIP file (${openError?.message ?? 'unreadable'})`, 'not-zip'));
        const out: ZipFileEntry[] = [];
        let total = 0;
        // Every entry counts against the limit, folders too: 60,000 folder entries cost as much to walk as files.
        let seen = 0;
        // yauzl refuses some unsafe names itself ("invalid relative path"); either way nothing is written.
        zip.on('error', (e: Error) =>
          reject(
            fail(
              `the ZIP package is damaged or unsafe (${e.message}); nothing was extracted`,
              /invalid relative path|absolute path|invalid characters/i.test(e.message) ? 'unsafe-name' : 'damaged',
            ),
          ),
        );
        zip.on('end', () => resolve(out));
        zip.on('entry', (entry: yauzl.Entry) => {
          const reason = unsafeEntryReason(entry.fileName);
          if (reason) return reject(fail(`the ZIP entry ${JSON.stringify(entry.fileName)} has ${reason}; nothing was extracted`, 'unsafe-name'));
          if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK)
            return reject(fail(`the ZIP entry ${JSON.stringify(entry.fileName)} is a symbolic link; nothing was extracted`, 'symlink'));
          // General-purpose flag bit 0: traditional PKWARE or AES encryption (II 4.4.4 of APPNOTE).
          if (entry.isEncrypted())
            return reject(
              fail(`the ZIP entry ${JSON.stringify(entry.fileName)} is encrypted (the archive is password-protected); nothing was extracted`, 'encrypted'),
            );
          if (++seen > limits.maxEntries) return reject(fail(`the ZIP package has more than ${limits.maxEntries} entries (folders count)`, 'too-many-entries'));
          total += entry.uncompressedSize;
          if (total > limits.maxTotalBytes) return reject(fail(`the ZIP package inflates to more than ${limits.maxTotalBytes} bytes`, 'too-large'));
          if (
            limits.maxRatio !== undefined &&
            entry.uncompressedSize >= (limits.ratioFloorBytes ?? 1024 * 1024) &&
            entry.uncompressedSize > limits.maxRatio * Math.max(1, entry.compressedSize)
          ) {
            return reject(
              fail(
                `the ZIP entry ${JSON.stringify(entry.fileName)} inflates ${Math.round(entry.uncompressedSize / Math.max(1, entry.compressedSize))} times (${entry.compressedSize} to ${entry.uncompressedSize} bytes), more than ${limits.maxRatio}; nothing was extracted`,
                'ratio',
              ),
            );
          }
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
      },
    );
  });
}
