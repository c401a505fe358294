// Reading the parts of an assembly that say what it is, and not the rest: `fix` decides a whole set from each file's
// headers and the rows of its metadata that planning asks for, and reads a file whole only to rewrite it.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { SignGateError } from '../core/errors.js';
import { lazyModuleMetadata } from '../metadata/lazy-metadata.js';
import type { ModuleMetadata } from '../metadata/module-metadata.js';
import { parseCorHeader, COR_HEADER_SIZE } from '../pe/cor-header.js';
import { DataDirectoryIndex, getDataDirectory, MAX_SECTIONS, parsePeImage, rvaToFileOffset, type PeImage } from '../pe/pe-image.js';
import { fileOnDemand, type FileOnDemand } from './files.js';

/** Files up to this size are read whole at once: one read costs no more than the few small ones. */
export const READ_WHOLE_BELOW = 256 * 1024;

export interface AssemblyParts {
  /**
   * The file's bytes at their offsets, as long as the file. Unless `whole`, only these are read (the rest is zero):
   * the DOS, PE and optional headers and the section table, the CLI header, the strong-name signature slot and the
   * ReadyToRun header, and of the metadata what `metadata()` has been asked for. Enough for parsePeImage and
   * classifyStrongName without verification; not for hashing, verifying or rewriting the file.
   */
  readonly bytes: Uint8Array;
  readonly whole: boolean;
  /** How many bytes have been read from the file. */
  readonly bytesRead: number;
  /** The file, to read it whole later; that read fails if the file changed since these parts were read. */
  readonly file: FileOnDemand;
  /**
   * The metadata of `image` (parsed from `bytes`), read from the file as it is asked for (the rows, strings and blobs
   * asked for, a table that is scanned whole), until close().
   * @throws FormatError as `new ModuleMetadata(image)` over the whole file; SignGateError SG_ERR_IO_READ
   */
  metadata(image: PeImage): ModuleMetadata;
  /** Closes the file (the metadata is read no further). */
  close(): void;
}

/**
 * The parts of `absolutePath` that say what the assembly is (see AssemblyParts), with the file open until close().
 * A file that is not a PE image, or whose headers point outside it, is read as far as its headers go: parsing the
 * parts gives the same error that parsing the whole file gives.
 * @throws SignGateError SG_ERR_IO_READ when the file cannot be read
 */
