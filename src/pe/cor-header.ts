// The CLI header, IMAGE_COR20_HEADER (ECMA-335 II.25.3.3, strong-naming.md section 2).
import { ByteCursor } from '../binary/byte-cursor.js';
import { FormatError, hex } from '../core/errors.js';
import { DataDirectoryIndex, getDataDirectory, rvaToFileOffset, type PeImage } from './pe-image.js';

/** COMIMAGE_FLAGS_* (corhdr.h). */
export const CorFlags = {
  ILOnly: 0x1,
  Requires32Bit: 0x2,
  ILLibrary: 0x4,
  StrongNameSigned: 0x8,
  NativeEntryPoint: 0x10,
  TrackDebugData: 0x10000,
  Prefers32Bit: 0x20000,
} as const;

export interface RvaAndSize {
  readonly rva: number;
  readonly size: number;
}

export interface CorHeader {
  readonly fileOffset: number;
  readonly cb: number;
  readonly majorRuntimeVersion: number;
  readonly minorRuntimeVersion: number;
  readonly metadata: RvaAndSize;
  readonly flags: number;
  /** File offset of the 4-byte Flags field (CLI header + 16). */
  readonly flagsFileOffset: number;
  readonly entryPointToken: number;
  readonly resources: RvaAndSize;
  readonly strongNameSignature: RvaAndSize;
  readonly codeManagerTable: RvaAndSize;
  readonly vtableFixups: RvaAndSize;
  readonly exportAddressTableJumps: RvaAndSize;
  readonly managedNativeHeader: RvaAndSize;
}

export const COR_HEADER_SIZE = 0x48;

/** True when the image has a CLI header directory, i.e. claims to be managed. */
export function hasCorHeader(image: PeImage): boolean {
  const dir = getDataDirectory(image, DataDirectoryIndex.CliHeader);
  return dir.virtualAddress !== 0 && dir.size !== 0;
}

/**
 * Reads the CLI header that data directory 14 points at.
 * @throws FormatError SG_ERR_CLI_BAD_HEADER, SG_ERR_PE_RVA_UNMAPPED
 */
export function parseCorHeader(image: PeImage): CorHeader {
  const dir = getDataDirectory(image, DataDirectoryIndex.CliHeader);
  if (dir.size < COR_HEADER_SIZE) {
    throw new FormatError(
      'SG_ERR_CLI_BAD_HEADER',
      `CLI header directory entry at ${hex(dir.entryFileOffset)} gives size ${dir.size}, smaller than ${COR_HEADER_SIZE}`,
      {
        structure: 'CLI header',
        fileOffset: dir.entryFileOffset,
      },
    );
  }
  const at = rvaToFileOffset(image, dir.virtualAddress, COR_HEADER_SIZE, 'CLI header');
  const c = new ByteCursor(image.bytes, { structure: 'CLI header', errorCode: 'SG_ERR_PE_TRUNCATED', start: at, end: at + COR_HEADER_SIZE });
  const cb = c.u32();
  if (cb < COR_HEADER_SIZE) {
    throw new FormatError('SG_ERR_CLI_BAD_HEADER', `CLI header cb at ${hex(at)} is ${cb}, smaller than ${COR_HEADER_SIZE}`, {
      structure: 'CLI header',
      fileOffset: at,
    });
  }
  const pair = (): RvaAndSize => ({ rva: c.u32(), size: c.u32() });
  const majorRuntimeVersion = c.u16();
  const minorRuntimeVersion = c.u16();
  const metadata = pair();
  const flags = c.u32();
  const entryPointToken = c.u32();
  const resources = pair();
  const strongNameSignature = pair();
  return {
    fileOffset: at,
    cb,
    majorRuntimeVersion,
    minorRuntimeVersion,
    metadata,
    flags,
    flagsFileOffset: at + 16,
    entryPointToken,
    resources,
    strongNameSignature,
    codeManagerTable: pair(),
    vtableFixups: pair(),
    exportAddressTableJumps: pair(),
    managedNativeHeader: pair(),
  };
}

/** READYTORUN_SIGNATURE: "RTR" (the first field of the header ManagedNativeHeader points at). */
const READY_TO_RUN_SIGNATURE = 0x00525452;

export interface ReadyToRunHeader {
  readonly majorVersion: number;
  readonly minorVersion: number;
  readonly flags: number;
}

/**
 * The ReadyToRun header of an image precompiled by crossgen (the CLI header's ManagedNativeHeader points at
 * READYTORUN_HEADER, which starts with "RTR"), or null for an IL-only image or one whose header does not map.
 */
export function readReadyToRunHeader(image: PeImage, cor: CorHeader): ReadyToRunHeader | null {
  const { rva, size } = cor.managedNativeHeader;
  if (rva === 0 || size < 12) return null;
  let at: number;
  try {
    at = rvaToFileOffset(image, rva, 12, 'ReadyToRun header');
  } catch {
    return null;
  }
  const view = new DataView(image.bytes.buffer, image.bytes.byteOffset + at, 12);
  if (view.getUint32(0, true) !== READY_TO_RUN_SIGNATURE) return null;
  return { majorVersion: view.getUint16(4, true), minorVersion: view.getUint16(6, true), flags: view.getUint32(8, true) };
}
