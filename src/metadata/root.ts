// Metadata root and stream headers (ECMA-335 II.24.2.1, II.24.2.2; strong-naming.md section 3.1).
import { ByteCursor } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';

export interface StreamHeader {
  readonly name: string;
  /** Offset relative to the metadata root, as stored. */
  readonly offset: number;
  readonly size: number;
  readonly fileOffset: number;
}

export interface MetadataRoot {
  readonly fileOffset: number;
  readonly size: number;
  readonly majorVersion: number;
  readonly minorVersion: number;
  readonly version: string;
  readonly streams: readonly StreamHeader[];
  /** Stream names other than the six known ones; they are skipped. */
  readonly unknownStreams: readonly string[];
  /** `#~` (optimized) or `#-` (uncompressed). */
  readonly tables: StreamHeader;
  readonly strings: StreamHeader | undefined;
  readonly userStrings: StreamHeader | undefined;
  readonly blob: StreamHeader | undefined;
  readonly guid: StreamHeader | undefined;
  /** The `#JTD` marker: every heap and table index is 4 bytes. */
  readonly minimalDelta: boolean;
}

const METADATA_SIGNATURE = 0x424a5342; // "BSJB"
/** ECMA limits the version string to 255 bytes (padded to 256). */
const MAX_VERSION_LENGTH = 256;
/** A real image has 5 or 6 streams; more than this is hostile. */
const MAX_STREAMS = 32;
const KNOWN_STREAMS = new Set(['#~', '#-', '#Strings', '#US', '#Blob', '#GUID', '#JTD']);

/**
 * Reads the metadata root at `fileOffset` (`size` bytes, already mapped from the CLI header).
 * Duplicate stream names are an error: readers disagree on which copy wins (System.Reflection.Metadata takes the
 * last, other readers the first).
 * @throws FormatError SG_ERR_MD_*
 */
export function parseMetadataRoot(bytes: Uint8Array, fileOffset: number, size: number): MetadataRoot {
  const c = new ByteCursor(bytes, { structure: 'metadata root', errorCode: 'SG_ERR_MD_TRUNCATED', start: fileOffset, end: fileOffset + size });
  const signature = c.u32();
  if (signature !== METADATA_SIGNATURE) {
    throw new FormatError('SG_ERR_MD_BAD_SIGNATURE', `metadata root at ${hex(fileOffset)} starts with ${hex(signature)}, not BSJB (0x424A5342)`, {
      structure: 'metadata root',
      fileOffset,
    });
  }
  const majorVersion = c.u16();
  const minorVersion = c.u16();
  c.skip(4); // Reserved
  const versionLength = c.u32();
  if (versionLength > MAX_VERSION_LENGTH) {
    throw new FormatError(
      'SG_ERR_MD_BAD_SIGNATURE',
      `metadata version string length at ${hex(fileOffset + 12)} is ${versionLength}, over ${MAX_VERSION_LENGTH}`,
      {
        structure: 'metadata root',
        fileOffset: fileOffset + 12,
      },
    );
  }
  const versionBytes = c.bytesView(versionLength);
  const nul = versionBytes.indexOf(0);
  const version = Buffer.from(versionBytes.subarray(0, nul < 0 ? versionBytes.length : nul)).toString('utf8');
  c.skip(2); // Flags
  const streamCount = c.u16();
  if (streamCount > MAX_STREAMS) {
    throw new FormatError('SG_ERR_MD_BAD_STREAM', `metadata root at ${hex(fileOffset)} declares ${streamCount} streams; at most ${MAX_STREAMS} are read`, {
      structure: 'metadata root',
      fileOffset: c.position - 2,
    });
  }
  const streams: StreamHeader[] = [];
  const byName = new Map<string, StreamHeader>();
  const unknownStreams: string[] = [];
  for (let i = 0; i < streamCount; i++) {
    const headerAt = c.position;
    const offset = c.u32();
    const streamSize = c.u32();
    // Name: ASCII, NUL-terminated, at most 32 bytes including the NUL, padded to 4.
    let name = '';
    for (let n = 0; ; n++) {
      if (n >= 32) {
        throw new FormatError('SG_ERR_MD_BAD_STREAM', `stream header at ${hex(headerAt)} has a name longer than 32 bytes`, {
          structure: 'stream header',
          fileOffset: headerAt,
        });
      }
      const ch = c.u8();
      if (ch === 0) break;
      name += String.fromCharCode(ch);
    }
    c.align(4);
    if (offset > size || streamSize > size - offset) {
      throw new FormatError(
        'SG_ERR_MD_BAD_STREAM',
        `stream ${JSON.stringify(name)} (header at ${hex(headerAt)}) spans ${hex(offset)}+${hex(streamSize)}, outside the ${hex(size)}-byte metadata`,
        { structure: 'stream header', fileOffset: headerAt, needed: offset + streamSize, available: size },
      );
    }
    if (byName.has(name)) {
      throw new FormatError('SG_ERR_MD_DUPLICATE_STREAM', `stream ${JSON.stringify(name)} occurs twice (second header at ${hex(headerAt)})`, {
        structure: 'stream header',
        fileOffset: headerAt,
      });
    }
    const header = { name, offset, size: streamSize, fileOffset: fileOffset + offset };
    streams.push(header);
    byName.set(name, header);
    if (!KNOWN_STREAMS.has(name)) unknownStreams.push(name);
  }
  // Streams that share bytes are hostile: one heap's edits would show up in another.
  const sorted = streams.filter((st) => st.size > 0).sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const previous = sorted[i - 1]!;
    const current = sorted[i]!;
    if (current.offset < previous.offset + previous.size) {
      throw new FormatError(
        'SG_ERR_MD_BAD_STREAM',
        `streams ${JSON.stringify(previous.name)} (${hex(previous.offset)}+${hex(previous.size)}) and ${JSON.stringify(current.name)} (${hex(current.offset)}) overlap`,
        { structure: 'stream header', fileOffset: current.fileOffset },
      );
    }
  }
  const compressed = byName.get('#~');
  const uncompressed = byName.get('#-');
  if (compressed && uncompressed) {
    throw new FormatError('SG_ERR_MD_DUPLICATE_STREAM', `metadata at ${hex(fileOffset)} has both #~ and #- table streams`, {
      structure: 'metadata root',
      fileOffset,
    });
  }
  const tables = compressed ?? uncompressed;
  if (!tables) {
    throw new FormatError('SG_ERR_MD_MISSING_STREAM', `metadata at ${hex(fileOffset)} has no #~ or #- table stream`, {
      structure: 'metadata root',
      fileOffset,
    });
  }
  return {
    fileOffset,
    size,
    majorVersion,
    minorVersion,
    version,
    streams,
    unknownStreams,
    tables,
    strings: byName.get('#Strings'),
    userStrings: byName.get('#US'),
    blob: byName.get('#Blob'),
    guid: byName.get('#GUID'),
    minimalDelta: byName.has('#JTD'),
  };
}
