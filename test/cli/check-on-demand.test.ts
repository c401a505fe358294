// check and audit over sets larger than they hold in memory (readAtOnceBytes): every file read when it is parsed and
// again when it is checked, into buffers used again from file to file. The results must be those of the sets held
// in memory, over every fixture (corrupt files, netmodules, companions, signed, delay-signed, native code).
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { isSignGateError } from '../../src/core/errors.js';
import { formatAuditJson, formatAuditJsonPieces } from '../../src/report/audit-json.js';
import { jsonPieces } from '../../src/report/json-pieces.js';
import { audit, renderAudit, verifyAuditReport } from '../../src/workflows/audit.js';
import { check, inputReading, prepareCheck } from '../../src/workflows/check.js';
import { isFileToRead, readInput, ReadBuffers } from '../../src/engine/index.js';
import { lineBatches, writeFileAtomic } from '../../src/workflows/files.js';
import { expandInputs } from '../../src/workflows/input-paths.js';
import { Ledger } from '../../src/workflows/ledger.js';
import { fixturePath, runCli } from '../helpers/fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'signgate-on-demand-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ledger = new Ledger(join(dir, 'cache'));
const keys = [fixturePath('test-keys/12345_public.snk')];
const explicit = [
  'variants/native.dll',
  'assemblies/part.netmodule',
  'modules/changed-module/ModuleAddin.dll',
  'modules/changed-module/AddinCode.netmodule',
  'corrupt/bad-metadata-signature.dll',
].map(fixturePath);
const sets = [[fixturePath('.')], [fixturePath('addin'), ...explicit]];

describe('check and audit with inputs read on demand', () => {
  test('a set larger than readAtOnceBytes is read on demand; a smaller one is held', async () => {
    const files = await expandInputs([fixturePath('addin')]);
    expect(inputReading(files, 0, 0)).toBe('on-demand');
    expect(inputReading(files, 0, Number.MAX_SAFE_INTEGER)).toBe('memory');
    expect(inputReading(files, 2, 0)).toBe('shared');
    expect(() => inputReading(files, 0, -1)).toThrow(/readAtOnceBytes must be a number of bytes of at least 0, not -1/);
    expect(() => inputReading(files, 0, Number.NaN)).toThrow(RangeError);
    const prepared = await prepareCheck({ paths: [fixturePath('addin')], keys, vendor: 'Contoso', readAtOnceBytes: 0 }, { onDemand: true });
    expect(prepared.onDemand).toBe(true);
    const input = prepared.inputs[0]!;
    // Nothing is held: the input is a file to read, and each read is a new buffer with the file's bytes.
    expect(isFileToRead(input)).toBe(true);
    expect('bytes' in input).toBe(false);
    expect(readInput(input)).not.toBe(readInput(input));
    expect(input.size).toBe(readInput(input).length);
    expect(readInput(input, new ReadBuffers()).buffer.byteLength).toBeGreaterThanOrEqual(1 << 20);
  });

  test('check: the same result as with the set in memory, over every fixture', async () => {
    for (const paths of sets) {
      const held = await check({ paths, keys, vendor: 'Contoso', threads: 0, readAtOnceBytes: Number.MAX_SAFE_INTEGER });
      const onDemand = await check({ paths, keys, vendor: 'Contoso', threads: 0, readAtOnceBytes: 0 });
      expect(held.prepared.onDemand).toBe(false);
      expect(onDemand.prepared.onDemand).toBe(true);
      expect(onDemand.result).toEqual(held.result);
      expect(held.result.summary.errors).toBeGreaterThan(0);
    }
  });

  test('audit: the same report as with the set in memory, as JSON, Markdown and HTML', async () => {
    for (const paths of sets) {
      const held = await audit({ paths, keys, vendor: 'Contoso', threads: 0, ledger, readAtOnceBytes: Number.MAX_SAFE_INTEGER });
      const onDemand = await audit({ paths, keys, vendor: 'Contoso', threads: 0, ledger, readAtOnceBytes: 0 });
      for (const format of ['json', 'markdown', 'html'] as const) expect(renderAudit(onDemand, format, null), format).toBe(renderAudit(held, format, null));
      expect(held.files.length).toBeGreaterThan(10);
    }
  });

  test('audit --verify-report on demand finds the report made in memory unchanged', async () => {
    const report = join(dir, 'audit.json');
    writeFileSync(report, renderAudit(await audit({ paths: [fixturePath('addin')], keys, vendor: 'Contoso', ledger }), 'json', null));
    const verified = await verifyAuditReport({ report, paths: [fixturePath('addin')], ledger, threads: 0, readAtOnceBytes: 0 });
    expect(verified.differences).toEqual([]);
  });

  test('a file that changes between its two reads stops the command with SG_ERR_IO_READ, naming it', async () => {
    const folder = join(dir, 'changing');
    rmSync(folder, { recursive: true, force: true });
    const { mkdirSync } = await import('node:fs');
    mkdirSync(folder);
    const target = join(folder, 'SampleAddin.dll');
    copyFileSync(fixturePath('addin/SampleAddin.dll'), target);
    const prepared = await prepareCheck({ paths: [folder], keys, vendor: 'Contoso', readAtOnceBytes: 0 }, { onDemand: true });
    const input = prepared.inputs[0]!;
    expect(readInput(input).length).toBe(input.size);
    // Same size, a new modification time (a build writing the file again).
    utimesSync(target, new Date(), new Date(Date.now() + 5_000));
    let error: unknown;
    try {
      readInput(input);
    } catch (e) {
      error = e;
    }
    expect(isSignGateError(error) && error.code).toBe('SG_ERR_IO_READ');
    expect((error as Error).message).toContain('SampleAddin.dll: the file changed while signgate was reading it');
    // A shorter file.
    writeFileSync(target, readFileSync(fixturePath('addin/SampleAddin.dll')).subarray(0, 1000));
    expect(() => readInput(input)).toThrow(/bytes when first seen, 1000 now/);
    rmSync(target);
    expect(() => readInput(input)).toThrow(/the file does not exist/);
  });

  test('the reused read buffers refuse a result that keeps a view of them', () => {
    const buffers = new ReadBuffers();
    const bytes = buffers.take(100);
    expect(() => buffers.release({ findings: [{ data: { blob: bytes.subarray(4, 8) } }] })).toThrow(/view of a reused read buffer/);
    expect(buffers.take(10).buffer).toBe(bytes.buffer);
    expect(buffers.release({ findings: [{ data: { blob: Uint8Array.from(bytes.subarray(4, 8)) } }] })).toBeTruthy();
    // Each file of an item (a manifest module and its netmodules) has a buffer of its own.
    const first = buffers.take(10);
    expect(buffers.take(10).buffer).not.toBe(first.buffer);
  });
});

