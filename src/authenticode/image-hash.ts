// The Authenticode image hash: the whole file up to the certificate table, except the CheckSum field and the
// certificate table's data-directory entry (the layout signtool and osslsigncode hash; for an image whose
// sections follow the headers in order this equals the section-wise hash of the Authenticode specification).
import { createHash } from 'node:crypto';
import { DataDirectoryIndex, getDataDirectory, type PeImage } from '../pe/pe-image.js';

/** The byte ranges the image hash covers, in order ([start, end) file offsets). */
export function imageHashRanges(image: PeImage): Array<readonly [number, number]> {
  const dir = getDataDirectory(image, DataDirectoryIndex.Certificate);
  const end = dir.size > 0 && dir.virtualAddress <= image.bytes.length ? dir.virtualAddress : image.bytes.length;
  const holes: Array<readonly [number, number]> = [[image.checkSumFileOffset, image.checkSumFileOffset + 4]];
  if (dir.entryFileOffset >= 0) holes.push([dir.entryFileOffset, dir.entryFileOffset + 8]);
  holes.sort((a, b) => a[0] - b[0]);
  const ranges: Array<readonly [number, number]> = [];
  let at = 0;
  for (const [from, to] of holes) {
    if (from >= end) break;
    if (from > at) ranges.push([at, from]);
    at = Math.max(at, to);
  }
  if (end > at) ranges.push([at, end]);
  return ranges;
}

/**
 * Computes the image hash with a node:crypto digest name (`sha256`, `sha1`, ...). A file without a certificate
 * table is padded with zeros to a multiple of 8, as signing tools pad it before they append the table.
 */
export function computeAuthenticodeImageHash(image: PeImage, algorithm: string): Uint8Array {
  const hash = createHash(algorithm);
  let last = 0;
  for (const [from, to] of imageHashRanges(image)) {
    hash.update(image.bytes.subarray(from, to));
    last = to;
  }
  const hasTable = getDataDirectory(image, DataDirectoryIndex.Certificate).size > 0;
  if (!hasTable && last % 8 !== 0) hash.update(new Uint8Array(8 - (last % 8)));
  return new Uint8Array(hash.digest());
}
