// Upload-set rules over folder trees built for the test from real fixtures.
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { proposeSplit } from '../../src/rules/split.js';
import { checkPaths, ruleNames } from '../helpers/check.js';
import { fixturePath } from '../helpers/fixtures.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-tree-'));
  for (const [to, from] of Object.entries(files)) {
    mkdirSync(join(dir, to, '..'), { recursive: true });
    copyFileSync(fixturePath(from), join(dir, to));
  }
  return dir;
}

const addin = 'findings/passing/FindingAddin.dll';

describe('duplicate names', () => {
  test('without --root, the same name in two folders collides (case-insensitively)', async () => {
    const dir = tree({ 'a/FindingAddin.dll': addin, 'b/findingaddin.DLL': addin });
    const result = await checkPaths([dir]);
    expect(ruleNames(result)).toEqual(['duplicate-name']);
    expect(result.findings.find((f) => f.rule === 'duplicate-name')!.message).toContain('2 files would be uploaded as');
  });

  test('with --root, different relative folders are fine', async () => {
    const dir = tree({ 'a/FindingAddin.dll': addin, 'b/findingaddin.DLL': addin });
    expect(ruleNames(await checkPaths([dir], { root: dir }))).toEqual([]);
  });

  test('with --root, names differing only in case at the same level collide', async () => {
    const dir = tree({ 'Sub/FindingAddin.dll': addin, 'sub/FINDINGADDIN.dll': addin });
    expect(ruleNames(await checkPaths([dir], { root: dir }))).toEqual(['duplicate-name']);
  });
});

describe('upload size', () => {
  test('over the limit: one finding with a proposed split', async () => {
    const dir = tree({ 'A/FindingAddin.dll': addin, 'B/FindingAddin.dll': addin, 'SampleAddin.dll': 'addin/SampleAddin.dll' });
    const size = 4608;
    const result = await checkPaths([dir], { root: dir, maxUploadBytes: 2 * size + 100 });
    const finding = result.findings.find((f) => f.rule === 'upload-too-large')!;
    expect(finding).toBeDefined();
    const jobs = finding.data!.jobs as string[][];
    expect(jobs.length).toBeGreaterThanOrEqual(2);
    expect(jobs.flat().length).toBe(3);
  });

  test('proposeSplit: every job fits, no duplicate name in one job, oversized files are named', () => {
    const items = [
      { path: 'a/X.dll', uploadName: 'X.dll', size: 30 },
      { path: 'b/x.dll', uploadName: 'x.dll', size: 10 },
      { path: 'Y.dll', uploadName: 'Y.dll', size: 25 },
      { path: 'Z.dll', uploadName: 'Z.dll', size: 60 },
      { path: 'W.dll', uploadName: 'W.dll', size: 5 },
    ];
    const plan = proposeSplit(items, 40);
    expect(plan.tooLarge.map((i) => i.path)).toEqual(['Z.dll']);
    for (const job of plan.jobs) {
      expect(job.reduce((n, i) => n + i.size, 0)).toBeLessThanOrEqual(40);
      const names = job.map((i) => i.uploadName.toLowerCase());
      expect(new Set(names).size).toBe(names.length);
    }
    expect(plan.jobs.flat().length).toBe(4);
  });

  test('proposeSplit: a netmodule stays in the job of its assembly', () => {
    const items = [
      { path: 'Big.dll', uploadName: 'Big.dll', size: 30 },
      { path: 'M.dll', uploadName: 'M.dll', size: 10 },
      { path: 'Code.netmodule', uploadName: 'Code.netmodule', size: 21, unit: 'M.dll' },
      { path: 'Huge.dll', uploadName: 'Huge.dll', size: 30 },
      { path: 'Huge.netmodule', uploadName: 'Huge.netmodule', size: 20, unit: 'Huge.dll' },
    ];
    const plan = proposeSplit(items, 40);
    expect(plan.jobs.map((j) => j.map((i) => i.path))).toEqual([['Code.netmodule', 'M.dll'], ['Big.dll']]);
    expect(plan.tooLarge.map((i) => i.path)).toEqual(['Huge.dll', 'Huge.netmodule']);
  });

  test('over the limit with a multi-module assembly: the split keeps the netmodule with its manifest', async () => {
    const dir = tree({
      'A/FindingAddin.dll': addin,
      'M/ModuleAddin.dll': 'modules/passing/ModuleAddin.dll',
      'M/AddinCode.netmodule': 'modules/passing/AddinCode.netmodule',
    });
    const result = await checkPaths([dir], { root: dir, maxUploadBytes: 6000 });
    const jobs = result.findings.find((f) => f.rule === 'upload-too-large')!.data!.jobs as string[][];
    const withModule = jobs.find((j) => j.some((p) => p.endsWith('AddinCode.netmodule')))!;
    expect(withModule.some((p) => p.endsWith('ModuleAddin.dll'))).toBe(true);
  });
});
