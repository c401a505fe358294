// A section whose raw data covers the PE headers puts the CheckSum inside the signed bytes: signing must refuse, and
// so the one verdict (well-formed.ts) refuses the file for every command, with the same error.
import { describe, expect, test } from 'vitest';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { inspectAssembly } from '../../src/strongname/assembly-info.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { defaultSettings, runCheck } from '../helpers/check.js';
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
  test('the metadata is still readable, but the verdict refuses the file: inspect, readModule and check say why', async () => {
    const bytes = textCoversHeaders();
    expect(new ModuleMetadata(parsePeImage(bytes)).assembly?.name).toBe('delay-1024');
    expect(inspectAssembly(bytes, 'headers.dll').error?.code).toBe('SG_ERR_SN_HEADERS_IN_SECTION');
    expect(() => readModule(bytes)).toThrowError(expect.objectContaining({ code: 'SG_ERR_SN_HEADERS_IN_SECTION', fault: 'input' }));
    const result = await runCheck([{ path: 'headers.dll', uploadName: 'headers.dll', bytes, explicit: true }], { settings: defaultSettings() });
    expect(result.files[0]!.findings.find((f) => f.ruleId === 'SG001')?.data?.code).toBe('SG_ERR_SN_HEADERS_IN_SECTION');
  });

  test('signAssembly refuses it with a typed error', () => {
    const module = new ModuleMetadata(parsePeImage(textCoversHeaders()));
    expect(() => signAssembly(module, pair)).toThrowError(expect.objectContaining({ code: 'SG_ERR_SN_HEADERS_IN_SECTION' }));
  });
});
