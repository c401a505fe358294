// asn1-accept.ts says when asn1js would accept an element without asn1js building its tree. It must never say so of
// an element asn1js refuses (or the verdict on a damaged signature would change), and the OIDs and times it reads
// must be asn1js's. Checked on hand-made edge cases, on every element of real signatures (osslsigncode with an RFC 3161
// timestamp and a nested signature) and on thousands of damaged copies of them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as asn1js from 'asn1js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asn1jsAccepts, asn1jsAcceptsEach, oidString, timeValue } from '../../src/authenticode/asn1-accept.js';
import { scanBer } from '../../src/authenticode/ber-guard.js';
import { parseCertificateTable } from '../../src/authenticode/certificate-table.js';
import { derAt, derChildren, derEncode, type Der } from '../../src/authenticode/der.js';
import { DEFAULT_AUTHENTICODE_LIMITS } from '../../src/authenticode/limits.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, removeTestPki, startTimestampResponder, type TestPki } from '../helpers/authenticode.js';
import { fixture } from '../helpers/fixtures.js';

/** What asn1js says of the bytes alone: accepted (and its tree), or refused (-1 or a throw). */
function asn1jsOf(bytes: Uint8Array): asn1js.AsnType | null {
  try {
    const parsed = asn1js.fromBER(bytes);
    return parsed.offset === -1 ? null : parsed.result;
  } catch {
    return null;
  }
}

const el = (hex: string): Der => derAt(Uint8Array.from(Buffer.from(hex.replace(/\s/g, ''), 'hex')));
const ascii = (s: string) => Buffer.from(s, 'latin1').toString('hex');
const prim = (tag: number, contentHex: string) => `${tag.toString(16).padStart(2, '0')}${(contentHex.length / 2).toString(16).padStart(2, '0')}${contentHex}`;

function elementsOf(e: Der, out: Der[] = []): Der[] {
  out.push(e);
  for (const child of derChildren(e)) elementsOf(child, out);
  return out;
}

/** Elements checked so far, by their bytes: a damaged copy is checked where it differs. */
const checked = new Set<string>();

/** Checks every element of a scanned blob (up to 4 KB: larger ones are asn1js's alone); returns how many asn1jsAccepts vouched for. */
function checkBlob(blob: Uint8Array): number {
  let end: number;
  try {
    end = scanBer(blob, { structure: 'test', fileOffset: 0 }, DEFAULT_AUTHENTICODE_LIMITS);
  } catch {
    return 0; // refused before asn1js is asked, in the reader as here
  }
  let vouched = 0;
  for (const e of elementsOf(derAt(blob.subarray(0, end)))) {
    const key = Buffer.from(e.whole).toString('latin1');
    if (e.whole.length > 4096 || checked.has(key)) {
      expect(e.whole.length > 4096 && asn1jsAccepts(e)).toBe(false);
      continue;
    }
    checked.add(key);
    const tree = asn1jsOf(e.whole);
    if (asn1jsAccepts(e)) {
      vouched++;
      expect(tree, `asn1js refuses ${Buffer.from(e.whole.subarray(0, 40)).toString('hex')}`).not.toBeNull();
    }
    const oid = oidString(e);
    if (oid !== undefined) expect(oid).toBe((tree as asn1js.ObjectIdentifier).valueBlock.toString());
    const time = timeValue(e);
    if (time !== undefined) expect(time.getTime()).toBe((tree as asn1js.UTCTime).toDate().getTime());
    const children = derChildren(e);
    if (children.length > 0 && asn1jsAcceptsEach(children)) {
      const joined = Buffer.concat(children.map((c) => c.whole));
      expect(asn1jsOf(derEncode(0x30, joined))).not.toBeNull();
    }
  }
  return vouched;
}

