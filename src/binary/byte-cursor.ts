// Bounds-checked little-endian reads over a Uint8Array (the shape of SRM's BlobReader).
// Every read checks `position + n <= end` first and throws a FormatError naming the structure.
import type { ErrorCode } from '../core/error-codes.js';
import { FormatError, hex } from '../core/errors.js';

export class ByteCursor {
  readonly bytes: Uint8Array;
  /** Created on first use: most cursors only read bytes and small integers. */
  private dataView: DataView | undefined;
  /** Start of this cursor's window in `bytes`. */
  readonly start: number;
  /** End (exclusive) of this cursor's window in `bytes`. */
  readonly end: number;
  /** Current absolute position in `bytes`. */
  position: number;
  readonly structure: string;
  readonly errorCode: ErrorCode;
  /** Added to positions in error messages, for cursors over a buffer that is not the whole file. */
  readonly fileOffsetBase: number;

  constructor(bytes: Uint8Array, options: { structure: string; errorCode: ErrorCode; start?: number; end?: number; fileOffsetBase?: number }) {
    this.bytes = bytes;
    this.start = options.start ?? 0;
    this.end = options.end ?? bytes.length;
    this.position = this.start;
    this.structure = options.structure;
    this.errorCode = options.errorCode;
    this.fileOffsetBase = options.fileOffsetBase ?? 0;
    if (this.start < 0 || this.end > bytes.length || this.start > this.end) {
      this.fail(this.start, Math.max(0, this.end - this.start));
    }
  }

  private get view(): DataView {
    return (this.dataView ??= new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength));
  }

  get remaining(): number {
    return this.end - this.position;
  }

  /** Throws unless `n` more bytes are available at the current position. */
  need(n: number): void {
    if (n < 0 || this.position + n > this.end) this.fail(this.position, n);
  }

  private fail(at: number, n: number): never {
    const available = Math.max(0, this.end - at);
    throw new FormatError(this.errorCode, `${this.structure}: needed ${n} bytes at ${hex(at + this.fileOffsetBase)}, but only ${available} remain`, {
      structure: this.structure,
      fileOffset: at + this.fileOffsetBase,
      needed: n,
      available,
    });
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.position++]!;
  }

  u16(): number {
    this.need(2);
    const v = peekU16(this.bytes, this.position);
    this.position += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = peekU32(this.bytes, this.position);
    this.position += 4;
    return v;
  }

  i8(): number {
    return (this.u8() << 24) >> 24;
  }

  i16(): number {
    return (this.u16() << 16) >> 16;
  }

  i32(): number {
    return this.u32() | 0;
  }

  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.position, true);
    this.position += 8;
    return v;
  }

  i64(): bigint {
    this.need(8);
    const v = this.view.getBigInt64(this.position, true);
    this.position += 8;
    return v;
  }

  f32(): number {
    this.need(4);
    const v = this.view.getFloat32(this.position, true);
    this.position += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.position, true);
    this.position += 8;
    return v;
  }

  /** A view (no copy) of the next `n` bytes. */
  bytesView(n: number): Uint8Array {
    this.need(n);
    const v = this.bytes.subarray(this.position, this.position + n);
    this.position += n;
    return v;
  }

  skip(n: number): void {
    this.need(n);
    this.position += n;
  }

  /** Moves to an absolute position inside the window. */
  seek(position: number): void {
    if (position < this.start || position > this.end) this.fail(position, 0);
    this.position = position;
  }

  /** Advances to the next multiple of `alignment` relative to the window start. */
  align(alignment: number): void {
    const rel = this.position - this.start;
    const pad = (alignment - (rel % alignment)) % alignment;
    this.skip(pad);
  }

  /**
   * ECMA-335 II.23.2 compressed unsigned integer (big-endian, prefix-coded).
   * 111xxxxx is invalid; truncated encodings are invalid.
   */
  compressedU32(): number {
    const at = this.position;
    this.need(1);
    const b0 = this.bytes[at]!;
    if ((b0 & 0x80) === 0) {
      this.position += 1;
      return b0;
    }
    if ((b0 & 0xc0) === 0x80) {
      if (this.position + 2 > this.end) this.badCompressed(at);
      this.position += 2;
      return ((b0 & 0x3f) << 8) | this.bytes[at + 1]!;
    }
    if ((b0 & 0xe0) === 0xc0) {
      if (this.position + 4 > this.end) this.badCompressed(at);
      this.position += 4;
      return (((b0 & 0x1f) << 24) | (this.bytes[at + 1]! << 16) | (this.bytes[at + 2]! << 8) | this.bytes[at + 3]!) >>> 0;
    }
    this.badCompressed(at);
  }

  private badCompressed(at: number): never {
    throw new FormatError(
      'SG_ERR_MD_BAD_COMPRESSED_INT',
      `${this.structure}: invalid or truncated compressed integer (first byte ${hex(this.bytes[at] ?? 0)}) at ${hex(at + this.fileOffsetBase)}`,
      { structure: this.structure, fileOffset: at + this.fileOffsetBase },
    );
  }

  /** A child cursor over `length` bytes at absolute `position`, checked against this window. */
  slice(position: number, length: number, structure = this.structure): ByteCursor {
    if (position < this.start || length < 0 || position + length > this.end) {
      throw new FormatError(
        this.errorCode,
        `${structure}: ${length} bytes at ${hex(position + this.fileOffsetBase)} lie outside ${this.structure} (${hex(this.start + this.fileOffsetBase)}..${hex(this.end + this.fileOffsetBase)})`,
        { structure, fileOffset: position + this.fileOffsetBase, needed: length, available: Math.max(0, this.end - position) },
      );
    }
    return new ByteCursor(this.bytes, {
      structure,
      errorCode: this.errorCode,
      start: position,
      end: position + length,
      fileOffsetBase: this.fileOffsetBase,
    });
  }
}

/** Reads a little-endian u16 without a cursor; the caller has checked bounds. */
export function peekU16(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8);
}

/** Reads a little-endian u32 without a cursor; the caller has checked bounds. */
export function peekU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

const HEX_BYTES: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lower-case hex of the bytes. Short views (signature blobs, tokens) by table: a Buffer per call costs more. */
export function toHex(bytes: Uint8Array): string {
  if (bytes.length <= 32) {
    let text = '';
    for (let i = 0; i < bytes.length; i++) text += HEX_BYTES[bytes[i]!]!;
    return text;
  }
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
