// The Windows executable on Windows APIs (Wine): check, verify and audit over Windows inputs give the same JSON as
// the Linux build. The inputs: Z:\ and C:\ paths with `\`, a folder and file named in another case than on disk,
// names with spaces and non-ASCII letters, a path over 260 characters, a BOM + CRLF signgate.config.json with a
// `\` glob, a device name (CON.dll), and two files whose names differ only in case (both checked: SG502).
// Needs Wine (fails in CI without it; .ci/run installs wine64).
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, runCli, type CliResult } from '../helpers/fixtures.js';
import { hasWine, startWine, zPath, type WineHost } from '../helpers/wine.js';

const runWine = hasWine || Boolean(process.env.CI);
const NET48 = fixturePath('sdk/bin/net48');
const KEY = fixturePath('sdk/12345_public.snk');
const KEY_PAIR = fixturePath('test-keys/12345_keypair.snk');
const FOLDER = 'Add-in Ünïcode Österreich';

interface Finding {
  ruleId: string;
}
interface Report {
  summary: Record<string, number>;
  files: { path: string; findings: Finding[] }[];
  uploadSet: { findings: Finding[] };
}
const parse = (r: CliResult | { stdout: string; stderr: string }) => {
  try {
    return JSON.parse(r.stdout) as Report;
  } catch {
    throw new Error(`not JSON:\n${r.stdout.slice(0, 500)}\n${r.stderr.slice(0, 2000)}`);
  }
};
const ruleIds = (r: Report) => [...r.files.flatMap((f) => f.findings), ...r.uploadSet.findings].map((f) => f.ruleId).sort();

