// Upload names over HTTP: limits of the file system, files against folders, names compared as Windows
// compares them, and names encoded as .NET's HttpClient and PowerShell write them.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ModuleMetadata } from '../../../src/metadata/module-metadata.js';
import { parsePeImage } from '../../../src/pe/pe-image.js';
import { verifyStrongName } from '../../../src/strongname/strong-name.js';
import { readZip } from '../../../src/zip/read-zip.js';
import { fixture, hasMono, runMono } from '../../helpers/fixtures.js';
import { multipartBytes, sendRaw, type MultipartPart } from '../../helpers/raw-http.js';
import { api, uploadForm, waitFinished, type TestServer } from '../../helpers/server.js';
import { sharedServer } from '../../helpers/shared-server.js';

const shared = sharedServer();
let server: TestServer;
let token: string;
beforeAll(() => {
  server = shared.server();
  token = shared.token();
});

const addin = fixture('findings/passing/FindingAddin.dll');
const jobsOnDisk = () => (existsSync(join(server.dataDir, 'jobs', 'sandbox')) ? readdirSync(join(server.dataDir, 'jobs', 'sandbox')) : []);

async function refused(names: string[]): Promise<{ fileName: string; detail: string }[]> {
  const before = jobsOnDisk();
  const r = await api(server, '/assemblies', token, { method: 'POST', body: uploadForm(names.map((name) => ({ name, bytes: addin }))) });
  expect(r.status).toBe(400);
  expect(r.headers.get('content-type')).toContain('application/problem+json');
  const body = await r.json();
  expect(jobsOnDisk()).toEqual(before);
  return body.errors;
}

describe('names the disk cannot hold', () => {
  test('a folder or file name over 255 bytes: 400 naming the file', async () => {
    const long = `Dir/${'ä'.repeat(128)}.dll`; // 132 characters, 260 bytes in UTF-8
    const errors = await refused([long]);
    expect(errors).toEqual([{ fileName: long, detail: expect.stringContaining('255 bytes') }]);
    const longFolder = `${'f'.repeat(256)}/A.dll`.slice(0, 258);
    expect((await refused([longFolder]))[0]!.detail).toContain('255 bytes');
  });

  test.each([
    ['the file first', ['a', 'a/b.dll']],
    ['the folder first', ['a/b.dll', 'A']],
    ['deeper, differing in case', ['x/Y/z.dll', 'X/y']],
  ])('a file and a folder of the same name (%s): 400', async (_order, names) => {
    const errors = await refused(names);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.fileName).toBe(names[1]);
    expect(errors[0]!.detail).toMatch(/file and a folder|cannot also be a folder/);
  });
});

describe('names compared as Windows compares them', () => {
  test('σ.dll and ς.dll are one name on NTFS: 400', async () => {
    const errors = await refused(['σ.dll', 'ς.dll']);
    expect(errors).toEqual([{ fileName: 'ς.dll', detail: expect.stringContaining('σ.dll') }]);
  });

  test('ß.dll and SS.dll are two names (NTFS does not fold ß): accepted', async () => {
    const r = await api(server, '/assemblies', token, {
      method: 'POST',
      body: uploadForm([
        { name: 'ß/FindingAddin.dll', bytes: addin },
        { name: 'SS/FindingAddin.dll', bytes: addin },
      ]),
    });
    expect(r.status).toBe(201);
    await waitFinished(server, token, (await r.json()).id);
  });
});

