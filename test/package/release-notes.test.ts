// CHANGELOG.md (Keep a Changelog) and the release's notes: scripts/release-notes.js turns its Unreleased section into
// the notes the release workflow publishes, the same from a file saved on Windows, and refuses a release that says
// nothing (no Unreleased section, no change in it, a kind of change Keep a Changelog has not).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parser } from 'keep-a-changelog';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

const script = join(repoRoot, 'scripts', 'release-notes.js');
const changelog = readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8');
const notesOf = (text: string, version = '1.2.3') => {
  const path = join(mkdtempSync(join(tmpdir(), 'signgate-changelog-')), 'CHANGELOG.md');
  writeFileSync(path, text);
  return spawnSync(process.execPath, [script, version, '--changelog', path], { encoding: 'utf8' });
};

test("CHANGELOG.md is Keep a Changelog's: its title, an Unreleased section that lists changes, only the kinds it names", () => {
  const parsed = parser(changelog);
  expect(parsed.title).toBe('Changelog');
  const unreleased = parsed.releases.find((r) => r.version === undefined)!;
  expect(unreleased.isEmpty()).toBe(false);
  for (const [kind, changes] of unreleased.changes)
    if (changes.length) expect(['added', 'changed', 'deprecated', 'removed', 'fixed', 'security']).toContain(kind);
});

test('the notes are the Unreleased changes under the version, the same from CRLF and a byte-order mark (Notepad, PowerShell)', () => {
  const r = notesOf(changelog);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout.startsWith('## signgate 1.2.3\n\n### Added\n\n- ')).toBe(true);
  expect(r.stdout).toContain('`GET /readyz/api`');
  expect(r.stdout).not.toContain('[Unreleased]');
  const windows = notesOf(`\uFEFF${changelog.replace(/\n/g, '\r\n')}`);
  expect(windows.stdout).toBe(r.stdout);
});

test('a release that says nothing is refused, naming what is missing', () => {
  const cases: [string, RegExp][] = [
    ['# Changelog\n\n## [0.1.0] - 2026-01-01\n\n### Added\n\n- the first\n', /has no "## \[Unreleased\]" section/],
    ['# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-01-01\n\n### Added\n\n- the first\n', /lists no change/],
    ['# Changelog\n\n## [Unreleased]\n\n### Improved\n\n- something\n', /"### Improved", which Keep a Changelog has not/],
  ];
  for (const [text, said] of cases) {
    const r = notesOf(text);
    expect(r.status, text).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(said);
  }
});

test('the release workflow makes the notes before the tests and publishes them with the release', () => {
  const release = readFileSync(join(repoRoot, '.github', 'workflows', 'release.yml'), 'utf8');
  const version = release.slice(release.indexOf('  version:'), release.indexOf('  test-linux:'));
  expect(version).toContain('node scripts/release-notes.js "$VERSION" > release-notes.md');
  expect(release).toMatch(/gh release create "\$TAG" [^\n]*--notes-file release-notes\.md/);
  expect(release.slice(release.indexOf('  publish:'))).toMatch(/contents: write/);
});