describe('JSON in pieces', () => {
  test('jsonPieces is JSON.stringify(value, null, 2), character for character', () => {
    const values: unknown[] = [
      null,
      'text with "quotes", \\ and a\nnew line',
      42,
      [],
      {},
      [1, [2, [3, [4, {}]]], { a: [] }],
      { a: undefined, b: () => 1, c: [undefined, () => 1, null], d: { e: { f: { g: ['deep'] } } }, 'k\u00e9y': 'ü 😀' },
    ];
    for (const value of values) for (const depth of [0, 1, 2, 5]) expect([...jsonPieces(value, depth)].join('')).toBe(JSON.stringify(value, null, 2));
  });

  test('lineBatches joins pieces into parts of at least the size that end a line, and loses nothing', () => {
    const pieces = [...jsonPieces({ files: Array.from({ length: 50 }, (_, i) => ({ name: `f${i}.dll`, n: i })) })];
    const parts = [...lineBatches(pieces, 100)];
    expect(parts.length).toBeGreaterThan(5);
    expect(parts.join('')).toBe(pieces.join(''));
    for (const part of parts.slice(0, -1)) {
      expect(part.length).toBeGreaterThanOrEqual(100);
      expect(part.endsWith('\n')).toBe(true);
    }
  });

  test('the audit JSON written in pieces is the audit JSON', async () => {
    const report = await audit({ paths: [fixturePath('.')], keys, vendor: 'Contoso', ledger });
    const whole = formatAuditJson(report, '2026-01-01T00:00:00.000Z');
    const pieces = [...formatAuditJsonPieces(report, '2026-01-01T00:00:00.000Z')];
    expect(pieces.length).toBeGreaterThan(report.files.length);
    expect(pieces.join('')).toBe(whole);
    const file = join(dir, 'report.json');
    writeFileAtomic(file, formatAuditJsonPieces(report, null));
    expect(readFileSync(file, 'utf8')).toBe(formatAuditJson(report, null));
  });

  test('signgate audit prints the same JSON to standard output as it writes with -o (a report in the working folder: its paths are relative to both)', () => {
    const file = join(dir, 'cli-report.json');
    // The key in the working folder too: named the same from there and from the report's folder.
    const key = join(dir, 'cli-key.snk');
    copyFileSync(keys[0]!, key);
    const args = ['audit', fixturePath('.'), '--vendor', 'Contoso', '--key', key, '--format', 'json', '--no-timestamp'];
    const env = { SIGNGATE_CACHE_DIR: join(dir, 'cli-cache') };
    const printed = runCli(args, { env, cwd: dir });
    const written = runCli([...args, '-o', 'cli-report.json'], { env, cwd: dir });
    expect(written.stderr).toContain('json audit written');
    expect(printed.stdout.length).toBeGreaterThan(100_000);
    expect(printed.stdout).toBe(readFileSync(file, 'utf8'));
  });
});
