// The report formats build hosts read, on SDK-built fixtures: `--format msbuild` (MSBuild's canonical diagnostic
// lines, checked with the same pattern MSBuild's Exec task applies) and `--format github` (workflow annotations).
import { describe, expect, test } from 'vitest';
import { formatFixForMsbuild } from '../../src/cli/commands/fix-command.js';
import type { FixResult } from '../../src/workflows/fix.js';
import { runCli } from '../helpers/fixtures.js';

const KEY = 'fixtures/test-keys/12345_public.snk';
const WRONG = 'fixtures/sdk/bin/wrong-turns';
const check = (format: string, ...args: string[]) => runCli(['check', '--vendor', 'Contoso', '--key', KEY, '--format', format, ...args]);

// The pattern of CanonicalError.cs in dotnet/msbuild (origin, subcategory, category, code, text), case-insensitive.
const CANONICAL =
  /^\s*(((?<origin>(((\d+>)?[a-zA-Z]?:[^:]*)|([^:]*))):)|())(?<subcategory>(()|([^:]*? )))(?<category>(error|warning))( \s*(?<code>[^: ]*))?\s*:(?<text>.*)$/i;

describe('--format msbuild', () => {
  const r = check(
    'msbuild',
    `${WRONG}/OtherOption`,
    `${WRONG}/VendorCopied`,
    `${WRONG}/NoAttribute`,
    '--max-upload-bytes',
    '100',
    '--rule',
    'loads-under-no-license=note',
  );
  const all = r.stdout.trimEnd().split('\n');
  // Asked for, the delay-signed net48 files also carry the SG801 note (they load under no license until signed):
  // MSBuild's Exec reads a "note" line as plain output, never as a diagnostic. The errors and warnings are the rest.
  const notes = all.filter((l) => / : note SG801: /.test(l));
  const lines = all.filter((l) => !notes.includes(l));

  test('notes are lines MSBuild does not read as diagnostics', () => {
    expect(notes.length).toBe(3);
    for (const l of notes) expect(l).not.toMatch(CANONICAL);
  });

  test('each finding is one canonical line: the file as origin, the category, the rule id as code', () => {
    expect(r.status).toBe(1);
    const parsed = lines.map((l) => l.match(CANONICAL)?.groups);
    expect(parsed.slice(0, -1).map((g) => g && [g.origin.trim(), g.category, g.code])).toEqual([
      [`${WRONG}/NoAttribute/WrongTurn.NoAttribute.dll`, 'error', 'SG301'],
      [`${WRONG}/OtherOption/WrongTurn.OtherOption.dll`, 'error', 'SG205'],
      [`${WRONG}/VendorCopied/Contoso.AddinApi.dll`, 'warning', 'SG501'],
      ['signgate', 'error', 'SG503'],
    ]);
    const wrongKey =
      'expected 5d004f218731cd20 (fixtures/test-keys/12345_public.snk) (wrong-key). Delay-sign it with the public key file of your license option: <SignAssembly>true</SignAssembly> <DelaySign>true</DelaySign> <AssemblyOriginatorKeyFile>fixtures/test-keys/12345_public.snk</AssemblyOriginatorKeyFile>.';
    expect(parsed[1]?.text).toContain('the assembly is delay-signed with another key: key token');
    expect(parsed[1]?.text).toContain(wrongKey);
  });

  test('the closing summary is not itself read as a diagnostic', () => {
    expect(lines.at(-1)).toBe('signgate check, 4 files, 3 need signing (1 pass, 2 fail), 3 errors, 1 warning, 3 notes');
    expect(lines.at(-1)).not.toMatch(CANONICAL);
  });

  test('a passing folder prints the summary alone, no diagnostic; asked for, its notes as written, colons kept', () => {
    const ok = check('msbuild', 'fixtures/sdk/bin/net48');
    expect(ok.status).toBe(0);
    expect(ok.stdout.trimEnd().split('\n')).toEqual(['signgate check, 3 files, 3 need signing (3 pass, 0 fail), 0 errors, 0 warnings, 0 notes']);
    const asked = check('msbuild', 'fixtures/sdk/bin/net48', '--rule', 'loads-under-no-license=note');
    const okLines = asked.stdout.trimEnd().split('\n');
    expect(okLines.at(-1)).toBe('signgate check, 3 files, 3 need signing (3 pass, 0 fail), 0 errors, 0 warnings, 3 notes');
    expect(okLines.slice(0, -1).every((l) => / : note SG801: /.test(l) && !CANONICAL.test(l))).toBe(true);
    expect(okLines[0]).toContain('runtime license: delay-signed, not signed by the service; developer license:');
  });
});

