// The service's packages on disk (result packages, archives): written through a temporary file beside the target
// (`.name.tmp-…`, which the data directory's start-up sweep knows), renamed when complete, so that no reader sees half.
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { writeZip, type ZipEntry } from '../zip/write-zip.js';

/** A ZIP entry of the file at `path`, read when its turn comes. */
export function zipEntryOfFile(name: string, path: string): ZipEntry {
  return { name, source: { read: () => readFile(path) } };
}

/**
 * Writes `entries` as a ZIP package at `target`, through a temporary file in the same folder that is renamed when
 * complete (removed on failure). With `keep`, every chunk written is also appended to it (the package in memory).
 * @throws SignGateError (SG_ERR_IO_WRITE) when the package would need the Zip64 extension
 */
export async function writeZipFile(target: string, entries: readonly ZipEntry[], keep?: Uint8Array[]): Promise<void> {
  const temp = join(dirname(target), `.${basename(target)}.tmp-${randomBytes(4).toString('hex')}`);
  const out = await open(temp, 'wx');
  try {
    await writeZip({ name: target, write: async (chunks) => void (await out.writev(chunks as Uint8Array[])) }, entries, keep);
    await out.close();
    await rename(temp, target);
  } catch (error) {
    await out.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
}
