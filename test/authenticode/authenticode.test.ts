// Authenticode reading and verification against osslsigncode verify, on add-ins signed in both orders with a
// throwaway TEST ONLY PKI, tampered, nested and timestamped by an RFC 3161 responder on loopback.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readAuthenticode, parseTrustStore, type AuthenticodeInfo } from '../../src/authenticode/authenticode.js';
import { computeAuthenticodeImageHash } from '../../src/authenticode/image-hash.js';
import { parsePeImage } from '../../src/pe/pe-image.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { signAssembly, verifyStrongName } from '../../src/strongname/strong-name.js';
import { authenticodeSign, hasOsslsigncode, makeTestPki, osslVerify, removeTestPki, startTimestampResponder, type TestPki } from '../helpers/authenticode.js';
import { fixture } from '../helpers/fixtures.js';

const pair = parseStrongNameKeyFile(fixture('test-keys/12345_keypair.snk'));

function read(file: string, options: Parameters<typeof readAuthenticode>[1] = {}): AuthenticodeInfo {
  return readAuthenticode(parsePeImage(new Uint8Array(readFileSync(file))), options);
}

function strongNameValid(file: string): boolean {
  return verifyStrongName(readModule(new Uint8Array(readFileSync(file)))).valid;
}

describe.skipIf(!hasOsslsigncode)('Authenticode with osslsigncode as the oracle', () => {
  let pki: TestPki;
  let responder: Awaited<ReturnType<typeof startTimestampResponder>>;
  const f = (name: string) => join(pki.dir, name);

  beforeAll(async () => {
    pki = await makeTestPki();
    responder = await startTimestampResponder(pki);
    const delay = fixture('addin/SampleAddin.dll');
    writeFileSync(f('delay.dll'), delay);
    writeFileSync(f('sn.dll'), signAssembly(readModule(delay), pair));
    // Right order: strong name first (the service), then Authenticode.
    await authenticodeSign(pki, f('sn.dll'), f('after.dll'));
    // Wrong order: Authenticode on the delay-signed build, then the service signs the strong name.
    await authenticodeSign(pki, f('delay.dll'), f('ac-first.dll'));
    writeFileSync(f('before.dll'), signAssembly(readModule(new Uint8Array(readFileSync(f('ac-first.dll')))), pair));
    // One byte changed inside the signed code: both signatures broken.
    const tampered = new Uint8Array(readFileSync(f('after.dll')));
    const image = parsePeImage(tampered);
    const text = image.sections[0]!;
    tampered[text.pointerToRawData + text.sizeOfRawData - 1] ^= 0x01;
    writeFileSync(f('tampered.dll'), tampered);
    await authenticodeSign(pki, f('after.dll'), f('nested.dll'), { nest: true, hash: 'sha1' });
    await authenticodeSign(pki, f('sn.dll'), f('timestamped.dll'), { timestampUrl: responder.url });
    await authenticodeSign(pki, f('sn.dll'), f('countersigned.dll'), { legacyTimestampUrl: responder.url });
  });

  afterAll(() => {
    responder?.server.close();
    removeTestPki(pki);
  });

  test('signed after the strong name: both valid, hashes equal osslsigncode', async () => {
    const oracle = await osslVerify(pki, f('after.dll'));
    expect(oracle.ok).toBe(true);
    const info = read(f('after.dll'));
    expect(info.state).toBe('valid');
    expect(info.signatures).toHaveLength(1);
    const [sig] = info.signatures;
    expect(sig!.signedImageHash).toBe(oracle.signedDigests[0]);
    expect(sig!.computedImageHash).toBe(oracle.calculatedDigests[0]);
    expect(sig!.digestAlgorithm).toBe('sha256');
    expect(sig!.signer?.subject).toBe(pki.signerSubject);
    expect(sig!.signer?.issuer).toBe('CN=signgate TEST ONLY Root CA, O=signgate tests');
    expect(sig!.signer?.serialNumber).toBe('1234ABCD');
    expect(sig!.certificates.map((c) => c.subject)).toContain('CN=signgate TEST ONLY Root CA, O=signgate tests');
    expect(sig!.programName).toBe('signgate test add-in');
    expect(sig!.claimedSigningTime).not.toBeNull();
    expect(sig!.timestamp).toBeNull();
    expect(info.publisher).toBe(pki.signerSubject);
    expect(strongNameValid(f('after.dll'))).toBe(true);
  });

  test('signed before the strong name: strong name valid, Authenticode broken as osslsigncode says', async () => {
    expect((await osslVerify(pki, f('ac-first.dll'))).ok).toBe(true);
    expect(read(f('ac-first.dll')).state).toBe('valid');
    const oracle = await osslVerify(pki, f('before.dll'));
    expect(oracle.ok).toBe(false);
    const info = read(f('before.dll'));
    expect(info.state).toBe('invalid');
    expect(info.signatures[0]!.imageHashMatches).toBe(false);
    expect(info.signatures[0]!.signatureValid).toBe(true);
    expect(info.signatures[0]!.computedImageHash).toBe(oracle.calculatedDigests[0]);
    expect(info.signatures[0]!.signedImageHash).toBe(oracle.signedDigests[0]);
    expect(info.reason).toMatch(/changed after Authenticode signing/);
    expect(strongNameValid(f('before.dll'))).toBe(true);
  });

  test('a tampered byte breaks both', async () => {
    const oracle = await osslVerify(pki, f('tampered.dll'));
    expect(oracle.ok).toBe(false);
    const info = read(f('tampered.dll'));
    expect(info.state).toBe('invalid');
    expect(info.signatures[0]!.computedImageHash).toBe(oracle.calculatedDigests[0]);
    expect(strongNameValid(f('tampered.dll'))).toBe(false);
  });

  test('a nested signature is read and verified with its own digest', async () => {
    const oracle = await osslVerify(pki, f('nested.dll'));
    expect(oracle.ok).toBe(true);
    const info = read(f('nested.dll'));
    expect(info.state).toBe('valid');
    expect(info.signatures.map((s) => [s.nesting, s.digestAlgorithm])).toEqual([
      [0, 'sha256'],
      [1, 'sha1'],
    ]);
    expect(info.signatures.map((s) => s.computedImageHash).sort()).toEqual([...oracle.calculatedDigests].sort());
    expect(info.signatures.every((s) => s.valid)).toBe(true);
    // The signature cap counts nested ones.
    const capped = read(f('nested.dll'), { limits: { maxSignatures: 1 } });
    expect(capped.state).toBe('unreadable');
    expect(capped.error?.code).toBe('SG_ERR_AC_BUDGET');
  });

  test('an RFC 3161 timestamp from a loopback responder is read and verified', async () => {
    expect(responder.requests()).toBeGreaterThan(0);
    const oracle = await osslVerify(pki, f('timestamped.dll'));
    expect(oracle.ok).toBe(true);
    expect(oracle.output).toMatch(/Timestamp Server Signature verification: ok/);
    const info = read(f('timestamped.dll'));
    expect(info.state).toBe('valid');
    const ts = info.signatures[0]!.timestamp!;
    expect(ts.kind).toBe('rfc3161');
    expect(ts.verified).toBe(true);
    expect(ts.signer).toBe('CN=signgate TEST ONLY Time Stamping, O=signgate tests');
    expect(Math.abs(Date.parse(ts.time) - Date.now())).toBeLessThan(10 * 60_000);
  });

  test('a legacy countersignature timestamp is read and verified', async () => {
    const oracle = await osslVerify(pki, f('countersigned.dll'));
    expect(oracle.ok, oracle.output).toBe(true);
    const info = read(f('countersigned.dll'));
    expect(info.state).toBe('valid');
    const ts = info.signatures[0]!.timestamp!;
    expect(ts).toMatchObject({ kind: 'countersignature', verified: true, problem: null, signer: 'CN=signgate TEST ONLY Time Stamping, O=signgate tests' });
    expect(Math.abs(Date.parse(ts.time) - Date.now())).toBeLessThan(10 * 60_000);
  });

  test('a timestamp that covers another signature is caught', () => {
    // Swap the signature value under the timestamp: the imprint no longer matches.
    const bytes = new Uint8Array(readFileSync(f('timestamped.dll')));
    const info = read(f('timestamped.dll'));
    const table = info.table!;
    const blob = Buffer.from(bytes.subarray(table.fileOffset, table.fileOffset + table.size));
    // The RSA signature value is the 256-byte OCTET STRING (04 82 01 00) before the unsigned attributes.
    const at = blob.indexOf(Buffer.from([0x04, 0x82, 0x01, 0x00]));
    expect(at).toBeGreaterThan(0);
    bytes[table.fileOffset + at + 4 + 100] ^= 0xff;
    const broken = readAuthenticode(parsePeImage(bytes));
    expect(broken.state).toBe('invalid');
    expect(broken.signatures[0]!.signatureValid).toBe(false);
    expect(broken.signatures[0]!.timestamp!.verified).toBe(false);
  });

  test('trust is reported apart: trusted with the TEST CA, not with an unrelated one, valid either way', () => {
    const trusted = read(f('after.dll'), { trustStore: parseTrustStore(readFileSync(pki.caPem, 'utf8')) });
    expect(trusted.state).toBe('valid');
    expect(trusted.trusted).toBe(true);
    expect(trusted.signatures[0]!.trust?.chain).toEqual([pki.signerSubject, 'CN=signgate TEST ONLY Root CA, O=signgate tests']);
    const other = read(f('after.dll'), { trustStore: [new X509Certificate(readFileSync(pki.otherCaPem))] });
    expect(other.state).toBe('valid');
    expect(other.trusted).toBe(false);
    expect(other.signatures[0]!.trust?.problem).toMatch(/not in the trust store/);
    expect(read(f('after.dll')).trusted).toBeNull();
  });

  test('in one process, a certificate seen before does not lend its verdict to a tampered copy of it', () => {
    // The signer certificate's own signature altered (its last byte): still readable, but no longer issued by the CA.
    const signerDer = new X509Certificate(readFileSync(pki.signerPem)).raw;
    const bytes = new Uint8Array(readFileSync(f('after.dll')));
    const at = Buffer.from(bytes).indexOf(signerDer);
    expect(at).toBeGreaterThan(0);
    bytes[at + signerDer.length - 1] ^= 0x01;
    const store = { trustStore: parseTrustStore(readFileSync(pki.caPem, 'utf8')) };
    const good = () => read(f('after.dll'), store);
    const bad = () => readAuthenticode(parsePeImage(bytes), store);
    const verdict = (info: AuthenticodeInfo) => ({
      state: info.state,
      trusted: info.trusted,
      problem: info.signatures[0]!.trust?.problem ?? null,
      signer: info.signatures[0]!.signer?.sha256,
    });
    const ok = { state: 'valid', trusted: true, problem: null, signer: verdict(good()).signer };
    // The signature itself still verifies (the key is unchanged); the chain does not.
    const broken = {
      state: 'valid',
      trusted: false,
      problem: expect.stringMatching(/^no certificate of issuer CN=signgate TEST ONLY Root CA/),
      signer: expect.not.stringMatching(ok.signer!),
    };
    expect([good(), bad(), good(), bad(), bad(), good()].map(verdict)).toEqual([ok, broken, ok, broken, broken, ok]);
  });

  test('in one process, damage after a good file with the same certificates is still caught (message digest, signature, TSTInfo time)', () => {
    const good = new Uint8Array(readFileSync(f('timestamped.dll')));
    const table = read(f('timestamped.dll')).table!;
    const blob = Buffer.from(good.subarray(table.fileOffset, table.fileOffset + table.size));
    const damaged = (marker: number[] | RegExp, offset: number) => {
      // A byte pattern may also occur by chance in the (random) signature bytes before it: a RegExp says more.
      const at = marker instanceof RegExp ? blob.toString('latin1').search(marker) : blob.indexOf(Buffer.from(marker));
      expect(at).toBeGreaterThan(0);
      const copy = Uint8Array.from(good);
      copy[table.fileOffset + at + offset] ^= 0x01;
      return () => readAuthenticode(parsePeImage(copy));
    };
    // messageDigest attribute (1.2.840.113549.1.9.4): its OCTET STRING's last byte, in the signer's attributes.
    const digest = damaged([0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04, 0x31, 0x22, 0x04, 0x20], 15 + 31);
    // The signature value (the 256-byte OCTET STRING).
    const signature = damaged([0x04, 0x82, 0x01, 0x00], 4 + 10);
    // The TSTInfo's genTime (GeneralizedTime, 15 bytes: YYYYMMDDHHMMSSZ): its seconds' last digit.
    const genTime = damaged(/\x18\x0f\d{14}Z/, 2 + 13);
    const verdict = (info: AuthenticodeInfo) => ({
      state: info.state,
      problem: info.signatures[0]!.problem,
      timestamp: info.signatures[0]!.timestamp!.verified,
    });
    const ok = { state: 'valid', problem: null, timestamp: true };
    const runs = [() => read(f('timestamped.dll')), digest, signature, genTime, () => read(f('timestamped.dll')), genTime, digest];
    expect(runs.map((r) => verdict(r()))).toEqual([
      ok,
      { state: 'invalid', problem: 'the authenticated message digest does not match the signed content', timestamp: true },
      { state: 'invalid', problem: 'the signature does not verify with the signer certificate', timestamp: false },
      { state: 'valid', problem: null, timestamp: false },
      ok,
      { state: 'valid', problem: null, timestamp: false },
      { state: 'invalid', problem: 'the authenticated message digest does not match the signed content', timestamp: true },
    ]);
    expect(genTime().signatures[0]!.timestamp!.problem).toBe('timestamp: the authenticated message digest does not match the signed content');
  });

  test('a certificate not valid at the signing time is not trusted, before or after the same chain was trusted', () => {
    const trustStore = parseTrustStore(readFileSync(pki.caPem, 'utf8'));
    const signer = new X509Certificate(readFileSync(pki.signerPem));
    const before = new Date(Date.parse(signer.validFrom) - 86_400_000);
    const after = new Date(Date.parse(signer.validTo) + 86_400_000);
    const at = (now: Date) => {
      const info = read(f('after.dll'), { trustStore, now });
      return { state: info.state, trusted: info.trusted, problem: info.signatures[0]!.trust!.problem };
    };
    const notValid = (when: Date) => ({ state: 'valid', trusted: false, problem: `${pki.signerSubject} is not valid at ${when.toISOString()}` });
    const trusted = { state: 'valid', trusted: true, problem: null };
    expect([at(before), at(new Date()), at(after), at(new Date()), at(before)]).toEqual([
      notValid(before),
      trusted,
      notValid(after),
      trusted,
      notValid(before),
    ]);
  });

  test('a certificate kept for later files holds no view of the file it came from (its buffer is reused or freed)', () => {
    const store = { trustStore: parseTrustStore(readFileSync(pki.caPem, 'utf8')) };
    const verdict = (info: AuthenticodeInfo) => ({
      state: info.state,
      trusted: info.trusted,
      problem: info.signatures[0]!.trust?.problem ?? null,
      publisher: info.signatures[0]!.signer?.subject,
    });
    for (const name of ['after.dll', 'timestamped.dll', 'nested.dll']) {
      // First read from a buffer that is then overwritten, as check and audit reuse their read buffers.
      const scratch = new Uint8Array(readFileSync(f(name)));
      const first = verdict(readAuthenticode(parsePeImage(scratch), store));
      scratch.fill(0x5a);
      expect(verdict(read(f(name), store)), name).toEqual(first);
      expect(first.state).toBe('valid');
    }
  });

  test('the image hash of an unsigned file equals what osslsigncode signs', async () => {
    const info = read(f('after.dll'));
    const hash = Buffer.from(computeAuthenticodeImageHash(parsePeImage(new Uint8Array(readFileSync(f('sn.dll')))), 'sha256'))
      .toString('hex')
      .toUpperCase();
    expect(hash).toBe(info.signatures[0]!.signedImageHash);
  });

  test('bytes appended after the certificate table make the signature invalid, as for osslsigncode', async () => {
    const bytes = Buffer.concat([readFileSync(f('after.dll')), Buffer.alloc(16, 0x41)]);
    writeFileSync(f('appended.dll'), bytes);
    const oracle = await osslVerify(pki, f('appended.dll'));
    const info = read(f('appended.dll'));
    expect(oracle.ok).toBe(false);
    expect(info.state).toBe('invalid');
    expect(info.reason).toMatch(/16 bytes follow the certificate table/);
  });
});

describe('files without Authenticode', () => {
  test('a delay-signed add-in has none', () => {
    const info = readAuthenticode(parsePeImage(fixture('addin/SampleAddin.dll')));
    expect(info).toMatchObject({ state: 'absent', signatures: [], table: null, error: null });
  });

  test('the trust store must hold a certificate', () => {
    expect(() => parseTrustStore('nothing here', 'roots.pem')).toThrow(/roots.pem holds no -----BEGIN CERTIFICATE-----/);
  });
});
