// Hostile certificate tables: every bad shape gives a typed error with the file offset, within the limits.
import { describe, expect, test } from 'vitest';
import { readAuthenticode } from '../../src/authenticode/authenticode.js';
import { parseCertificateTable } from '../../src/authenticode/certificate-table.js';
import { scanBer } from '../../src/authenticode/ber-guard.js';
import { DEFAULT_AUTHENTICODE_LIMITS } from '../../src/authenticode/limits.js';
import { DataDirectoryIndex, parsePeImage } from '../../src/pe/pe-image.js';
import { fixture } from '../helpers/fixtures.js';

/** The add-in with `entries` appended as WIN_CERTIFICATE entries and data directory 4 pointing at them. */
export function withCertificateTable(base: Uint8Array, entries: ReadonlyArray<{ data: Uint8Array; type?: number; length?: number }>): Uint8Array {
  const start = (base.length + 7) & ~7;
  const parts: Buffer[] = [Buffer.from(base), Buffer.alloc(start - base.length)];
  for (const e of entries) {
    const header = Buffer.alloc(8);
    header.writeUInt32LE(e.length ?? e.data.length + 8, 0);
    header.writeUInt16LE(0x0200, 4);
    header.writeUInt16LE(e.type ?? 2, 6);
    const body = Buffer.concat([header, Buffer.from(e.data)]);
    parts.push(body, Buffer.alloc(((body.length + 7) & ~7) - body.length));
  }
  const bytes = new Uint8Array(Buffer.concat(parts));
  setCertificateDirectory(bytes, start, bytes.length - start);
  return bytes;
}

function setCertificateDirectory(bytes: Uint8Array, offset: number, size: number): void {
  const at = parsePeImage(bytes).dataDirectories[DataDirectoryIndex.Certificate]!.entryFileOffset;
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  view.setUint32(at, offset, true);
  view.setUint32(at + 4, size, true);
}

const addin = fixture('addin/SampleAddin.dll');
const read = (bytes: Uint8Array) => readAuthenticode(parsePeImage(bytes));

describe('hostile certificate tables', () => {
  test('a table outside the file', () => {
    const bytes = Uint8Array.from(addin);
    setCertificateDirectory(bytes, bytes.length - 8, 64);
    const info = read(bytes);
    expect(info.state).toBe('unreadable');
    expect(info.error).toMatchObject({ code: 'SG_ERR_AC_BAD_TABLE' });
    expect(info.error!.message).toMatch(/outside the \d+-byte file/);
    expect(info.error!.fileOffset).toBeGreaterThan(0);
  });

  test('a table over the size cap is refused before it is read', () => {
    const bytes = Uint8Array.from(addin);
    setCertificateDirectory(bytes, 0x200, DEFAULT_AUTHENTICODE_LIMITS.maxTableBytes + 1);
    expect(read(bytes).error).toMatchObject({ code: 'SG_ERR_AC_BUDGET' });
  });

  test('dwLength smaller than its header or past the table', () => {
    expect(read(withCertificateTable(addin, [{ data: new Uint8Array(8), length: 4 }])).error?.message).toMatch(
      /dwLength 4, smaller than its own 8-byte header/,
    );
    expect(read(withCertificateTable(addin, [{ data: new Uint8Array(8), length: 4096 }])).error?.message).toMatch(/dwLength 4096, past the table's end/);
  });

  test('more entries than the cap', () => {
    const many = Array.from({ length: DEFAULT_AUTHENTICODE_LIMITS.maxEntries + 1 }, () => ({ data: Uint8Array.of(0x30, 0x00) }));
    expect(read(withCertificateTable(addin, many)).error).toMatchObject({ code: 'SG_ERR_AC_BUDGET' });
  });

  test('an entry of another certificate type', () => {
    const info = read(withCertificateTable(addin, [{ data: Uint8Array.of(0x30, 0x00), type: 1 }]));
    expect(info.error?.code).toBe('SG_ERR_AC_BAD_SIGNATURE');
    expect(info.error?.message).toMatch(/wCertificateType 1, not PKCS_SIGNED_DATA/);
  });

  test('ASN.1 nested deeper than the cap (definite and indefinite lengths) stops at the cap without recursion', () => {
    const depth = 100_000;
    const indefinite = new Uint8Array(depth * 4);
    for (let i = 0; i < depth; i++) indefinite.set([0x30, 0x80], i * 2);
    const info = read(withCertificateTable(addin, [{ data: indefinite }]));
    expect(info.error).toMatchObject({ code: 'SG_ERR_AC_BUDGET' });
    expect(info.error!.message).toMatch(/nests ASN.1 elements more than 64 deep/);
    // Definite lengths, each wrapping the rest.
    let blob = Uint8Array.of(0x05, 0x00);
    for (let i = 0; i < 200; i++) {
      const len = blob.length;
      const header = len < 0x80 ? [0x30, len] : len < 0x100 ? [0x30, 0x81, len] : [0x30, 0x82, len >> 8, len & 0xff];
      blob = Uint8Array.from([...header, ...blob]);
    }
    expect(read(withCertificateTable(addin, [{ data: blob }])).error).toMatchObject({ code: 'SG_ERR_AC_BUDGET' });
  });

  test('too many ASN.1 elements', () => {
    const flat = new Uint8Array(2 + 4 * 60_000);
    flat.set([0x30, 0x80]);
    for (let i = 0; i < 60_000; i++) flat.set([0x05, 0x00, 0x05, 0x00], 2 + i * 4);
    expect(() => scanBer(flat, { structure: 'test', fileOffset: 0 }, { maxAsn1Depth: 64, maxAsn1Elements: 100_000 })).toThrow(
      /more than 100000 ASN.1 elements/,
    );
  });

  test('lengths past the end, and garbage that is BER but not SignedData', () => {
    expect(read(withCertificateTable(addin, [{ data: Uint8Array.of(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff, 0x00) }])).error?.code).toBe('SG_ERR_AC_BAD_SIGNATURE');
    const notSigned = read(withCertificateTable(addin, [{ data: Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x05) }]));
    expect(notSigned.state).toBe('unreadable');
    expect(notSigned.error?.code).toBe('SG_ERR_AC_BAD_SIGNATURE');
    expect(notSigned.error?.message).toMatch(/^certificate table entry 0: /);
  });

  test('an empty table entry list with trailing padding only is read as no signature', () => {
    const bytes = withCertificateTable(addin, []);
    expect(bytes.length % 8).toBe(0);
    // A directory with a size but no entries at all.
    const padded = new Uint8Array([...bytes, 0, 0, 0, 0]);
    setCertificateDirectory(padded, bytes.length, 4);
    expect(parseCertificateTable(parsePeImage(padded))?.entries).toEqual([]);
    expect(read(padded)).toMatchObject({ state: 'invalid', reason: 'the certificate table holds no signature' });
  });
});
