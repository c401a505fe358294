// Authenticode fixtures made on the fly with openssl and Debian's osslsigncode: a throwaway TEST ONLY CA, a
// code-signing certificate and a time-stamping authority, an RFC 3161 responder on loopback (openssl ts -reply),
// and osslsigncode verify as the oracle. Nothing here may ever sign anything real.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as asn1js from 'asn1js';
import { has } from './fixtures.js';

const run = promisify(execFile);

/** osslsigncode and openssl are installed. In CI they must be: .ci/run installs them. */
export const hasOsslsigncode = has('osslsigncode') && has('openssl');
if (process.env.CI && !hasOsslsigncode) {
  throw new Error('CI is set but osslsigncode or openssl is not installed; .ci/run must apt-get install osslsigncode openssl');
}

const EXTENSIONS = `
[ca_ext]
basicConstraints=critical,CA:true
keyUsage=critical,keyCertSign,cRLSign
subjectKeyIdentifier=hash
[cs_ext]
basicConstraints=CA:false
keyUsage=critical,digitalSignature
extendedKeyUsage=codeSigning
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
[ts_ext]
basicConstraints=CA:false
keyUsage=critical,digitalSignature
extendedKeyUsage=critical,timeStamping
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
[tsa]
default_tsa=tsa_config
[tsa_config]
serial=__DIR__/tsaserial
crypto_device=builtin
signer_digest=sha256
default_policy=1.2.3.4.1
digests=sha1,sha256,sha384,sha512
accuracy=secs:1
ordering=yes
tsa_name=no
ess_cert_id_chain=no
ess_cert_id_alg=sha256
`;

export interface TestPki {
  readonly dir: string;
  readonly caPem: string;
  /** A second CA that signed nothing here: a trust store that must not trust our signer. */
  readonly otherCaPem: string;
  readonly signerPem: string;
  readonly signerKey: string;
  readonly tsaPem: string;
  readonly tsaKey: string;
  readonly config: string;
  /** Subjects as signgate prints them. */
  readonly signerSubject: string;
}

