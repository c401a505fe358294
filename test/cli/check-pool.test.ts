// check and audit with their per-file work in worker threads: the same reports, byte for byte, as in the calling
// thread, over every fixture (corrupt files, netmodules, companions, signed and delay-signed files, native code).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { perFile as auditStep, type AuditedFile } from '../../src/audit/audit-product.js';
import { answer, inPool, runTask, settleTask, type TaskAnswer } from '../../src/engine/index.js';
import engineThreadTask from '../../src/engine/thread.js';
import type { CheckInput } from '../../src/rules/types.js';
import { checkThreads, CHECK_POOL_THRESHOLD } from '../../src/workflows/pipeline/index.js';
import { FormatError, isSignGateError, KeyError, UsageError } from '../../src/core/errors.js';
import { expandInputs } from '../../src/workflows/input-paths.js';
import { defaultSettings, runCheck, buildAudit } from '../helpers/check.js';
import { fixturePath, repoRoot, runCli } from '../helpers/fixtures.js';

const key = fixturePath('test-keys/12345_public.snk');
const settingsArgs = ['--vendor', 'Contoso', '--key', key];
// The whole fixture folder, and files named one by one (the rules for explicit inputs differ: native code, netmodules).
const explicit = [
  'variants/native.dll',
  'assemblies/part.netmodule',
  'modules/changed-module/ModuleAddin.dll',
  'modules/changed-module/AddinCode.netmodule',
  'corrupt/bad-metadata-signature.dll',
].map(fixturePath);
const sets = [[fixturePath('.')], [fixturePath('addin'), ...explicit]];

async function inputsOf(paths: readonly string[]): Promise<CheckInput[]> {
  const files = await expandInputs(paths, repoRoot, { netmodules: true });
  return files.map((f) => ({ path: f.displayPath, uploadName: f.displayPath, bytes: readFileSync(f.absolutePath), explicit: f.explicit }));
}

