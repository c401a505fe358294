// `sign` and `jobs` against a stand-in service that differs from `signgate serve` wherever the vendor's published
// interface leaves room: ids of other types, links only, other state names, backslash names, other error bodies,
// a log file of another name, a job list without dates.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { readModule } from '../../src/strongname/well-formed.js';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { verifyStrongName } from '../../src/strongname/strong-name.js';
import { fixturePath, runCliAsync, clientWorkdir } from '../helpers/fixtures.js';
import { startStandIn, type StandIn, type StandInOptions } from '../helpers/stand-in-service.js';

const workdir = () => clientWorkdir('signgate-wire-', TOKEN);

const KEY = fixturePath('test-keys/12345_public.snk');
const key12345 = parseStrongNameKeyFile(readFileSync(KEY)).publicKey;
const ADDIN = fixturePath('addin');
const TOKEN = 'sgt_wire-test-token';

let service: StandIn | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

async function signWith(options: StandInOptions, ...extra: string[]) {
  service = await startStandIn(options);
  const w = workdir();
  const r = await runCliAsync(
    [
      'sign',
      ADDIN,
      '--root',
      ADDIN,
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--base-url',
      service.baseUrl,
      '--destination-path',
      w.out,
      '--poll-interval',
      '20',
      '--json',
      ...extra,
    ],
    { env: w.env },
  );
  return { ...r, w, result: r.stdout.trim().startsWith('{') ? JSON.parse(r.stdout) : undefined };
}

const signedOk = (out: string, name: string) => verifyStrongName(readModule(readFileSync(join(out, ...name.split('/')))), { expectedKey: key12345 }).valid;

describe('answers the vendor may give', () => {
  test.each([
    ['a numeric job id', { idStyle: 'number' as const }],
    ['an upload answer with links only', { idStyle: 'links-only' as const }],
    ['files reported Success, names with backslashes', { signedState: 'Success', statusSeparator: '\\' as const }],
  ])('%s: every file signed and verified, the job deleted', async (_name, options) => {
    const r = await signWith(options, '--delete-afterwards');
    expect(r.status, r.stderr).toBe(0);
    expect(r.result.summary).toMatchObject({ uploaded: 6, verified: 6, failed: 0 });
    expect(signedOk(r.w.out, 'de/SampleAddin.resources.dll')).toBe(true);
    expect(service!.jobs.size).toBe(0);
    const ledger = JSON.parse(readFileSync(join(r.w.env.SIGNGATE_CACHE_DIR, 'jobs.json'), 'utf8'));
    expect(ledger.jobs[0].state).toBe('deleted');
    if (options.idStyle === 'links-only') expect(service!.seen.some((s) => s.includes('/jobs-by-link/'))).toBe(true);
  });

  test('a state the client does not know is shown as it is, and the returned file decides', async () => {
    const r = await signWith({ signedState: 'Completed' });
    expect(r.status, r.stderr).toBe(0);
    expect(
      r.result.files.filter((f: { uploaded: boolean }) => f.uploaded).every((f: { state: string; verified: boolean }) => f.state === 'Completed' && f.verified),
    ).toBe(true);
  });

  test('a file the service marks Error is not signed, even when the bytes came back signed', async () => {
    const r = await signWith({
      status: (real) => ({
        ...real,
        assemblies: (real.assemblies as { fileName: string }[]).map((a, i) => ({ ...a, fileProcessingState: i === 0 ? 'Error' : 'Signed' })),
      }),
    });
    expect(r.status).toBe(1);
    expect(r.result.summary.failed).toBe(1);
    expect(r.result.files.find((f: { state: string }) => f.state === 'Error').reason).toContain('Error');
  });

  test('a log file of another name never blocks a re-run, and --delete-afterwards deletes every time', async () => {
    const first = await signWith({ logName: 'SigningLog.txt' }, '--delete-afterwards');
    expect(first.status, first.stderr).toBe(0);
    expect(readdirSync(join(first.w.out, 'from-service'))).toEqual(['SigningLog.txt']);
    const again = await runCliAsync(
      [
        'sign',
        ADDIN,
        '--root',
        ADDIN,
        '--vendor',
        'Contoso',
        '--key',
        KEY,
        '--base-url',
        service!.baseUrl,
        '--destination-path',
        first.w.out,
        '--poll-interval',
        '20',
        '--delete-afterwards',
      ],
      { env: first.w.env },
    );
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain('were signed before in job');
    expect(service!.jobs.size).toBe(0);
  });

  test('the request is built as the vendor script builds it: files[i] parts, backslash names, the comment after the files', async () => {
    const r = await signWith({}, '--comment', 'nightly');
    expect(r.status, r.stderr).toBe(0);
    const parts = service!.uploads[0]!;
    expect(parts.slice(0, -1).map((p) => p.name)).toEqual(parts.slice(0, -1).map((_, i) => `files[${i}]`));
    expect(parts.map((p) => p.filename)).toContain('de\\SampleAddin.resources.dll');
    expect(parts.at(-1)!.name).toBe('comment');
    expect(parts.at(-1)!.data.toString()).toBe('nightly');
  });
});

describe("the service's own words, whatever the body", () => {
  test.each([
    ['plain text', 'text/plain', 'Assembly Contoso.Addin.dll is not delay signed.', 'is not delay signed'],
    ['JSON with message', 'application/json', '{"message":"Upload quota exceeded for today."}', 'Upload quota exceeded'],
    [
      'an ASP.NET validation problem',
      'application/problem+json',
      '{"type":"https://tools.ietf.org/html/rfc9110#section-15.5.1","title":"One or more validation errors occurred.","status":400,"errors":{"files":["The file SampleAddin.dll is not a .NET assembly."]}}',
      'files: The file SampleAddin.dll is not a .NET assembly.',
    ],
  ])('%s', async (_name, contentType, body, expected) => {
    const r = await signWith({ uploadError: { status: 400, contentType, body } });
    expect(r.status).toBe(3);
    expect(r.stderr).toContain('400');
    expect(r.stderr).toContain(expected);
    expect(r.stderr).not.toContain(TOKEN);
  });
});

describe('jobs', () => {
  test('a list whose items carry only an id: listed with what is known; prune says what it could not date', async () => {
    service = await startStandIn({ list: (ids) => ids.map((id) => ({ id: Number(id) })) });
    const w = workdir();
    await signWithService(service, w);
    const list = await runCliAsync(['jobs', 'list', '--base-url', service.baseUrl], { env: w.env });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).not.toContain('undefined');
    expect(list.stdout).toContain('(no date)');
    const prune = await runCliAsync(['jobs', 'prune', '--older-than', '1s', '--yes', '--base-url', service.baseUrl], { env: w.env });
    expect(prune.stderr).toContain('no date');
    expect(prune.stdout).not.toBe('nothing to prune\n');
    expect(prune.status).toBe(1);
    expect(service.jobs.size).toBe(1);
  });
});

async function signWithService(s: StandIn, w: ReturnType<typeof workdir>) {
  const r = await runCliAsync(
    [
      'sign',
      join(ADDIN, 'SampleAddin.dll'),
      '--vendor',
      'Contoso',
      '--key',
      KEY,
      '--base-url',
      s.baseUrl,
      '--destination-path',
      w.out,
      '--poll-interval',
      '20',
    ],
    { env: w.env },
  );
  expect(r.status, r.stderr).toBe(0);
}
