// The service client's parts on their own: the connection (its base URL checked and its token remembered before any
// request, links held against its origin), the retry timing, and the reader of each answer. The whole client runs
// against real services on loopback in the other files of this folder.
import { expect, test } from 'vitest';
import { maskRemembered, SECRET_MARK } from '../../src/core/secrets.js';
import { consistencyAnswer, createdAnswer, licenseEntriesAnswer, listAnswer, recordKeyAnswer, statusAnswer } from '../../src/service-client/answers.js';
import { createServiceClient } from '../../src/service-client/client.js';
import { openConnection } from '../../src/service-client/connection.js';
import { parseRetryAfter, retryDelayMs } from '../../src/service-client/http.js';

const request = { method: 'GET', url: 'https://signing.example.com/assembly-signing/v1.0/licenses' };

function thrown(f: () => unknown): Error & { code?: string } {
  try {
    f();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('nothing was thrown');
}

test('the connection refuses a base URL before any request: not HTTPS, not a URL, or with a password (never shown)', () => {
  let asked = 0;
  const fetch = (async () => {
    asked++;
    return new Response('[]');
  }) as typeof globalThis.fetch;
  const plain = thrown(() => openConnection({ baseUrl: 'http://signing.example.com/x/v1.0', accessToken: 'sgt_unused', fetch }));
  expect(plain.code).toBe('SG_ERR_HTTP_INSECURE');
  expect(plain.message).toBe('the base URL http://signing.example.com is not HTTPS; plain HTTP is allowed only to this machine (localhost)');
  const withPassword = thrown(() => openConnection({ baseUrl: 'https://user:Hunter2Hunter2@signing.example.com/x/v1.0', accessToken: 't', fetch }));
  expect(withPassword.code).toBe('SG_ERR_HTTP_INSECURE');
  expect(withPassword.message).not.toContain('Hunter2');
  expect(withPassword.message).toContain('https://signing.example.com/x/v1.0');
  expect(thrown(() => openConnection({ baseUrl: 'signing.example.com', accessToken: 't', fetch })).message).toContain('is not a URL');
  expect(asked).toBe(0);
});

test('the token is remembered when the connection opens, before any request, and masked in every form', () => {
  const token = `sgt_${'q7Rz'.repeat(11)}`;
  expect(maskRemembered(token)).toBe(token);
  createServiceClient({ baseUrl: 'http://127.0.0.1:9/x/v1.0', accessToken: token });
  expect(maskRemembered(`said ${token} and ${Buffer.from(token).toString('hex')}`)).toBe(`said ${SECRET_MARK} and ${SECRET_MARK}`);
});

test("links from the service are kept only on the base URL's origin and when they carry no secret", () => {
  const http = openConnection({ baseUrl: 'https://signing.example.com/assembly-signing/v1.0', accessToken: 'sgt_links_test_token_0000' });
  expect(http.ownLink('/assembly-signing/v1.0/assemblies/7/status')).toBe('https://signing.example.com/assembly-signing/v1.0/assemblies/7/status');
  expect(http.ownLink('https://elsewhere.example.com/assemblies/7')).toBeUndefined();
  expect(http.ownLink(`https://signing.example.com/a/7?access_token=sgt_${'A'.repeat(40)}`)).toBeUndefined();
  expect(http.ownLink('http://[bad')).toBeUndefined();
  expect(http.ownLink(undefined)).toBeUndefined();
  expect(http.url('/licenses')).toBe('https://signing.example.com/assembly-signing/v1.0/licenses');
});

test('the retry timing: Retry-After in seconds or as an HTTP date, exponential backoff, both capped', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  expect(parseRetryAfter('120', now)).toBe(120_000);
  expect(parseRetryAfter(new Date(now + 30_000).toUTCString(), now)).toBe(30_000);
  expect(parseRetryAfter(new Date(now - 30_000).toUTCString(), now)).toBe(0);
  expect(parseRetryAfter('soon', now)).toBeUndefined();
  expect(parseRetryAfter(null, now)).toBeUndefined();
  const policy = { retries: 4, baseDelayMs: 500, maxDelayMs: 3_000 };
  expect([1, 2, 3, 4, 5].map((attempt) => retryDelayMs(attempt, policy))).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
  expect(retryDelayMs(1, policy, 2_500)).toBe(2_500);
  expect(retryDelayMs(1, policy, 600_000)).toBe(3_000);
});

