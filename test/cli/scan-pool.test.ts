// inspect and verify in a pool of worker threads: the same output, byte for byte and in the same order, as one
// JSON.stringify (or one joined text) of the records made in this thread, and the same exit code.
import { availableParallelism } from 'node:os';
import { describe, expect, test } from 'vitest';
import { expandInputs } from '../../src/workflows/input-paths.js';
import { idleCores, idleCoresNow, inspectFile, scanFiles, scanFilesAsJson, scanThreads, SCAN_POOL_THRESHOLD, verifyFile } from '../../src/workflows/scan.js';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';

const folder = fixturePath('.');

describe('scans in worker threads', () => {
  test('inspect --json: the pool, the default and --threads 0 print what one JSON.stringify of all records prints', async () => {
    const files = await expandInputs([folder], repoRoot);
    expect(files.length).toBeGreaterThan(50);
    const expected = `${JSON.stringify(
      files.map((f) => inspectFile(f)),
      null,
      2,
    )}\n`;
    const runs = [['--threads', '0'], ['--threads', '1'], ['--threads', '2'], []].map((t) => runCli(['inspect', '--json', ...t, folder]));
    for (const r of runs) {
      expect(r.stdout).toBe(expected);
      expect(r.status).toBe(runs[0]!.status);
    }
    // Some fixtures are corrupt on purpose: their records carry the error, and the exit code says so.
    expect(runs[0]!.status).toBe(3);
  });

  test('inspect (text) and verify (text and --json) are the same with and without the pool', () => {
    const key = fixturePath('test-keys/12345_public.snk');
    for (const command of [['inspect'], ['verify'], ['verify', '--json'], ['verify', '--key', key]]) {
      const inThread = runCli([...command, '--threads', '0', folder]);
      const pooled = runCli([...command, '--threads', '2', folder]);
      expect(pooled.stdout, command.join(' ')).toBe(inThread.stdout);
      expect(pooled.status, command.join(' ')).toBe(inThread.status);
      expect(inThread.stdout.length).toBeGreaterThan(1000);
    }
  });

  test('verify --json prints the records verifyFile makes, in order', async () => {
    const files = await expandInputs([folder], repoRoot);
    const r = runCli(['verify', '--json', '--threads', '2', folder]);
    expect(r.stdout).toBe(
      `${JSON.stringify(
        files.map((f) => verifyFile(f)),
        null,
        2,
      )}\n`,
    );
  });

  test('scanFilesAsJson: in threads and in this thread, the text of each record as an element of the printed array', async () => {
    const files = await expandInputs([folder], repoRoot);
    for (const threads of [0, 1, 2]) {
      const texts: string[] = [];
      for await (const r of scanFilesAsJson('verify', files, { threads })) texts.push(r.json);
      expect(`[\n${texts.join(',\n')}\n]`).toBe(
        JSON.stringify(
          files.map((f) => verifyFile(f)),
          null,
          2,
        ),
      );
    }
  });

  test('scanFiles: records in the order of the files; stopping early ends the threads', async () => {
    const files = await expandInputs([folder], repoRoot);
    const seen: string[] = [];
    for await (const record of scanFiles('verify', files, { threads: 2 })) seen.push(record.path);
    expect(seen).toEqual(files.map((f) => f.displayPath));
    const firstFew: string[] = [];
    for await (const record of scanFiles('inspect', files, { threads: 2 })) {
      firstFew.push(record.path);
      if (firstFew.length === 3) break;
    }
    expect(firstFew).toEqual(files.slice(0, 3).map((f) => f.displayPath));
  });

  test('the default: no threads below the threshold or with fewer than two idle cores, else one per idle core beside the calling thread; a bad count is refused', () => {
    expect(scanThreads(SCAN_POOL_THRESHOLD - 1, undefined, 2)).toBe(0);
    expect(scanThreads(SCAN_POOL_THRESHOLD, undefined, 2)).toBe(1);
    expect(scanThreads(SCAN_POOL_THRESHOLD, undefined, 4)).toBe(3);
    expect(scanThreads(SCAN_POOL_THRESHOLD, undefined, 1)).toBe(0);
    expect(scanThreads(SCAN_POOL_THRESHOLD, undefined, 0)).toBe(0);
    expect(scanThreads(3, 8)).toBe(3);
    expect(() => scanThreads(10, -1)).toThrow(/at least 0/);
    for (const idle of [idleCores(), idleCoresNow()]) {
      expect(idle).toBeGreaterThanOrEqual(0);
      expect(idle).toBeLessThanOrEqual(availableParallelism());
    }
    const r = runCli(['inspect', '--threads', 'two', folder]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--threads "two" is not a number');
  });
});
