import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ModuleMetadata } from '../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { getSignatureSlot, signedContentLength } from '../../src/strongname/signed-content.js';
import { classifyStrongName, compareIgnoringSignature, signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { fixture, fixturePath, hasMono, runMono } from '../helpers/fixtures.js';

const load = (bytes: Uint8Array) => new ModuleMetadata(parsePeImage(bytes));
const pair1024 = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));
const pair2048 = parseStrongNameKeyFile(fixture('test-keys/67890_keypair.snk'));
const otherPair = parseStrongNameKeyFile(fixture('test-keys/other_keypair.snk'));
const tmp = mkdtempSync(join(tmpdir(), 'signgate-sn-'));
const write = (name: string, bytes: Uint8Array) => {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
};

describe('classification of the fixtures', () => {
  test.each([
    ['assemblies/unsigned.dll', 'unsigned', []],
    ['assemblies/delay-1024.dll', 'delay-signed', []],
    ['assemblies/delay-2048.dll', 'delay-signed', []],
    ['assemblies/signed-1024.dll', 'signed', []],
    ['assemblies/signed-2048.dll', 'signed', []],
    ['assemblies/pe32plus-signed.dll', 'signed', []],
    ['assemblies/pe32plus-delay.dll', 'delay-signed', []],
    ['assemblies/mono-resigned.dll', 'signed', ['flag-clear']],
    ['assemblies/ilasm-signed.dll', 'signed', ['flag-clear']],
    ['assemblies/app-signed.exe', 'signed', []],
    ['variants/public-signed.dll', 'public-signed', []],
  ])('%s is %s', (name, state, details) => {
    const status = classifyStrongName(load(fixture(name)));
    expect(status.state).toBe(state);
    expect(status.details).toEqual(details);
  });

  test('2048-bit keys reserve a 256-byte slot', () => {
    const status = classifyStrongName(load(fixture('assemblies/signed-2048.dll')));
    expect(status.slot!.size).toBe(256);
    expect(status.keyBits).toBe(2048);
  });

  test('hashed length = L + H + 40N + sum(SizeOfRawData) - slot', () => {
    const md = load(fixture('assemblies/delay-1024.dll'));
    const slot = getSignatureSlot(md.image, md.corHeader)!;
    const raw = md.image.sections.reduce((n, s) => n + s.sizeOfRawData, 0);
    expect(signedContentLength(md.image, slot)).toBe(0x80 + 248 + 40 * md.image.numberOfSections + raw - 128);
  });
});

describe('signing', () => {
  test('without flag and checksum, our output is byte-identical to Mono sn -R', () => {
    const ours = signAssembly(load(fixture('assemblies/delay-1024.dll')), pair1024, { setSignedFlag: false, updateChecksum: false });
    expect(Buffer.from(ours).equals(Buffer.from(fixture('assemblies/mono-resigned.dll')))).toBe(true);
  });

  test.each([
    ['assemblies/delay-1024.dll', pair1024],
    ['assemblies/delay-2048.dll', pair2048],
    ['assemblies/pe32plus-delay.dll', pair1024],
    ['assemblies/app-delay.exe', pair1024],
    ['addin/de/SampleAddin.resources.dll', pair1024],
    ['addin/SampleAddin.XmlSerializers.dll', pair1024],
  ] as const)('%s signs, verifies, and differs only in slot, flag and checksum', (name, pair) => {
    const input = load(fixture(name));
    const signed = signAssembly(input, pair);
    const status = classifyStrongName(load(signed));
    expect(status.state).toBe('signed');
    expect(status.flagSet).toBe(true);
    expect(verifyStrongName(load(signed), { expectedKey: pair.publicKey }).valid).toBe(true);
    const diff = compareIgnoringSignature(input, signed);
    expect(diff).toMatchObject({ onlySignatureDiffers: true, identical: false, firstDifference: null });
    // The input bytes were not touched.
    expect(classifyStrongName(input).state).toBe('delay-signed');
  });

  test('a key pair of another key is refused with SG_ERR_KEY_MISMATCH', () => {
    expect(() => signAssembly(load(fixture('assemblies/delay-1024.dll')), otherPair)).toThrowError(expect.objectContaining({ code: 'SG_ERR_KEY_MISMATCH' }));
  });

  test('a public key alone cannot sign', () => {
    const pub = parseStrongNameKeyFile(fixture('test-keys/12345_public.snk'));
    expect(() => signAssembly(load(fixture('assemblies/delay-1024.dll')), pub)).toThrowError(expect.objectContaining({ code: 'SG_ERR_KEY_NOT_PAIR' }));
  });

  test('unsigned and slot-size-mismatch inputs are refused', () => {
    expect(() => signAssembly(load(fixture('assemblies/unsigned.dll')), pair1024)).toThrowError(
      expect.objectContaining({ code: 'SG_ERR_SN_NOT_STRONG_NAMED' }),
    );
    expect(() => signAssembly(load(fixture('variants/slot-size-mismatch.dll')), pair1024)).toThrowError(
      expect.objectContaining({ code: 'SG_ERR_SN_BAD_SLOT' }),
    );
  });

  test('SHA-256 key headers sign with SHA-256 and verify', () => {
    // Same RSA key, HashAlgID 0x800C in the assembly's public key blob: re-point the blob header in place.
    const bytes = Uint8Array.from(fixture('assemblies/delay-1024.dll'));
    const md = load(bytes);
    const keyAt = md.blobs.contentFileOffset(md.tables.cell(0x20, 1, md.tables.column(0x20, 'publicKey')));
    new DataView(bytes.buffer).setUint32(keyAt + 4, 0x800c, true);
    const signed = signAssembly(load(bytes), pair1024);
    const status = classifyStrongName(load(signed));
    expect(status).toMatchObject({ state: 'signed', hashAlgorithm: 'sha256' });
  });

  test('diff names the first other difference', () => {
    const input = load(fixture('assemblies/delay-1024.dll'));
    const signed = signAssembly(input, pair1024);
    const text = input.image.sections[0]!;
    signed[text.pointerToRawData + 0x300] ^= 1;
    const diff = compareIgnoringSignature(input, signed);
    expect(diff.onlySignatureDiffers).toBe(false);
    expect(diff.firstDifference!.fileOffset).toBe(text.pointerToRawData + 0x300);
    expect(diff.firstDifference!.where).toMatch(/0x/);
  });
});