describe('check and audit in worker threads', () => {
  test('check: --threads 2 prints what --threads 0 prints, in text and JSON, with the same exit code', () => {
    for (const paths of sets) {
      for (const format of [[], ['--format', 'json'], ['--format', 'sarif']]) {
        const inThread = runCli(['check', ...paths, ...settingsArgs, ...format, '--threads', '0']);
        const pooled = runCli(['check', ...paths, ...settingsArgs, ...format, '--threads', '2']);
        expect(pooled.stderr, format.join(' ')).toBe(inThread.stderr);
        expect(pooled.stdout, format.join(' ')).toBe(inThread.stdout);
        expect(pooled.status).toBe(inThread.status);
        expect(inThread.status).toBe(1);
      }
    }
  });

  test('audit: --threads 2 writes what --threads 0 writes, as JSON and Markdown', () => {
    for (const paths of sets) {
      for (const format of ['json', 'markdown']) {
        const inThread = runCli(['audit', ...paths, ...settingsArgs, '--format', format, '--no-timestamp', '--threads', '0']);
        const pooled = runCli(['audit', ...paths, ...settingsArgs, '--format', format, '--no-timestamp', '--threads', '2']);
        expect(pooled.stdout, format).toBe(inThread.stdout);
        expect(pooled.status).toBe(inThread.status);
        expect(inThread.stdout.length).toBeGreaterThan(10_000);
      }
    }
  });

  test('audit --verify-report in threads finds a report made in one thread unchanged, and names a changed file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-pool-'));
    try {
      const report = join(dir, 'audit.json');
      const env = { SIGNGATE_CACHE_DIR: join(dir, 'cache') };
      const made = runCli(['audit', fixturePath('.'), ...settingsArgs, '--format', 'json', '--no-timestamp', '-o', report, '--threads', '0'], { env });
      expect(made.stderr).toContain('json audit written');
      const same = runCli(['audit', '--verify-report', report, fixturePath('.'), '--threads', '2'], { env });
      expect(same.stdout).toContain('matches');
      expect(same.status).toBe(0);
      const other = runCli(['audit', '--verify-report', report, fixturePath('addin'), '--threads', '2'], { env });
      expect(other.status).toBe(1);
      expect(other.stdout).toContain('in the report, not in the folder');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the library: runCheck and buildAudit on a pool of two threads equal them in this thread, findings from unreadable files and netmodules included', async () => {
    const inputs = await inputsOf([fixturePath('.')]);
    expect(inputs.length).toBeGreaterThan(100);
    const settings = defaultSettings();
    const expected = await runCheck(inputs, { settings });
    const pooled = await runCheck(inputs, { settings }, await inPool(2));
    expect(JSON.stringify(pooled)).toBe(JSON.stringify(expected));
    // The set holds what only a whole-set view or an error path produces: each must come back from the threads.
    const rulesFound = new Set(expected.findings.map((f) => f.rule));
    for (const rule of ['malformed', 'netmodule-mismatch', 'missing-vendor-attribute', 'wrong-key', 'already-signed', 'vendor-assembly-included'])
      expect(rulesFound, rule).toContain(rule);
    expect(expected.files.filter((f) => f.role === 'indirect' || f.role === 'companion' || f.role === 'module').length).toBeGreaterThan(3);
    const audit = await buildAudit(inputs, { settings });
    expect(JSON.stringify(await buildAudit(inputs, { settings }, await inPool(2)))).toBe(JSON.stringify(audit));
    // An attribute whose constructor row is outside its table makes the file malformed (SG001, as inspect and the
    // service say it) in the audit too; it does not stop the audit.
    expect(audit.findings.filter((f) => f.rule === 'malformed' && f.message.includes('SG_ERR_MD_BAD_INDEX')).map((f) => f.file)).toContain(
      'fixtures/corrupt/attribute-ctor-row-outside.dll',
    );
    // Severity overrides reach the threads.
    const severities = { 'loads-under-no-license': 'off', 'missing-vendor-attribute': 'warning' } as const;
    expect(JSON.stringify(await runCheck(inputs, { settings, severities }, await inPool(2)))).toBe(
      JSON.stringify(await runCheck(inputs, { settings, severities })),
    );
  });

  test('a thread task: each file parsed and checked again from plain data gives the findings of the calling thread', async () => {
    const inputs = await inputsOf([fixturePath('modules'), fixturePath('corrupt')]);
    const settings = defaultSettings();
    const parsed = runTask({ kind: 'parse', settings, inputs }, undefined);
    expect(await engineThreadTask({ kind: 'parse', settings, inputs })).toEqual({ done: parsed });
    // Plain data only: what crosses to the calling thread survives a structured clone unchanged.
    expect(structuredClone(parsed)).toEqual(parsed);
    expect(parsed.some((p) => 'readError' in p && p.readError !== undefined)).toBe(true);
    const expected = await runCheck(inputs, { settings });
    const placed = await runCheck(inputs, { settings }, await inPool(1));
    expect(placed.files).toEqual(expected.files);
    const items = inputs.slice(0, 3).map((input, i) => ({
      input,
      parsed: (parsed as never[])[i]!,
      placement: { role: { kind: 'not-required' as const, why: 'test' }, netmodules: [] },
      netmodules: [],
    }));
    const task = { kind: 'file', settings, product: 'audit/audit-product', options: {}, items } as const;
    const checked = runTask(task, { perFile: auditStep as never }) as AuditedFile[];
    expect(await engineThreadTask(task)).toEqual({ done: checked });
    expect(structuredClone(checked)).toEqual(checked);
    expect(checked.every((c) => c.evidence !== undefined && /^[0-9a-f]{64}$/.test(c.evidence.sha256))).toBe(true);
  });

  test('a SignGateError in a thread reaches the calling thread as the class it was, with what it carried; other errors stay exceptions', () => {
    const thrownBy = (a: unknown) => {
      try {
        settleTask(a as TaskAnswer<never>);
      } catch (error) {
        return error;
      }
      return undefined;
    };
    // Through a structured clone, as an answer crosses the thread boundary.
    const format = thrownBy(
      structuredClone(
        answer(() => {
          throw new FormatError('SG_ERR_MD_BAD_INDEX', 'MemberRef row 2047 does not exist', {
            structure: 'MemberRef',
            fileOffset: 0x54c,
            needed: 4,
            available: 2,
          });
        }),
      ),
    );
    expect(format).toBeInstanceOf(FormatError);
    expect(format).toMatchObject({
      code: 'SG_ERR_MD_BAD_INDEX',
      message: 'MemberRef row 2047 does not exist',
      structure: 'MemberRef',
      fileOffset: 0x54c,
      needed: 4,
      available: 2,
    });
    const usage = thrownBy(
      structuredClone(
        answer(() => {
          throw Object.assign(new UsageError('no vendor name', 'Pass --vendor <Name>.', 'SG_ERR_CONFIG'), { file: 'signgate.config.json' });
        }),
      ),
    );
    expect(usage).toBeInstanceOf(UsageError);
    expect(usage).toMatchObject({ code: 'SG_ERR_CONFIG', message: 'no vendor name', hint: 'Pass --vendor <Name>.', file: 'signgate.config.json' });
    const key = thrownBy(
      structuredClone(
        answer(() => {
          throw new KeyError('SG_ERR_KEY_BAD_BLOB', 'not a key blob');
        }),
      ),
    );
    expect(key).toBeInstanceOf(KeyError);
    expect(isSignGateError(key) && [key.code, key.message]).toEqual(['SG_ERR_KEY_BAD_BLOB', 'not a key blob']);
    expect(settleTask(answer(() => 7))).toBe(7);
    expect(() =>
      answer(() => {
        throw new TypeError('a bug');
      }),
    ).toThrow('a bug');
  });

  test('the default: no threads below CHECK_POOL_THRESHOLD files or with fewer than two idle cores; --threads overrides it', () => {
    expect(checkThreads(CHECK_POOL_THRESHOLD - 1, undefined, 2)).toBe(0);
    expect(checkThreads(CHECK_POOL_THRESHOLD, undefined, 2)).toBe(2);
    expect(checkThreads(CHECK_POOL_THRESHOLD, undefined, 1)).toBe(0);
    expect(checkThreads(5, 2, 0)).toBe(2);
    expect(checkThreads(1, 4, 2)).toBe(1);
    expect(() => checkThreads(10, 1.5)).toThrow(/whole number/);
    const r = runCli(['check', fixturePath('addin'), ...settingsArgs, '--threads', '-1']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--threads');
  });
});