async function issue(dir: string, name: string, subject: string, ext: string, serial: string): Promise<void> {
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.csr`), '-subj', subject]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    join(dir, `${name}.csr`),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-set_serial',
    serial,
    '-days',
    '3650',
    '-out',
    join(dir, `${name}.pem`),
    '-extfile',
    join(dir, 'ext.cnf'),
    '-extensions',
    ext,
  ]);
}

/** Removes a TEST PKI's folder (its private keys and everything signed there). */
export function removeTestPki(pki: TestPki | undefined): void {
  if (pki) rmSync(pki.dir, { recursive: true, force: true });
}

/** A fresh TEST ONLY PKI in a temporary folder; remove it with removeTestPki after the tests. */
export async function makeTestPki(publisher = 'Contoso Test'): Promise<TestPki> {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-ac-'));
  const config = join(dir, 'ext.cnf');
  writeFileSync(config, EXTENSIONS.replace('__DIR__', dir));
  writeFileSync(join(dir, 'tsaserial'), '01\n');
  const ca = (name: string, cn: string) =>
    run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, `${name}.key`),
      '-out',
      join(dir, `${name}.pem`),
      '-days',
      '3650',
      '-subj',
      `/CN=${cn}/O=signgate tests`,
      '-config',
      config,
      '-extensions',
      'ca_ext',
    ]);
  await ca('ca', 'signgate TEST ONLY Root CA');
  await ca('other-ca', 'signgate TEST ONLY Unrelated CA');
  await issue(dir, 'signer', `/CN=signgate TEST ONLY Code Signing/O=${publisher}`, 'cs_ext', '0x1234ABCD');
  await issue(dir, 'tsa', '/CN=signgate TEST ONLY Time Stamping/O=signgate tests', 'ts_ext', '0x7157');
  return {
    dir,
    caPem: join(dir, 'ca.pem'),
    otherCaPem: join(dir, 'other-ca.pem'),
    signerPem: join(dir, 'signer.pem'),
    signerKey: join(dir, 'signer.key'),
    tsaPem: join(dir, 'tsa.pem'),
    tsaKey: join(dir, 'tsa.key'),
    config,
    signerSubject: `CN=signgate TEST ONLY Code Signing, O=${publisher}`,
  };
}

export interface SignWith {
  readonly hash?: 'sha1' | 'sha256' | 'sha384' | 'sha512';
  /** Append a nested signature to an already signed file (osslsigncode -nest). */
  readonly nest?: boolean;
  /** RFC 3161 time-stamping URL (osslsigncode -ts). */
  readonly timestampUrl?: string;
  /** Legacy Authenticode time-stamping URL (osslsigncode -t): a countersignature 1.2.840.113549.1.9.6. */
  readonly legacyTimestampUrl?: string;
}

/** Authenticode-signs `input` into `output` with the TEST ONLY code-signing certificate. */
export async function authenticodeSign(pki: TestPki, input: string, output: string, options: SignWith = {}): Promise<void> {
  const args = [
    'sign',
    '-certs',
    pki.signerPem,
    '-key',
    pki.signerKey,
    '-ac',
    pki.caPem,
    '-h',
    options.hash ?? 'sha256',
    '-n',
    'signgate test add-in',
    '-i',
    'https://example.invalid/',
  ];
  if (options.nest) args.push('-nest');
  if (options.timestampUrl) args.push('-ts', options.timestampUrl);
  if (options.legacyTimestampUrl) args.push('-t', options.legacyTimestampUrl);
  await run('osslsigncode', [...args, '-in', input, '-out', output]);
}

export interface OracleVerdict {
  readonly ok: boolean;
  /** "Current message digest" lines: the signed image hashes, in the order printed. */
  readonly signedDigests: string[];
  /** "Calculated message digest" lines: the file's image hashes. */
  readonly calculatedDigests: string[];
  readonly output: string;
}

/** osslsigncode verify with the TEST CA (and the TSA's CA) trusted: the oracle for every verdict. */
export async function osslVerify(pki: TestPki, file: string): Promise<OracleVerdict> {
  let output: string;
  let ok: boolean;
  try {
    const r = await run('osslsigncode', ['verify', '-CAfile', pki.caPem, '-TSA-CAfile', pki.caPem, '-in', file]);
    output = r.stdout + r.stderr;
    ok = true;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    output = (e.stdout ?? '') + (e.stderr ?? '');
    ok = false;
  }
  const grab = (label: string) => [...output.matchAll(new RegExp(`${label}\\s*:\\s*([0-9A-F]+)`, 'g'))].map((m) => m[1]!);
  return { ok, signedDigests: grab('Current message digest'), calculatedDigests: grab('Calculated message digest'), output };
}

/**
 * The signature value inside a legacy Authenticode time-stamp request (base64 of
 * SEQUENCE { 1.3.6.1.4.1.311.3.2.1, SEQUENCE { data, [0] { OCTET STRING signature } } }).
 */
function legacyRequestSignature(body: Buffer): Buffer {
  const der = Buffer.from(body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  const request = asn1js.fromBER(der).result as asn1js.Sequence;
  const blob = request.valueBlock.value[1] as asn1js.Sequence;
  const wrapped = blob.valueBlock.value[1] as asn1js.Constructed;
  return Buffer.from((wrapped.valueBlock.value[0] as asn1js.OctetString).valueBlock.valueHexView);
}

/**
 * A time-stamping authority on 127.0.0.1 with the TEST TSA: RFC 3161 requests (application/timestamp-query) are
 * answered with openssl ts -reply; legacy Authenticode requests with a PKCS#7 countersignature made by
 * openssl cms -sign over the signature value, base64-encoded as osslsigncode -t expects.
 */
export async function startTimestampResponder(pki: TestPki): Promise<{ url: string; server: Server; requests: () => number }> {
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      n++;
      const body = Buffer.concat(chunks);
      const reply = join(pki.dir, `reply-${n}.der`);
      const rfc3161 = req.headers['content-type'] === 'application/timestamp-query';
      const input = join(pki.dir, `request-${n}.bin`);
      writeFileSync(input, rfc3161 ? body : legacyRequestSignature(body));
      const args = rfc3161
        ? ['ts', '-reply', '-config', pki.config, '-queryfile', input, '-signer', pki.tsaPem, '-inkey', pki.tsaKey, '-chain', pki.caPem, '-out', reply]
        : [
            'cms',
            '-sign',
            '-binary',
            '-nodetach',
            '-nosmimecap',
            '-md',
            'sha256',
            '-in',
            input,
            '-signer',
            pki.tsaPem,
            '-inkey',
            pki.tsaKey,
            '-certfile',
            pki.caPem,
            '-outform',
            'DER',
            '-out',
            reply,
          ];
      execFile('openssl', args, (error) => {
        if (error) {
          res.writeHead(500).end(String(error));
          return;
        }
        const der = readFileSync(reply);
        if (rfc3161) res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(der);
        else res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(der.toString('base64'));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return { url: `http://127.0.0.1:${address.port}/`, server, requests: () => n };
}
