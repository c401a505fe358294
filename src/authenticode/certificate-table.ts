// The attribute certificate table (PE/COFF "The Attribute Certificate Table"): data directory 4 gives a file
// offset and size; the table is a run of WIN_CERTIFICATE entries, each 8-byte aligned:
// dwLength (u32, header included), wRevision (u16), wCertificateType (u16), then bCertificate.
import { FormatError, hex } from '../core/errors.js';
import { DataDirectoryIndex, getDataDirectory, type PeImage } from '../pe/pe-image.js';
import { DEFAULT_AUTHENTICODE_LIMITS, type AuthenticodeLimits } from './limits.js';

/** WIN_CERT_TYPE_PKCS_SIGNED_DATA: the only type Authenticode uses. */
export const WIN_CERT_TYPE_PKCS_SIGNED_DATA = 0x0002;

export interface CertificateTableEntry {
  readonly index: number;
  /** File offset of the 8-byte WIN_CERTIFICATE header. */
  readonly fileOffset: number;
  /** dwLength: header and certificate bytes. */
  readonly length: number;
  readonly revision: number;
  readonly certificateType: number;
  /** bCertificate (a view into the file). */
  readonly data: Uint8Array;
}

export interface CertificateTable {
  readonly fileOffset: number;
  readonly size: number;
  readonly entries: readonly CertificateTableEntry[];
  /** Bytes of the file after the table: Authenticode covers none of them. */
  readonly bytesAfterTable: number;
}

function badTable(message: string, fileOffset: number): FormatError {
  return new FormatError('SG_ERR_AC_BAD_TABLE', message, { structure: 'certificate table', fileOffset });
}

/**
 * Reads the certificate table's entries, or returns null when data directory 4 is empty.
 * @throws FormatError SG_ERR_AC_BAD_TABLE, SG_ERR_AC_BUDGET
 */
export function parseCertificateTable(image: PeImage, limits: AuthenticodeLimits = DEFAULT_AUTHENTICODE_LIMITS): CertificateTable | null {
  const dir = getDataDirectory(image, DataDirectoryIndex.Certificate);
  if (dir.size === 0 && dir.virtualAddress === 0) return null;
  const len = image.bytes.length;
  const start = dir.virtualAddress;
  const size = dir.size;
  if (size === 0) throw badTable(`data directory 4 points at ${hex(start)} with size 0`, dir.entryFileOffset);
  if (size > limits.maxTableBytes) {
    throw new FormatError('SG_ERR_AC_BUDGET', `the certificate table is ${size} bytes; signgate reads at most ${limits.maxTableBytes}`, {
      structure: 'certificate table',
      fileOffset: dir.entryFileOffset,
    });
  }
  if (start < image.sizeOfHeaders || start + size > len) {
    throw badTable(
      `data directory 4 places the certificate table at ${hex(start)}+${hex(size)}, outside the ${len}-byte file after its headers`,
      dir.entryFileOffset,
    );
  }
  const entries: CertificateTableEntry[] = [];
  let at = start;
  const end = start + size;
  while (at < end) {
    if (end - at < 8) {
      // Trailing alignment padding is allowed; anything else is not.
      if (image.bytes.subarray(at, end).every((b) => b === 0)) break;
      throw badTable(`${end - at} stray bytes at ${hex(at)} at the end of the certificate table`, at);
    }
    if (entries.length >= limits.maxEntries) {
      throw new FormatError('SG_ERR_AC_BUDGET', `the certificate table holds more than ${limits.maxEntries} entries`, {
        structure: 'certificate table',
        fileOffset: at,
      });
    }
    const view = new DataView(image.bytes.buffer, image.bytes.byteOffset + at, 8);
    const length = view.getUint32(0, true);
    if (length < 8 || at + length > end) {
      throw badTable(
        `WIN_CERTIFICATE ${entries.length} at ${hex(at)} has dwLength ${length}, ${length < 8 ? 'smaller than its own 8-byte header' : `past the table's end at ${hex(end)}`}`,
        at,
      );
    }
    entries.push({
      index: entries.length,
      fileOffset: at,
      length,
      revision: view.getUint16(4, true),
      certificateType: view.getUint16(6, true),
      data: image.bytes.subarray(at + 8, at + length),
    });
    at += (length + 7) & ~7;
  }
  return { fileOffset: start, size, entries, bytesAfterTable: len - end };
}
