// Inputs are told apart by what they are, not by their names: two files whose names differ only in case are
// two inputs (and SG502 says they collide as upload names), on Linux and with Windows' own rules (the platform
// reported as win32, as the one-file executable sees it); one file named twice (a link, `..`) is one input.
// Reserved Windows device names in the upload set are SG505, the same in every report format.
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { windowsDeviceName } from '../../src/core/windows-names.js';
import { expandInputs } from '../../src/workflows/input-paths.js';
import { fixturePath, runCli } from '../helpers/fixtures.js';

const ADDIN = fixturePath('addin/SampleAddin.dll');
const HELPER = fixturePath('addin/SampleAddin.Helpers.dll');
const KEY = fixturePath('test-keys/12345_public.snk');
const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;

/** Runs `body` with process.platform reporting win32, as Node does on Windows. */
async function asWindows<T>(body: () => Promise<T>): Promise<T> {
  Object.defineProperty(process, 'platform', { ...platform, value: 'win32' });
  try {
    return await body();
  } finally {
    Object.defineProperty(process, 'platform', platform);
  }
}

interface Finding {
  ruleId: string;
  message: string;
}
interface Report {
  files: { findings: Finding[] }[];
  uploadSet: { findings: Finding[] };
}
/** Every finding of a JSON report: a set rule's finding is listed under the file it names. */
const findings = (r: Report) => [...r.files.flatMap((f) => f.findings), ...r.uploadSet.findings];

afterEach(() => Object.defineProperty(process, 'platform', platform));

describe('inputs by identity', () => {
  const caseFolder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-case-'));
    copyFileSync(ADDIN, join(dir, 'CaseAddin.dll'));
    copyFileSync(HELPER, join(dir, 'caseaddin.DLL'));
    return dir;
  };

  test.each([
    ['linux', false],
    ['win32', true],
  ])('two files that differ only in case are two inputs (%s)', async (_name, windows) => {
    const dir = caseFolder();
    const run = () => expandInputs([dir], dir);
    const files = windows ? await asWindows(run) : await run();
    expect(files.map((f) => f.displayPath).sort()).toEqual(['CaseAddin.dll', 'caseaddin.DLL']);
  });

  test('check on such a folder: both files checked, SG502 for the colliding upload names, exit 1', () => {
    const dir = caseFolder();
    const r = runCli(['check', dir, '--vendor', 'Contoso', '--key', KEY, '--format', 'json']);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.files).toHaveLength(2);
    expect(findings(report).map((f) => f.ruleId)).toContain('SG502');
    expect(r.status).toBe(1);
  });

  test.each([
    ['linux', false],
    ['win32', true],
  ])('one file named twice (a symbolic link, "..") is one input; a hard link is a name of its own (%s)', async (_name, windows) => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-same-'));
    mkdirSync(join(dir, 'sub'));
    copyFileSync(ADDIN, join(dir, 'Addin.dll'));
    symlinkSync(join(dir, 'Addin.dll'), join(dir, 'sub', 'Link.dll'));
    linkSync(join(dir, 'Addin.dll'), join(dir, 'sub', 'Hard.dll'));
    const run = () =>
      expandInputs([join(dir, 'Addin.dll'), join(dir, 'sub', '..', 'Addin.dll'), join(dir, 'sub', 'Link.dll'), join(dir, 'sub', 'Hard.dll')], dir);
    const files = windows ? await asWindows(run) : await run();
    // The hard link is another name in the output folder: uploaded and returned under that name.
    expect(files.map((f) => f.displayPath)).toEqual(['Addin.dll', 'sub/Hard.dll']);
    expect(files[0]!.explicit).toBe(true);
  });
  test('a folder named through a link, and a linked file inside it, are the same inputs as the folder and the file themselves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-same-'));
    mkdirSync(join(dir, 'real', 'sub'), { recursive: true });
    mkdirSync(join(dir, 'outside'));
    copyFileSync(ADDIN, join(dir, 'real', 'sub', 'Addin.dll'));
    copyFileSync(ADDIN, join(dir, 'outside', 'Other.dll'));
    symlinkSync(join(dir, 'real'), join(dir, 'via-link'));
    symlinkSync(join(dir, 'outside', 'Other.dll'), join(dir, 'real', 'Linked.dll'));
    const files = await expandInputs([join(dir, 'via-link'), join(dir, 'real'), join(dir, 'real', 'sub', 'Addin.dll'), join(dir, 'outside', 'Other.dll')], dir);
    // Each file is shown by the name it was first found by; the folder itself and the files named add nothing.
    expect(files.map((f) => [f.displayPath, f.explicit])).toEqual([
      ['via-link/Linked.dll', true],
      ['via-link/sub/Addin.dll', true],
    ]);
  });
});

describe('SG505 reserved-device-name', () => {
  test.each([
    ['CON.dll', 'CON'],
    ['con', 'CON'],
    ['Nul.txt', 'NUL'],
    ['aux.', 'AUX'],
    ['COM1.dll', 'COM1'],
    ['lpt9.exe', 'LPT9'],
    ['PRN .dll', 'PRN'],
    ['CON.tar.gz', 'CON'],
  ])('%s is the device %s', (name, device) => {
    expect(windowsDeviceName(name)).toBe(device);
  });

  test.each([['CONSOLE.dll'], ['Contoso.dll'], ['COM10.dll'], ['NULL.dll'], ['LPT.dll'], ['xCON.dll']])('%s is no device', (name) => {
    expect(windowsDeviceName(name)).toBeUndefined();
  });

  test('a file CON.dll and a folder AUX/ in the upload set: one finding each, in every report format', () => {
    const dir = mkdtempSync(join(tmpdir(), 'signgate-device-'));
    copyFileSync(ADDIN, join(dir, 'CON.dll'));
    mkdirSync(join(dir, 'aux'));
    copyFileSync(HELPER, join(dir, 'aux', 'Helper.dll'));
    const json = runCli(['check', dir, '--root', dir, '--vendor', 'Contoso', '--key', KEY, '--format', 'json']);
    const found = findings(JSON.parse(json.stdout) as Report)
      .filter((f) => f.ruleId === 'SG505')
      .map((f) => f.message);
    expect(found).toEqual([
      'CON.dll: the file name is the Windows device name CON; Windows opens the device, not a file, whatever the case or extension',
      'aux/Helper.dll: the folder "aux" is the Windows device name AUX; Windows opens the device, not a file, whatever the case or extension',
    ]);
    expect(json.status).toBe(1);
    for (const format of ['text', 'sarif', 'junit', 'msbuild', 'github']) {
      const r = runCli(['check', dir, '--root', dir, '--vendor', 'Contoso', '--key', KEY, '--format', format]);
      expect(r.status, `${format}: ${r.stderr}`).toBe(1);
      expect(r.stdout.match(/SG505/g)?.length ?? 0, format).toBeGreaterThanOrEqual(2);
    }
  });
});