describe.runIf(runWine)('signgate-win-x64.exe under Wine', () => {
  let wine: WineHost;
  let work: string;
  let workC: string;

  beforeAll(async () => {
    wine = await startWine();
    work = mkdtempSync(join(tmpdir(), 'signgate-winwork-'));
    // The add-in's output in a folder with spaces and non-ASCII letters, on Z: and on C:.
    cpSync(NET48, join(work, FOLDER, 'bin'), { recursive: true });
    copyFileSync(KEY, join(work, '12345_public.snk'));
    workC = join(wine.driveC, 'work');
    cpSync(join(work), workC, { recursive: true });
    // A path of more than 260 characters.
    const long = join(work, ...Array.from({ length: 5 }, (_, i) => `a-rather-long-folder-name-for-windows-path-limits-${i}`));
    mkdirSync(long, { recursive: true });
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(long, 'LongAddin.dll'));
    expect(zPath(long).length).toBeGreaterThan(260);
    // A device name, and two files whose names differ only in case.
    mkdirSync(join(work, 'devices'));
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(work, 'devices', 'CON.dll'));
    mkdirSync(join(work, 'cases'));
    copyFileSync(join(NET48, 'SampleAddin.dll'), join(work, 'cases', 'CaseAddin.dll'));
    copyFileSync(join(NET48, 'SampleAddin.Helpers.dll'), join(work, 'cases', 'caseaddin.DLL'));
    // A config written on Windows: BOM, CRLF, a `\` glob.
    mkdirSync(join(work, 'configured'));
    cpSync(NET48, join(work, 'configured', 'bin', 'Release'), { recursive: true });
    copyFileSync(KEY, join(work, 'configured', '12345_public.snk'));
    writeFileSync(join(work, 'configured', 'signgate.config.json'), `\uFEFF{\r\n  "vendor": "Contoso",\r\n  "keys": ["12345_public.snk"],\r\n  "paths": ["bin\\\\Release\\\\**\\\\*.dll"]\r\n}\r\n`);
    // Signed on Linux with the key pair (as the service signs), verified on both.
    mkdirSync(join(work, 'signed'));
    for (const name of ['SampleAddin.dll', 'SampleAddin.Helpers.dll']) {
      const r = runCli(['resign', join(NET48, name), '--key-pair', KEY_PAIR, '-o', join(work, 'signed', name)]);
      expect(r.status, r.stderr).toBe(0);
    }
  }, 300_000);
  afterAll(async () => {
    await wine?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Runs the same command on Linux (POSIX paths) and under Wine (Windows paths) in `cwd`; both JSON reports. */
  const both = async (cwd: string, linuxArgs: string[], windowsArgs: string[]) => {
    const linux = runCli(linuxArgs, { cwd });
    const windows = await wine.run(windowsArgs, cwd);
    return { linux, windows };
  };
  const checkArgs = ['--vendor', 'Contoso', '--key', '12345_public.snk', '--format', 'json'];

  test('check, a Z:\\ path with spaces and non-ASCII letters: the same JSON as on Linux', async () => {
    const { linux, windows } = await both(work, ['check', join(work, FOLDER, 'bin'), ...checkArgs], ['check', zPath(join(work, FOLDER, 'bin')), ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
    expect(parse(linux).summary.files).toBe(3);
  }, 120_000);

  test('check, a C:\\ path: the same JSON as on Linux', async () => {
    const { linux, windows } = await both(workC, ['check', join(workC, FOLDER, 'bin'), ...checkArgs], ['check', `C:\\work\\${FOLDER}\\bin`, ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
  }, 120_000);

  test('check, the folder and a file named in another case than on disk: the same verdicts', async () => {
    const upper = zPath(join(work, FOLDER.toUpperCase(), 'BIN'));
    const linux = runCli(['check', join(work, FOLDER, 'bin'), ...checkArgs], { cwd: work });
    const windows = await wine.run(['check', upper, ...checkArgs], work);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows).summary).toEqual(parse(linux).summary);
    expect(ruleIds(parse(windows))).toEqual(ruleIds(parse(linux)));
    const file = await wine.run(['check', zPath(join(work, FOLDER, 'bin', 'SAMPLEADDIN.DLL')), ...checkArgs], work);
    expect(file.status, file.stderr).toBe(0);
    expect(parse(file).summary.files).toBe(1);
  }, 120_000);

  test('check, a path longer than 260 characters: the same JSON as on Linux', async () => {
    const long = join(work, ...Array.from({ length: 5 }, (_, i) => `a-rather-long-folder-name-for-windows-path-limits-${i}`));
    const { linux, windows } = await both(work, ['check', long, ...checkArgs], ['check', zPath(long), ...checkArgs]);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
  }, 120_000);

  test('check, CON.dll among the inputs: SG505 on both, the same JSON', async () => {
    const { linux, windows } = await both(work, ['check', join(work, 'devices'), ...checkArgs], ['check', zPath(join(work, 'devices')), ...checkArgs]);
    expect(linux.status).toBe(1);
    expect(windows.status, windows.stderr).toBe(1);
    expect(ruleIds(parse(windows))).toContain('SG505');
    expect(parse(windows)).toEqual(parse(linux));
  }, 120_000);

  test('check, two files whose names differ only in case: both checked and SG502 on Windows as on Linux', async () => {
    const { linux, windows } = await both(work, ['check', join(work, 'cases'), ...checkArgs], ['check', zPath(join(work, 'cases')), ...checkArgs]);
    expect(linux.status).toBe(1);
    expect(windows.status, windows.stderr).toBe(1);
    expect(parse(windows).summary.files).toBe(2);
    expect(ruleIds(parse(windows))).toContain('SG502');
    expect(parse(windows)).toEqual(parse(linux));
  }, 120_000);

  test('check from signgate.config.json with a BOM, CRLF and a `\\` glob: the same JSON as on Linux', async () => {
    const cwd = join(work, 'configured');
    const { linux, windows } = await both(cwd, ['check', '--format', 'json'], ['check', '--format', 'json']);
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(parse(windows)).toEqual(parse(linux));
    expect(parse(linux).summary.files).toBe(3);
  }, 120_000);

  test('verify the files signed on Linux: valid, the same JSON', async () => {
    const signed = join(work, 'signed');
    const { linux, windows } = await both(work, ['verify', signed, '--key', '12345_public.snk', '--json'], ['verify', zPath(signed), '--key', '12345_public.snk', '--json']);
    expect(linux.status, linux.stderr).toBe(0);
    expect(windows.status, windows.stderr).toBe(0);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
  }, 120_000);

  test('audit of the signed release: the same JSON as on Linux', async () => {
    const signed = join(work, 'signed');
    const args = (folder: string) => ['audit', folder, '--vendor', 'Contoso', '--key', '12345_public.snk', '--format', 'json', '--no-timestamp'];
    // The job ledger the audit reads sits where each platform keeps it: the same folder for both here.
    const cache = join(work, 'cache');
    const linux = runCli(args(signed), { cwd: work, env: { SIGNGATE_CACHE_DIR: cache } });
    const windows = await wine.run(args(zPath(signed)), work, { SIGNGATE_CACHE_DIR: zPath(cache) });
    expect(windows.status, windows.stderr).toBe(linux.status);
    expect(JSON.parse(windows.stdout)).toEqual(JSON.parse(linux.stdout));
  }, 120_000);
});