test('the licenses: option ids as numbers or numeric strings, a key token only when it is 16 hex digits', () => {
  const entries = licenseEntriesAnswer(
    [
      { optionId: 12345, publicKeyToken: '0123456789ABCDEF' },
      { optionId: '678', extra: true },
      { optionId: 9, publicKeyToken: 'not\u001b[31m a token' },
      { optionId: 10, publicKeyToken: null },
    ],
    request,
  );
  expect(entries).toEqual([
    { optionId: 12345, publicKeyToken: '0123456789abcdef' },
    { optionId: 678, publicKeyToken: null },
    { optionId: 9, publicKeyToken: null, publicKeyTokenProblem: 'publicKeyToken "not\\u001b[31m a token" is not 16 hex digits' },
    { optionId: 10, publicKeyToken: null },
  ]);
  const notList = thrown(() => licenseEntriesAnswer({ licenses: [] }, request));
  expect(notList.code).toBe('SG_ERR_HTTP_BAD_RESPONSE');
  expect(notList.message).toBe(`GET ${request.url} returned object, not a JSON array of license entries`);
  expect(thrown(() => licenseEntriesAnswer([{ optionId: 1 }, { optionId: 'x1' }], request)).message).toBe(
    `GET ${request.url}: license entry 1 has optionId "x1", not a number`,
  );
});

test('an upload answer, a status and a list are checked against their schema and normalised', () => {
  expect(createdAnswer({ id: 42, comment: 'night\u0007ly', links: null }, request)).toEqual({ id: '42', comment: 'night ly', links: {} });
  expect(thrown(() => createdAnswer({ comment: 'no id, no links' }, request)).code).toBe('SG_ERR_HTTP_BAD_RESPONSE');
  const status = statusAnswer(
    {
      id: 7,
      processingFinished: true,
      assemblies: [
        { fileName: 'sub\\Addin.dll', fileProcessingState: 'Signed', messages: null },
        { fileName: 'b.dll', fileProcessingState: '', messages: [{ message: 'ok', dateTime: null, messageType: null }] },
      ],
    },
    request,
  );
  expect(status).toEqual({
    id: '7',
    comment: null,
    createdAt: null,
    processingFinished: true,
    assemblies: [
      { fileName: 'sub/Addin.dll', fileProcessingState: 'Signed', messages: [] },
      { fileName: 'b.dll', fileProcessingState: '(none)', messages: [{ dateTime: null, messageType: 'Info', message: 'ok' }] },
    ],
  });
  expect(thrown(() => statusAnswer({ assemblies: [] }, request)).message).toContain('the job status does not follow the API');
  expect(listAnswer([{ id: 3, fileCount: 2 }], request)).toEqual([{ id: '3', comment: null, createdAt: null, processingFinished: null, fileCount: 2 }]);
});

test('the record key and a consistency proof: the answer names what is missing', () => {
  expect(recordKeyAnswer({ publicKey: 'signgate-record+abcd+AQID' }, request)).toBe('signgate-record+abcd+AQID');
  expect(thrown(() => recordKeyAnswer({ key: 'x' }, request)).message).toBe(`GET ${request.url}: the answer has no publicKey`);
  expect(consistencyAnswer({ proof: ['AA==', 'AQ=='] }, request)).toEqual(['AA==', 'AQ==']);
  expect(thrown(() => consistencyAnswer({ proof: ['AA==', 1] }, request)).message).toBe(
    `GET ${request.url}: the answer has no proof (a list of base64 hashes)`,
  );
});

test("an option's public key is asked for only with a whole number: a bad one is a rejected promise, not a throw", async () => {
  const client = createServiceClient({ baseUrl: 'http://127.0.0.1:9/x/v1.0', accessToken: 'sgt_public_key_test_0000' });
  const asked = client.publicKey(-1);
  await expect(asked).rejects.toThrow('optionId must be a whole number of at least 0, not -1');
});
