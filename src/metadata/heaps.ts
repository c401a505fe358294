// The #Strings, #Blob and #GUID heaps (ECMA-335 II.24.2.3 - II.24.2.5). Strings are decoded on first use and cached.
import { ByteCursor } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import { nameTooLong, ReaderMeter } from './budget.js';
import type { StreamHeader } from './root.js';

const utf8 = new TextDecoder('utf-8');

function badIndex(heap: string, index: number, size: number, stream: StreamHeader | undefined): FormatError {
  return new FormatError('SG_ERR_MD_BAD_HEAP_INDEX', `${heap} index ${hex(index)} is outside the ${size}-byte heap`, {
    structure: heap,
    fileOffset: stream ? stream.fileOffset : -1,
    needed: index,
    available: size,
  });
}

/** A heap is a window of the file given by its stream header; an absent stream is an empty heap. */
abstract class Heap {
  protected readonly start: number;
  readonly size: number;

  constructor(
    protected readonly bytes: Uint8Array,
    protected readonly stream: StreamHeader | undefined,
  ) {
    this.start = stream?.fileOffset ?? 0;
    this.size = stream?.size ?? 0;
  }
}

export class StringHeap extends Heap {
  private readonly cache = new Map<number, string>();

  constructor(
    bytes: Uint8Array,
    stream: StreamHeader | undefined,
    private readonly meter: ReaderMeter = new ReaderMeter(),
  ) {
    super(bytes, stream);
  }

  /** Whether the string at `index` is `ascii` (an ASCII text), compared where it lies: nothing decoded or cached. */
  isAscii(index: number, ascii: string): boolean {
    if (index === 0) return ascii === '';
    const from = this.start + index;
    if (index >= this.size || index + ascii.length >= this.size) return false;
    const bytes = this.bytes;
    for (let i = 0; i < ascii.length; i++) if (bytes[from + i] !== ascii.charCodeAt(i)) return false;
    return bytes[from + ascii.length] === 0;
  }

  /**
   * The NUL-terminated UTF-8 string at `index`; index 0 is "". Names may share tails (II.24.2.3), so
   * every distinct index is a new decode: each is capped at maxNameBytes and charged to the module's budget.
   * @throws FormatError SG_ERR_MD_BAD_HEAP_INDEX, SG_ERR_MD_BUDGET
   */
  get(index: number): string {
    if (index === 0) return '';
    const cached = this.cache.get(index);
    if (cached !== undefined) return cached;
    if (index >= this.size) throw badIndex('#Strings heap', index, this.size, this.stream);
    const from = this.start + index;
    const end = this.start + this.size;
    const maxNameBytes = this.meter.budgets.maxNameBytes;
    // Look for the NUL no further than the cap, so that a long run costs maxNameBytes, not its length.
    const window = Math.min(end, from + maxNameBytes + 1);
    // A loop, not subarray().indexOf: names are a few dozen bytes, shorter than the cost of a view and a call.
    const bytes = this.bytes;
    let nul = from;
    while (nul < window && bytes[nul] !== 0) nul++;
    if (nul === window) nul = -1;
    if (nul < 0 && window < end) throw nameTooLong(from, maxNameBytes);
    if (nul < 0 || nul >= end) {
      throw new FormatError('SG_ERR_MD_BAD_HEAP_INDEX', `#Strings heap string at ${hex(from)} has no terminating NUL before the end of the heap`, {
        structure: '#Strings heap',
        fileOffset: from,
      });
    }
    this.meter.stringBytes(nul - from, from, '#Strings heap');
    const value = utf8.decode(this.bytes.subarray(from, nul));
    this.cache.set(index, value);
    return value;
  }
}

export class BlobHeap extends Heap {
  /** File offset of the blob's first content byte. */
  contentFileOffset(index: number): number {
    return this.cursor(index).start;
  }

  /** A view (no copy) of the blob at `index`; index 0 is the empty blob. */
  get(index: number): Uint8Array {
    const c = this.cursor(index);
    return this.bytes.subarray(c.start, c.end);
  }

  /**
   * Checks the blob at `index` as `cursor` reads it, without making the cursor.
   * @throws FormatError SG_ERR_MD_BAD_HEAP_INDEX, SG_ERR_MD_TRUNCATED, SG_ERR_MD_BAD_COMPRESSED_INT
   */
  checkIndex(index: number): void {
    const at = this.start + index;
    const end = this.start + this.size;
    if (index > 0 && index < this.size) {
      const b0 = this.bytes[at]!;
      // One- and two-byte prefixes whose blob ends inside the heap (nearly every blob) need no more than this.
      if ((b0 & 0x80) === 0 && at + 1 + b0 <= end) return;
      if ((b0 & 0xc0) === 0x80 && at + 2 <= end && at + 2 + (((b0 & 0x3f) << 8) | this.bytes[at + 1]!) <= end) return;
    }
    // The rest as `cursor` reads them, which says what is wrong.
    this.cursor(index);
  }

  /** A cursor over the blob content at `index`. */
  cursor(index: number): ByteCursor {
    if (index === 0) return new ByteCursor(this.bytes, { structure: '#Blob heap', errorCode: 'SG_ERR_MD_TRUNCATED', start: this.start, end: this.start });
    if (index >= this.size) throw badIndex('#Blob heap', index, this.size, this.stream);
    // The length prefix (II.24.2.4) is decoded inline: a cursor per blob is the common case.
    const at = this.start + index;
    const end = this.start + this.size;
    const b0 = this.bytes[at]!;
    let length: number;
    let header: number;
    if ((b0 & 0x80) === 0) {
      length = b0;
      header = 1;
    } else if ((b0 & 0xc0) === 0x80 && at + 2 <= end) {
      length = ((b0 & 0x3f) << 8) | this.bytes[at + 1]!;
      header = 2;
    } else {
      // 4-byte lengths, invalid and truncated prefixes: the careful path reports them.
      const heap = new ByteCursor(this.bytes, { structure: '#Blob heap', errorCode: 'SG_ERR_MD_TRUNCATED', start: at, end });
      length = heap.compressedU32();
      header = heap.position - at;
    }
    const contentAt = at + header;
    if (contentAt + length > end) {
      throw new FormatError('SG_ERR_MD_TRUNCATED', `blob at ${hex(at)} claims ${length} bytes, but the #Blob heap ends at ${hex(end)}`, {
        structure: 'blob',
        fileOffset: at,
        needed: length,
        available: end - contentAt,
      });
    }
    return new ByteCursor(this.bytes, { structure: 'blob', errorCode: 'SG_ERR_MD_TRUNCATED', start: contentAt, end: contentAt + length });
  }
}

export class GuidHeap extends Heap {
  /** GUID `index` (1-based; 0 is null) in registry format, lower case. */
  get(index: number): string | null {
    if (index === 0) return null;
    const at = (index - 1) * 16;
    if (at + 16 > this.size) throw badIndex('#GUID heap', index, this.size, this.stream);
    const b = this.bytes.subarray(this.start + at, this.start + at + 16);
    const h = (i: number) => b[i]!.toString(16).padStart(2, '0');
    return h(3) + h(2) + h(1) + h(0) + '-' + h(5) + h(4) + '-' + h(7) + h(6) + '-' + h(8) + h(9) + '-' + h(10) + h(11) + h(12) + h(13) + h(14) + h(15);
  }
}
