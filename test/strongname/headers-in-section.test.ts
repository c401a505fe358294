// A section whose raw data covers the PE headers puts the CheckSum inside the signed bytes: signing must refuse.
import { describe, expect, test } from 'vitest';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/assembly-info.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixture } from '../helpers/fixtures.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));

/** delay-1024.dll with .text starting at file offset 0: its raw data now covers the headers too. */
function textCoversHeaders(): Uint8Array {
  const bytes = fixture('assemblies/delay-1024.dll');
  const text = parsePeImage(bytes).sections.find((s) => s.name === '.text')!;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const grow = text.pointerToRawData;
  const at = text.headerFileOffset;
  view.setUint32(at + 8, text.virtualSize + grow, true); // VirtualSize
  view.setUint32(at + 12, text.virtualAddress - grow, true); // VirtualAddress: every RVA keeps its file offset
  view.setUint32(at + 16, text.sizeOfRawData + grow, true); // SizeOfRawData
  view.setUint32(at + 20, 0, true); // PointerToRawData
  return bytes;
}

describe('signing an image whose section covers the PE headers', () => {
  test('the image is still readable', () => {
    expect(readModule(textCoversHeaders()).assembly?.name).toBe('delay-1024');
  });

  test('signAssembly refuses it with a typed error', () => {
    expect(() => signAssembly(readModule(textCoversHeaders()), pair)).toThrowError(expect.objectContaining({ code: 'SG_ERR_SN_HEADERS_IN_SECTION' }));
  });
});
