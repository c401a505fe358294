// What an archive upload (`sign --archive`, POST /archives) may hold: expansion limits on top of the upload limit,
// and entry names as uploads are named, with the result's own names reserved. The service refuses by these rules;
// the client applies the same ones before it uploads.
import { UploadNames } from '../core/upload-names.js';
import { windowsNameProblem, windowsPathKey } from '../core/windows-names.js';
import type { ZipFileEntry, ZipLimits } from './read-zip.js';

/** The folder of per-file logs in the returned archive; reserved in uploaded archives. */
export const PER_FILE_LOGS = 'signing-logs';

/** The entries that are signed (or returned as modules of their assembly); every other file is returned as it came. */
export const ARCHIVE_ASSEMBLY = /\.(?:dll|exe|netmodule)$/i;

/** An archive entry's compression ratio is checked from this expanded size on: 64 KiB. */
export const ARCHIVE_RATIO_FLOOR_BYTES = 64 * 1024;

/**
 * Expansion limits of one archive: 5000 entries, twice the upload limit expanded, ratio 100 for entries of 64 KiB
 * (ARCHIVE_RATIO_FLOOR_BYTES) or more (a DLL deflates about 3:1, a zip bomb 1000:1).
 */
export function archiveZipLimits(maxUploadBytes: number): ZipLimits {
  // The ratio is checked from 64 KiB on (from the sizes the entry declares, which yauzl holds it to while it
  // inflates): a file of a million zero bytes is refused before a byte of it is inflated.
  return { maxEntries: 5000, maxTotalBytes: 2 * maxUploadBytes, maxRatio: 100, ratioFloorBytes: ARCHIVE_RATIO_FLOOR_BYTES };
}

/** An entry whose name cannot be accepted, and why. */
export interface ArchiveNameProblem {
  readonly fileName: string;
  readonly detail: string;
}

/** Checks every entry as an upload name (and as a Windows name); the reserved names of the result are refused. */
export function archiveNameProblems(entries: readonly ZipFileEntry[]): ArchiveNameProblem[] {
  const names = new UploadNames();
  const problems: ArchiveNameProblem[] = [];
  for (const e of entries) {
    const windows = windowsNameProblem(e.name);
    const reserved =
      windowsPathKey(e.name).split('/')[0] === windowsPathKey(PER_FILE_LOGS) ? `${PER_FILE_LOGS}/ is reserved for the per-file logs of the result` : undefined;
    const check = names.check(e.name);
    const reason = windows ? `the name ${windows}` : (reserved ?? (check.ok ? undefined : check.reason));
    if (reason) problems.push({ fileName: e.name, detail: reason });
  }
  return problems;
}
