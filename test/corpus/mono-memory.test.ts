// Peak memory of `check` and `audit` over every *.dll/*.exe under /usr/lib/mono (2,629 files, 160 MB: read on
// demand), as a user runs them: the whole process, its report written to a file (stdout to a file, as the bench).
// Before the heap was held small (keepHeapSmall) and the reports written in parts of 64 KB, check peaked at
// 165 MB of RSS and audit at 175 MB; now about 105 and 110 (docs/performance.md, "check and audit of the Mono corpus"). The bound
// leaves room for another Node or machine, not for the old behaviour.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { fixturePath, hasMono, repoRoot } from '../helpers/fixtures.js';

const CORPUS = process.env.SIGNGATE_CORPUS ?? '/usr/lib/mono';
const BOUND_MB = 130;
const dir = mkdtempSync(join(tmpdir(), 'signgate-mono-memory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the command line with its report to a file; the process reports its own peak RSS as it exits. */
function peakOf(args: readonly string[]): { peakMb: number; report: string; status: number | null } {
  const out = join(dir, 'report');
  const fd = openSync(out, 'w');
  // Linux's VmHWM: getrusage's maxRSS would keep the RSS of the test's own process, which forked this one.
  const probe =
    "data:text/javascript,import{readFileSync}from'node:fs';process.on('exit',()=>process.stderr.write('\\nmaxrss='+/VmHWM:\\s*(\\d+)/.exec(readFileSync('/proc/self/status','utf8'))[1]+'\\n'))";
  try {
    const r = spawnSync(process.execPath, ['--import', probe, join(repoRoot, 'bin', 'signgate.js'), ...args], {
      stdio: ['ignore', fd, 'pipe'],
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const kb = /maxrss=(\d+)/.exec(r.stderr);
    if (!kb) throw new Error(`no peak RSS reported: ${r.stderr}`);
    return { peakMb: Number(kb[1]) / 1024, report: readFileSync(out, 'utf8'), status: r.status };
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(!hasMono)(`peak memory over ${CORPUS}`, () => {
  const settings = [
    CORPUS,
    '--vendor',
    'Mono',
    '--vendor-api',
    'Mono.Security',
    '--key',
    fixturePath('test-keys/12345_public.snk'),
    '--format',
    'json',
    '--threads',
    '0',
  ];

  test(`check --format json stays under ${BOUND_MB} MB of RSS`, { timeout: 5 * 60_000 }, () => {
    const { peakMb, report, status } = peakOf(['check', ...settings]);
    expect(status).toBe(1);
    expect((JSON.parse(report) as { summary: { files: number } }).summary.files).toBeGreaterThan(2000);
    expect(peakMb).toBeLessThan(BOUND_MB);
  });

  test(`audit --format json stays under ${BOUND_MB} MB of RSS`, { timeout: 5 * 60_000 }, () => {
    const { peakMb, report, status } = peakOf(['audit', ...settings, '--no-timestamp']);
    expect(status).toBe(1);
    expect((JSON.parse(report) as { files: unknown[] }).files.length).toBeGreaterThan(2000);
    expect(peakMb).toBeLessThan(BOUND_MB);
  });
});
