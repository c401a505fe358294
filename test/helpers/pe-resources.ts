// The resource tree of a PE image (PE/COFF spec, "The .rsrc Section"), read over signgate's own PE reader:
// type, name and language levels down to each data entry's bytes.
import { DataDirectoryIndex, getDataDirectory, rvaToFileOffset, type PeImage } from '../../src/pe/pe-image.js';

export interface PeResource {
  /** Numeric type id (10 = RT_RCDATA) or its name. */
  readonly type: number | string;
  readonly name: number | string;
  readonly language: number;
  readonly fileOffset: number;
  readonly size: number;
}

/** Every leaf of the resource tree; [] when the image has no resource directory. */
export function readPeResources(image: PeImage): PeResource[] {
  const dir = getDataDirectory(image, DataDirectoryIndex.Resource);
  if (dir.size === 0) return [];
  const base = rvaToFileOffset(image, dir.virtualAddress, dir.size, 'resource directory');
  const view = new DataView(image.bytes.buffer, image.bytes.byteOffset, image.bytes.byteLength);
  const u16 = (at: number) => view.getUint16(at, true);
  const u32 = (at: number) => view.getUint32(at, true);
  /** An entry's id, or its name: a length-prefixed UTF-16LE string at an offset from the directory's start. */
  const idOf = (raw: number): number | string => {
    if ((raw & 0x8000_0000) === 0) return raw;
    const at = base + (raw & 0x7fff_ffff);
    return Buffer.from(image.bytes.subarray(at + 2, at + 2 + 2 * u16(at))).toString('utf16le');
  };
  const entries = (offset: number) => {
    const at = base + offset;
    const count = u16(at + 12) + u16(at + 14);
    return Array.from({ length: count }, (_, i) => ({ id: idOf(u32(at + 16 + 8 * i)), target: u32(at + 16 + 8 * i + 4) }));
  };
  const subdirectory = (target: number) => {
    if ((target & 0x8000_0000) === 0) throw new Error(`resource directory: a data entry where a subdirectory belongs (offset ${target})`);
    return target & 0x7fff_ffff;
  };
  const out: PeResource[] = [];
  for (const type of entries(0)) {
    for (const name of entries(subdirectory(type.target))) {
      for (const language of entries(subdirectory(name.target))) {
        const data = base + language.target;
        const size = u32(data + 4);
        out.push({ type: type.id, name: name.id, language: language.id as number, fileOffset: rvaToFileOffset(image, u32(data), size, 'resource data'), size });
      }
    }
  }
  return out;
}
