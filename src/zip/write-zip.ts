// Writes a ZIP package with yazl, to a temporary file first and then renamed, so a reader never sees half of it.
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import yazl from 'yazl';

export interface ZipEntry {
  /** Name inside the package, `/`-separated. */
  readonly name: string;
  /** A file on disk to store, or the bytes. */
  readonly source: { readonly path: string } | { readonly bytes: Uint8Array };
}

/** The same bytes as a Buffer, without copying them (yazl takes Buffers only). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A fixed date keeps packages of the same content byte-identical. */
const FIXED_DATE = new Date(Date.UTC(2000, 0, 1));

export async function writeZip(target: string, entries: readonly ZipEntry[]): Promise<void> {
  const temp = join(dirname(target), `.${basename(target)}.tmp-${randomBytes(4).toString('hex')}`);
  const zip = new yazl.ZipFile();
  // yazl reports a file it cannot read (stat or open) as 'error' on the ZipFile: without a listener that
  // would end the process. Kept until the promise below takes over.
  let zipError: Error | undefined;
  zip.on('error', (error: Error) => (zipError ??= error));
  for (const entry of entries) {
    const options = { mtime: FIXED_DATE, mode: 0o100644 };
    if ('path' in entry.source) zip.addFile(entry.source.path, entry.name, options);
    else zip.addBuffer(asBuffer(entry.source.bytes), entry.name, options);
  }
  zip.end();
  try {
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(temp, { flags: 'wx' });
      let failed = false;
      const fail = (error: Error) => {
        if (failed) return;
        failed = true;
        zip.outputStream.unpipe(out);
        // Settle only once the file is closed, so that removing the temporary file below cannot race its opening.
        if (out.closed) return reject(error);
        out.once('close', () => reject(error));
        out.destroy();
      };
      if (zipError) return fail(zipError);
      zip.on('error', fail);
      zip.outputStream.on('error', fail).pipe(out).on('error', fail).on('close', () => (failed ? undefined : resolve()));
    });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}