describe('what asn1js accepts, known without its tree', () => {
  test('edge cases: vouched only where asn1js accepts, with asn1js values', () => {
    const cases: Array<[string, boolean]> = [
      [prim(0x02, '00ff'), true],
      [prim(0x04, '3003020101'), true], // an OCTET STRING holding BER
      [prim(0x17, ascii('240102030405Z')), true],
      [prim(0x17, ascii('ABCDEFGHIJKLZ')), true], // asn1js notes the string and accepts it
      [prim(0x18, ascii('20240102030405Z')), true],
      [prim(0x18, ascii('20240102030405.123Z')), true],
      [prim(0x18, ascii('20240102030405.Z')), true], // not of the form read here: asn1js asked, and it accepts it
      [prim(0x18, ascii('2024010203040Z')), false], // asn1js throws
      [`30 0f ${prim(0x18, ascii('2024010203040Z'))}`, false],
      [`30 05 ${prim(0x00, '551d13')}`, false], // an end-of-contents with a length: a parent reads on inside it
      [prim(0x18, ascii('20240102030405+0100')), true], // asked, and accepted
      [prim(0x18, ascii('20240102030405+01')), true],
      [prim(0x18, ascii('20240102030405+1')), false], // asn1js throws
      [prim(0x03, '0700ff'), true],
      [prim(0x03, '08ff'), false], // 8 unused bits: refused
      [prim(0x06, '2a864886f70d010702'), true],
      [prim(0x06, '2a86'), false], // the last arc runs on: refused
      ['3080 0000', false], // indefinite
      [`37 0d ${ascii('240102030405Z')}`, false], // a constructed UTCTime: refused
      [`30 06 ${prim(0x02, '01')} ${prim(0x03, '08ff')}`, false],
      [`30 09 ${prim(0x06, '2a03')} ${prim(0x05, '')} ${prim(0x80, 'ff')}`, true],
      [`a1 04 ${prim(0x06, '2a86')}`, false],
      ['1f8101 00', false], // a long tag
      [`${'30 02 '.repeat(1)}0000`, true], // end-of-contents inside a definite SEQUENCE
    ];
    for (const [hex, vouched] of cases) {
      const e = el(hex);
      expect(asn1jsAccepts(e), hex).toBe(vouched);
      if (vouched) expect(asn1jsOf(e.whole), hex).not.toBeNull();
      checkBlob(e.whole);
    }
    // Nesting past what is judged here is left to asn1js.
    let deep = prim(0x02, '01');
    for (let i = 0; i < 70; i++)
      deep = `30${(deep.length / 2).toString(16).padStart(2, '0')}${deep}`.replace(/^30([0-9a-f]{2})/, (_, l: string) =>
        parseInt(l, 16) > 0x7f ? `3081${l}` : `30${l}`,
      );
    const deepBytes = Uint8Array.from(Buffer.from(deep, 'hex'));
    if (deepBytes[1]! < 0x80) expect(asn1jsAccepts(derAt(deepBytes))).toBe(false);
    expect(timeValue(el(prim(0x18, ascii('20240229235959.999Z'))))?.toISOString()).toBe('2024-02-29T23:59:59.999Z');
    expect(timeValue(el(prim(0x17, ascii('491231235959Z'))))?.toISOString()).toBe('2049-12-31T23:59:59.000Z');
    expect(timeValue(el(prim(0x17, ascii('500101000000Z'))))?.toISOString()).toBe('1950-01-01T00:00:00.000Z');
  });

  describe.skipIf(!hasOsslsigncode)('on real signatures and damaged copies of them', () => {
    let pki: TestPki;
    let responder: Awaited<ReturnType<typeof startTimestampResponder>>;
    const blobs: Uint8Array[] = [];

    beforeAll(async () => {
      pki = await makeTestPki();
      responder = await startTimestampResponder(pki);
      const f = (name: string) => join(pki.dir, name);
      const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
      const { writeFileSync } = await import('node:fs');
      writeFileSync(f('sn.dll'), signAssembly(readModule(fixture('addin/SampleAddin.dll')), pair));
      await authenticodeSign(pki, f('sn.dll'), f('ts.dll'), { timestampUrl: responder.url });
      await authenticodeSign(pki, f('ts.dll'), f('nested.dll'), { nest: true, hash: 'sha1', legacyTimestampUrl: responder.url });
      for (const name of ['ts.dll', 'nested.dll']) {
        const table = parseCertificateTable(parsePeImage(new Uint8Array(readFileSync(f(name)))), DEFAULT_AUTHENTICODE_LIMITS)!;
        blobs.push(Uint8Array.from(table.entries[0]!.data));
      }
    });

    afterAll(() => {
      responder?.server.close();
      removeTestPki(pki);
    });

    test('every element of the signatures', () => {
      expect(blobs.reduce((n, blob) => n + checkBlob(blob), 0)).toBeGreaterThan(150);
    });

    test('damaged copies: a byte of a tag, a length or a value changed', () => {
      // A fixed seed: the same copies every run.
      let seed = 46;
      const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
      let vouched = 0;
      for (const blob of blobs) {
        const elements = elementsOf(derAt(blob.subarray(0, scanBer(blob, { structure: 'test', fileOffset: 0 }, DEFAULT_AUTHENTICODE_LIMITS))));
        // Values asn1js reads (times, OIDs, BIT STRINGs, strings) are damaged more often than the rest.
        const read = elements.filter((e) => [0x03, 0x06, 0x0c, 0x13, 0x17, 0x18].includes(e.tag));
        for (let i = 0; i < 300; i++) {
          const target = random() < 0.7 ? read[Math.floor(random() * read.length)]! : elements[Math.floor(random() * elements.length)]!;
          const copy = Uint8Array.from(blob);
          const at = target.whole.byteOffset - blob.byteOffset + Math.floor(random() * target.whole.length);
          const edge = [0x00, 0x07, 0x08, 0x1f, 0x2b, 0x2e, 0x30, 0x39, 0x5a, 0x80, 0x81, 0xff];
          copy[at] = random() < 0.5 ? edge[Math.floor(random() * edge.length)]! : Math.floor(random() * 256);
          vouched += checkBlob(copy);
        }
      }
      expect(vouched).toBeGreaterThan(300);
    });
  });
});
