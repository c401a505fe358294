// Files that an option names for their text: a secret on a file's first line (the access token, serve's connection
// string), and the audit's own files (the record, a checkpoint, the manifest, the previous report). Each is named in
// a message as the user typed it, a connection string given in its file's place by its scheme alone, and no file
// is left open whatever goes wrong.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import type { CheckSettings } from '../../src/rules/types.js';
import { readFirstLine } from '../../src/workflows/access-token.js';
import { auditRecords, readSignatureRecord } from '../../src/workflows/audit-records.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-option-files-'));
const HINT = 'Put the personal access token on the first line of the file.';

function thrown(f: () => unknown): Error & { code?: string; hint?: string } {
  try {
    f();
  } catch (error) {
    return error as Error & { code?: string; hint?: string };
  }
  throw new Error('nothing was thrown');
}

test("a secret is its file's first line that is not blank, trimmed, after a byte-order mark and CRLF lines", () => {
  const file = join(dir, 'token.txt');
  writeFileSync(file, '\uFEFF\r\n   \r\n  sgt_first  \r\nsgt_second\r\n');
  expect(readFirstLine(file, HINT)).toBe('sgt_first');
});

test('an empty secret file, or one of blank lines, is a usage error naming it as typed, with the hint', () => {
  const file = join(dir, 'blank.txt');
  writeFileSync(file, '\uFEFF \r\n\t\n');
  const error = thrown(() => readFirstLine(file, HINT));
  expect(error.code).toBe('SG_ERR_USAGE');
  expect(error.message).toBe(`${file} is empty`);
  expect(error.hint).toBe(HINT);
});

test('a secret file that is missing is named as typed (a Windows path too); a connection string in its place is not shown', () => {
  const missing = thrown(() => readFirstLine('nope/token.txt', HINT));
  expect(missing.code).toBe('SG_ERR_IO_READ');
  expect(missing.message).toMatch(/^nope\/token\.txt: the file does not exist/);
  // A drive letter is no URL scheme: the path is shown whole.
  expect(thrown(() => readFirstLine('C:\\build\\token.txt', HINT)).message).toMatch(/^C:\\build\\token\.txt: the file does not exist/);
  const url = thrown(() => readFirstLine('postgres://signgate:S3cretPassw0rd@db.example.com:5432/signgate', HINT));
  expect(url.code).toBe('SG_ERR_IO_READ');
  expect(url.message).not.toContain('S3cretPassw0rd');
  expect(url.message).toMatch(/^a postgres: URL where a file name belongs \(not shown\): the file does not exist/);
});

test("the audit's manifest and previous report: an empty one is refused by name; a byte-order mark is allowed", () => {
  const settings = {} as CheckSettings;
  const empty = join(dir, 'empty-manifest.txt');
  writeFileSync(empty, '\uFEFF\n  \n');
  expect(thrown(() => auditRecords({ manifest: empty }, settings, undefined, [])).message).toBe(`${empty}: the manifest is empty`);
  const manifest = join(dir, 'manifest.txt');
  writeFileSync(manifest, '\uFEFF# release\r\nSampleAddin.dll\r\n');
  const previous = join(dir, 'previous.json');
  writeFileSync(previous, '\uFEFF{"formatVersion": 2, "files": []}');
  const read = auditRecords({ manifest, compare: previous }, settings, undefined, []);
  expect(read.manifest).toEqual(['SampleAddin.dll']);
  expect(read.previous?.files).toEqual([]);
  const missing = thrown(() => auditRecords({ compare: 'nope/previous.json' }, settings, undefined, []));
  expect(missing.code).toBe('SG_ERR_IO_READ');
  expect(missing.message).toMatch(/^nope\/previous\.json: the file does not exist/);
});

test.skipIf(!existsSync('/proc/self/fd'))('the record is closed on every error: a chain that does not verify, a bad record key, a folder', () => {
  const record = join(dir, 'record.jsonl');
  writeFileSync(record, '{"seq": 1, "not": "an entry"}\n');
  const checkpoint = join(dir, 'saved.checkpoint');
  writeFileSync(checkpoint, 'not a checkpoint\n');
  const folder = join(dir, 'a-folder');
  mkdirSync(folder, { recursive: true });
  const open = () => readdirSync('/proc/self/fd').length;
  const before = open();
  for (let i = 0; i < 20; i++) {
    expect(thrown(() => readSignatureRecord(record)).message).toContain(`${record} is not a signature record that verifies`);
    expect(thrown(() => readSignatureRecord(record, { checkpoint, key: 'not a record key' })).name).not.toBe('Error');
    expect(thrown(() => readSignatureRecord(folder)).code).toBe('SG_ERR_IO_READ');
  }
  expect(thrown(() => readSignatureRecord(join(dir, 'missing.jsonl'))).message).toMatch(/missing\.jsonl: the file does not exist/);
  expect(open()).toBe(before);
});