describe('--format github', () => {
  test('one annotation per finding with file and title; message lines and separators escaped', () => {
    const r = check('github', `${WRONG}/OtherOption`, `${WRONG}/VendorCopied`, '--max-upload-bytes', '100', '--rule', 'loads-under-no-license=note');
    expect(r.status).toBe(1);
    // Without the SG801 notices (asked for) of the delay-signed net48 files (::notice, one per file).
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('::notice ') || !l.includes('title=SG801 '));
    expect(r.stdout.split('\n').filter((l) => l.startsWith('::notice ')).length).toBe(2);
    expect(lines[0]).toMatch(
      /^::error file=fixtures\/sdk\/bin\/wrong-turns\/OtherOption\/WrongTurn\.OtherOption\.dll,title=SG205 wrong-key::the assembly is delay-signed with another key: key token [0-9a-f]{16}, expected 5d004f218731cd20 \(fixtures\/test-keys\/12345_public\.snk\)%0ADelay-sign it with the public key file of your license option: .*%0Ahttps:\/\/\S+\/docs\/rules\.md#sg205$/,
    );
    expect(lines[1]).toMatch(/^::warning file=[^,]+Contoso\.AddinApi\.dll,title=SG501 vendor-assembly-included::/);
    // The upload set has no file: a title only.
    expect(lines[2]).toMatch(/^::error title=SG503 upload-too-large::/);
    expect(lines.every((l) => !l.includes('\r'))).toBe(true);
    expect(lines.at(-1)).toMatch(/^signgate check: 3 files/);
  });
});

describe('in a build, cures and notes the build can act on', () => {
  test('SG401 names SigngateFixReferences and SigngateFixKey, not a command line that works on obj/', () => {
    const r = check('msbuild', `${WRONG}/UnsignedReference`);
    const sg401 = r.stdout.split('\n').filter((l) => / error SG401: /.test(l));
    expect(sg401.length).toBeGreaterThan(0);
    for (const l of sg401) {
      expect(l).toMatch(CANONICAL);
      expect(l).toContain('<SigngateFixReferences>true</SigngateFixReferences> and <SigngateFixKey>your-key.snk</SigngateFixKey>');
      expect(l).not.toContain('signgate fix ');
    }
    // Outside a build the command line stays the cure.
    expect(check('text', `${WRONG}/UnsignedReference`).stdout).toContain('signgate fix ');
  });

  test('what SigngateFixReferences could not rewrite is a message with a code per kind, never a warning', () => {
    const notes = [
      { kind: 'friend-without-key', message: 'InternalsVisibleTo("Markdig.Tests") names an assembly that is not strong-named here' },
      { kind: 'authenticode-removed', message: 'its Authenticode signature was removed' },
      { kind: 'baml', message: 'resource X.g.resources holds compiled XAML (BAML)' },
    ] as const;
    const result = {
      files: [{ path: 'obj/Markdig.dll', outcome: 'signed', changes: [], notes, writtenTo: 'obj/signgate-fixed/Markdig.dll' }],
      missing: [],
    } as unknown as FixResult;
    const lines = formatFixForMsbuild(result).split('\n');
    const noteLines = lines.filter((l) => l.includes(' : note SGB'));
    expect(noteLines.map((l) => /note (SGB\d+)/.exec(l)![1])).toEqual(['SGB008', 'SGB009', 'SGB010']);
    for (const l of lines) expect(l).not.toMatch(CANONICAL);
  });
});
