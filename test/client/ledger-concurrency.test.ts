// The job ledger shared by runs at once (parallel CI jobs of one user): every run's entries survive, and a lock
// left by a run that died does not block the next one for long.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, test } from 'vitest';
import { Ledger, STALE_LOCK_MS, type LedgerEntry } from '../../src/workflows/ledger.js';
import { repoRoot } from '../helpers/fixtures.js';

const entry = (jobId: string): LedgerEntry => ({
  jobId,
  baseUrl: 'http://127.0.0.1:1/assembly-signing/v1.0',
  comment: null,
  createdAt: new Date().toISOString(),
  updatedAt: '',
  state: 'uploaded',
  files: [{ name: `${jobId}.dll`, sha256: '00', size: 1, source: `${jobId}.dll` }],
});

describe('the job ledger under parallel runs', () => {
  test('six processes writing 25 entries each at once: all 150 are kept', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'signgate-ledger-')), 'jobs.json');
    // The built module (dist/), as `signgate sign` runs it.
    const module = pathToFileURL(join(repoRoot, 'dist', 'workflows', 'ledger.js')).href;
    const script = `const { Ledger } = await import(${JSON.stringify(module)});
const run = process.argv[1];
for (let i = 0; i < 25; i++) new Ledger(${JSON.stringify(path)}).upsert({ jobId: run + '-' + i, baseUrl: 'b', comment: null, createdAt: '', updatedAt: '', state: 'uploaded', files: [] });`;
    const codes = await Promise.all(
      Array.from(
        { length: 6 },
        (_, run) =>
          new Promise<number | null>((done) =>
            spawn(process.execPath, ['--input-type=module', '-e', script, String(run)], { stdio: 'inherit' }).on('close', done),
          ),
      ),
    );
    expect(codes).toEqual([0, 0, 0, 0, 0, 0]);
    const ids = (JSON.parse(readFileSync(path, 'utf8')) as { jobs: { jobId: string }[] }).jobs.map((j) => j.jobId);
    expect(new Set(ids).size).toBe(150);
  });

  test('an entry another run wrote after this one read the ledger is kept when this one writes', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'signgate-ledger-')), 'jobs.json');
    const mine = new Ledger(path);
    new Ledger(path).upsert(entry('theirs'));
    mine.upsert(entry('mine'));
    expect(
      new Ledger(path)
        .all()
        .map((e) => e.jobId)
        .sort(),
    ).toEqual(['mine', 'theirs']);
  });

  test('a lock left by a run that died is taken over once stale', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'signgate-ledger-')), 'jobs.json');
    writeFileSync(`${path}.lock`, '999999\n');
    const old = (Date.now() - STALE_LOCK_MS - 1000) / 1000;
    utimesSync(`${path}.lock`, old, old);
    new Ledger(path).upsert(entry('after-a-crash'));
    expect(new Ledger(path).find('after-a-crash')).toBeDefined();
  });

  test('a fresh lock of a process that is gone from this machine is taken over, and removed afterwards', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'signgate-ledger-')), 'jobs.json');
    const gone = await new Promise<number>((done) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => done(child.pid!));
    });
    writeFileSync(`${path}.lock`, `${gone} ${hostname()} 0123456789abcdef\n`);
    new Ledger(path).upsert(entry('after-a-kill'));
    expect(new Ledger(path).find('after-a-kill')).toBeDefined();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe('downloads a run left in the cache folder', () => {
  test('a package and a part of a process that is gone are removed; those of a live process stay', async () => {
    const { sweepStaleDownloads } = await import('../../src/workflows/ledger.js');
    const dir = mkdtempSync(join(tmpdir(), 'signgate-cache-'));
    // A process number that is gone: a child that has exited.
    const gone = await new Promise<number>((done) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => done(child.pid!));
    });
    const stale = [`download-${gone}-0a1b2c3d4e5f.zip`, `.download-${gone}-0a1b2c3d4e5f.zip.part-01234567`];
    const live = [`download-${process.pid}-0a1b2c3d4e5f.zip`, `.download-${process.pid}-0a1b2c3d4e5f.zip.part-89abcdef`, 'jobs.json', 'download-notes.txt'];
    for (const name of [...stale, ...live]) writeFileSync(join(dir, name), 'x');
    expect(sweepStaleDownloads(dir).sort()).toEqual([...stale].sort());
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(dir).sort()).toEqual([...live].sort());
  });
});