/** Content-Disposition parameters as .NET's ContentDispositionHeaderValue writes them. */
function dotnetQuote(value: string): string {
  if (/[^\x20-\x7e]/.test(value)) return `"=?utf-8?B?${Buffer.from(value, 'utf8').toString('base64')}?="`;
  return /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(value) ? value : `"${value}"`;
}
function dotnetStar(value: string): string {
  let out = "utf-8''";
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && /[!#$&+\-.^_`|~0-9A-Za-z]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

describe('names as .NET HttpClient and PowerShell send them', () => {
  const signedNames = ['Addins/FindingAddin.dll', 'Addins/Ünïcødé/FindingAddin.dll', 'Zweig ä/FindingAddin.dll', 'Ω/FindingAddin.dll'];

  test('MultipartFormDataContent byte for byte: backslash names, RFC 2047 B and Q names, filename*, the comment after the files', async () => {
    const boundary = randomUUID();
    const fileParts: MultipartPart[] = [
      // MultipartFormDataContent.Add(content, name, fileName): filename plus filename*.
      {
        headers: [
          `Content-Disposition: form-data; name="files[0]"; filename=${dotnetQuote('Addins\\FindingAddin.dll')}; filename*=${dotnetStar('Addins\\FindingAddin.dll')}`,
        ],
        body: addin,
      },
      {
        headers: [
          `Content-Disposition: form-data; name="files[1]"; filename=${dotnetQuote('Addins\\Ünïcødé\\FindingAddin.dll')}; filename*=${dotnetStar('Addins\\Ünïcødé\\FindingAddin.dll')}`,
        ],
        body: addin,
      },
      // A script that sets only ContentDispositionHeaderValue.FileName: the RFC 2047 word alone (here Q-encoded).
      {
        headers: [
          'Content-Type: application/octet-stream',
          'Content-Disposition: form-data; name="files[2]"; filename="=?utf-8?Q?Zweig_=C3=A4\\FindingAddin.dll?="',
        ],
        body: addin,
      },
      { headers: [`Content-Disposition: form-data; name="files[3]"; filename=${dotnetQuote('Ω\\FindingAddin.dll')}`], body: addin },
      { headers: ['Content-Type: text/plain; charset=utf-8', 'Content-Disposition: form-data; name=comment'], body: Buffer.from('nightly ä 1.4.2', 'utf8') },
    ];
    const body = multipartBytes(boundary, fileParts);
    const r = await sendRaw(
      `${server.baseUrl}/assemblies`,
      'POST',
      {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary="${boundary}"`,
        'content-length': body.length,
      },
      body,
    );
    expect(r.status, r.body).toBe(201);
    const job = JSON.parse(r.body);
    expect(job.comment).toBe('nightly ä 1.4.2');
    const status = await waitFinished(server, token, job.id);
    expect(Object.fromEntries(status.assemblies.map((a) => [a.fileName, a.fileProcessingState]))).toEqual(
      Object.fromEntries(signedNames.map((n) => [n, 'Signed'])),
    );
    const zip = await readZip(new Uint8Array(await (await api(server, `/assemblies/${job.id}`, token)).arrayBuffer()));
    expect(zip.map((e) => e.name).sort()).toEqual([...signedNames, 'signing-log.txt'].sort());
    for (const entry of zip.filter((e) => e.name !== 'signing-log.txt')) {
      expect(verifyStrongName(new ModuleMetadata(parsePeImage(entry.bytes))).valid, entry.name).toBe(true);
      if (hasMono) {
        const path = join(server.dataDir, `dotnet-${randomUUID()}.dll`);
        writeFileSync(path, entry.bytes);
        expect(runMono('sn', ['-vf', path]).stdout, entry.name).toContain('is strongnamed');
      }
    }
  });

  test.each([
    ['filename* alone (RFC 5987)', `form-data; name="files[0]"; filename*=UTF-8''${encodeURIComponent('Ünï/FindingAddin.dll')}`, 'Ünï/FindingAddin.dll'],
    ['raw UTF-8', 'form-data; name="files[0]"; filename="Ünï/FindingAddin.dll"', 'Ünï/FindingAddin.dll'],
    [
      'RFC 2047 split in two words',
      `form-data; name="files[0]"; filename="=?utf-8?B?${Buffer.from('Ünï/').toString('base64')}?= =?UTF-8?B?${Buffer.from('FindingAddin.dll').toString('base64')}?="`,
      'Ünï/FindingAddin.dll',
    ],
  ])('%s: accepted under its decoded name', async (_how, disposition, expected) => {
    const boundary = randomUUID();
    const body = multipartBytes(boundary, [{ headers: [`Content-Disposition: ${disposition}`], body: addin }]);
    const r = await sendRaw(
      `${server.baseUrl}/assemblies`,
      'POST',
      { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
      body,
    );
    expect(r.status, r.body).toBe(201);
    const status = await waitFinished(server, token, JSON.parse(r.body).id);
    expect(status.assemblies.map((a) => a.fileName)).toEqual([expected]);
  });

  test('an encoded-word that is not valid: 400, not a crash', async () => {
    const boundary = randomUUID();
    const body = multipartBytes(boundary, [{ headers: ['Content-Disposition: form-data; name="files[0]"; filename="=?utf-8?B?%%%?="'], body: addin }]);
    const r = await sendRaw(
      `${server.baseUrl}/assemblies`,
      'POST',
      { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
      body,
    );
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).errors[0].detail).toContain('characters Windows does not allow');
  });
});