export function readAssemblyParts(absolutePath: string, shownAs: string, readWholeBelow = READ_WHOLE_BELOW): AssemblyParts {
  const file = fileOnDemand(absolutePath, shownAs);
  if (file.size <= readWholeBelow) return wholeFile(file);
  let fd: number | undefined;
  try {
    fd = openSync(absolutePath, 'r');
    const size = fstatSync(fd).size;
    if (size !== file.size) {
      throw new SignGateError(
        'SG_ERR_IO_READ',
        `${shownAs}: the file changed while signgate was reading it (${file.size} bytes when first seen, ${size} now); run the command again once the build has finished writing it`,
        { file: shownAs },
      );
    }
    // Zero-filled, and the system gives it pages only where something is read. Shared memory, because V8 counts an
    // ArrayBuffer's whole length as memory outside its heap and collects garbage early for it (twice for a 40 MB
    // assembly), though next to none of it is used; a SharedArrayBuffer is not counted so.
    const parts = new PartReader(fd, new Uint8Array(new SharedArrayBuffer(size)), file);
    parts.readHeaders();
    parts.readCliParts();
    fd = undefined; // the parts close it
    return parts;
  } catch (cause) {
    if (cause instanceof SignGateError) throw cause;
    // An error of the file system: the file is read whole, which says what failed in the usual words if it fails again.
    return wholeFile(file);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The whole file, in a buffer of its own (a small read may be a view of Node's shared pool). */
function wholeFile(file: FileOnDemand): AssemblyParts {
  const bytes = new Uint8Array(file.read());
  return { bytes, whole: true, bytesRead: bytes.length, file, metadata: (image) => lazyModuleMetadata(image, () => {}), close: () => {} };
}

class PartReader implements AssemblyParts {
  readonly whole = false;
  bytesRead = 0;
  /** How far from the start the file has been read. */
  private prefix = 0;
  private fd: number | undefined;
  /** True once the file has been read whole after a failed read. */
  private complete = false;

  constructor(
    fd: number,
    readonly bytes: Uint8Array,
    readonly file: FileOnDemand,
  ) {
    this.fd = fd;
  }

  metadata(image: PeImage): ModuleMetadata {
    return lazyModuleMetadata(image, (at, length) => this.readLater(at, length));
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  /**
   * A read for the metadata. Where the file system fails, the file is read whole (as when the parts were read),
   * which says what failed in the usual words if it fails again.
   */
  private readLater(at: number, length: number): void {
    if (this.complete) return;
    if (this.fd === undefined) throw new Error('internal: the metadata of an assembly read after its file was closed');
    try {
      this.read(at, length);
    } catch {
      this.close();
      this.file.read(Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.length));
      this.bytesRead += this.bytes.length;
      this.complete = true;
    }
  }

  /** Reads `length` bytes at `at` (cut at the end of the file). */
  read(at: number, length: number): void {
    const end = Math.min(this.bytes.length, at + length);
    if (at >= end) return;
    if (at <= this.prefix) {
      at = Math.max(at, this.prefix);
      if (at >= end) return;
      this.prefix = end;
    }
    for (let n = -1; at < end && n !== 0; at += n) {
      n = readSync(this.fd!, this.bytes, at, end - at, at);
      this.bytesRead += n;
    }
  }

  private u16(at: number): number {
    return at + 2 <= this.bytes.length ? this.bytes[at]! | (this.bytes[at + 1]! << 8) : 0;
  }

  private u32(at: number): number {
    return at + 4 <= this.bytes.length ? (this.u16(at) | (this.u16(at + 2) << 16)) >>> 0 : 0;
  }

  /**
   * The headers up to the end of the section table, as far as they can be found: what parsePeImage reads. Where
   * they make no sense (no MZ, e_lfanew outside the file, too many sections) it stops, and parsePeImage says why.
   */
  readHeaders(): void {
    this.read(0, 4096);
    const lfanew = this.u32(0x3c);
    if (this.u16(0) !== 0x5a4d || lfanew < 0x40 || lfanew > this.bytes.length - 4) return;
    const optAt = lfanew + 24;
    this.read(0, optAt);
    const sections = this.u16(lfanew + 6);
    if (sections > MAX_SECTIONS) return;
    // parsePeImage reads the optional header's fixed part and 16 directories whatever SizeOfOptionalHeader says.
    this.read(0, Math.max(optAt + 240, optAt + this.u16(lfanew + 20) + 40 * sections));
  }

  /** The CLI header, the signature slot and the ReadyToRun header, each where the headers say (the metadata later). */
  readCliParts(): void {
    let image: PeImage;
    try {
      image = parsePeImage(this.bytes);
    } catch {
      return; // the same error comes from parsing these bytes again
    }
    const cli = getDataDirectory(image, DataDirectoryIndex.CliHeader);
    if (cli.virtualAddress === 0) return;
    if (!this.readRva(image, cli.virtualAddress, COR_HEADER_SIZE)) return;
    let cor: ReturnType<typeof parseCorHeader>;
    try {
      cor = parseCorHeader(image);
    } catch {
      return;
    }
    this.readRva(image, cor.strongNameSignature.rva, cor.strongNameSignature.size);
    this.readRva(image, cor.managedNativeHeader.rva, 12);
  }

  private readRva(image: PeImage, rva: number, size: number): boolean {
    if (rva === 0) return false;
    try {
      this.read(rvaToFileOffset(image, rva, size, 'part'), size);
      return true;
    } catch {
      return false; // unmapped: the parsers report it when they come to it
    }
  }
}