describe.skipIf(!hasMono)('agreement with Mono sn', () => {
  test('our signer output passes sn -vf (1024 and 2048 bits, PE32 and PE32+)', () => {
    for (const [name, pair] of [
      ['assemblies/delay-1024.dll', pair1024],
      ['assemblies/delay-2048.dll', pair2048],
      ['assemblies/app-delay.exe', pair1024],
      ['assemblies/pe32plus-delay.dll', pair1024],
    ] as const) {
      const path = write(name.replace(/\//g, '_'), signAssembly(load(fixture(name)), pair));
      const r = runMono('sn', ['-q', '-vf', path]);
      expect(r.status, `${name}: ${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  test('PE32+: Mono sn -R run now gives our bytes (without flag and checksum)', () => {
    const path = write('pe32plus-mono.dll', fixture('assemblies/pe32plus-delay.dll'));
    expect(runMono('sn', ['-q', '-R', path, fixturePath('test-keys/12345_keypair.snk')]).status).toBe(0);
    const ours = signAssembly(load(fixture('assemblies/pe32plus-delay.dll')), pair1024, { setSignedFlag: false, updateChecksum: false });
    expect(Buffer.from(ours).equals(readFileSync(path))).toBe(true);
  });

  test('sn -R output passes our verify', () => {
    expect(verifyStrongName(load(fixture('assemblies/mono-resigned.dll')), { expectedKey: pair1024.publicKey }).valid).toBe(true);
  });

  // One byte in each hashed region fails both verifiers; unhashed places fail neither.
  const signed = signAssembly(load(fixture('assemblies/signed-1024.dll')), pair1024);
  const md = load(signed);
  const slot = getSignatureSlot(md.image, md.corHeader)!;
  const hashed: [string, number][] = [
    ['DOS stub', 0x50],
    ['COFF TimeDateStamp', md.image.peHeaderFileOffset + 8],
    ['optional header SizeOfImage', md.image.optionalHeaderFileOffset + 56],
    ['section table', md.image.sectionTableFileOffset + 8],
    ['CLI flags (upper byte)', md.corHeader.flagsFileOffset + 2],
    ['metadata', md.root.fileOffset + 20],
    ['slot neighbour after', slot.fileOffset + slot.size],
    ...md.image.sections.map((s): [string, number] => [`section ${s.name} last byte`, s.pointerToRawData + s.sizeOfRawData - 1]),
  ];
  test.each(hashed)('a byte flipped in %s fails ours and sn -vf', (_name, at) => {
    const bytes = Uint8Array.from(signed);
    bytes[at] ^= 0x01;
    let ours: boolean;
    try {
      ours = verifyStrongName(load(bytes)).valid;
    } catch {
      ours = false; // the flip made the file unreadable: not valid either
    }
    expect(ours).toBe(false);
    expect(runMono('sn', ['-q', '-vf', write(`flip-${at}.dll`, bytes)]).status).not.toBe(0);
  });

  const unhashed: [string, (b: Uint8Array) => Uint8Array][] = [
    ['a changed checksum', (b) => (new DataView(b.buffer).setUint32(md.image.checkSumFileOffset, 0xdeadbeef, true), b)],
    ['header padding', (b) => ((b[md.image.sectionTableFileOffset + md.image.numberOfSections * 40 + 4] = 0x5a), b)],
    ['appended overlay', (b) => Uint8Array.from([...b, 1, 2, 3, 4, 5, 6, 7, 8])],
  ];
  test.each(unhashed)('%s fails neither', (name, edit) => {
    const bytes = edit(Uint8Array.from(signed));
    expect(verifyStrongName(load(bytes)).valid).toBe(true);
    expect(runMono('sn', ['-q', '-vf', write(`unhashed-${name.replace(/\W/g, '')}.dll`, bytes)]).status).toBe(0);
  });
});
