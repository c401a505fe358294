// The notes of a release, from CHANGELOG.md (Keep a Changelog, read with the keep-a-changelog package): the
// Unreleased section's changes, which the release workflow (.github/workflows/release.yml) publishes as the notes
// of the tag's release. A release whose Unreleased section is missing or empty is not made: exit 2 with what to do.
//   node scripts/release-notes.js <version> [--changelog CHANGELOG.md]   prints the notes (Markdown)
// A CHANGELOG.md saved on Windows (CRLF line ends, a byte-order mark) reads the same.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parser } from 'keep-a-changelog';

/** The kinds of change Keep a Changelog names, in its order. */
const KINDS = ['added', 'changed', 'deprecated', 'removed', 'fixed', 'security'];

/**
 * The notes of release `version` from the text of a CHANGELOG.md: a heading, then each kind of change of the
 * Unreleased section with its items.
 * @throws Error naming what is missing (no Unreleased section, no change in it, a kind Keep a Changelog has not)
 */
export function releaseNotes(text, version) {
  const markdown = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  // Said before the parser sees it: the package refuses such a heading with an error that names no line.
  const unknown = [...markdown.matchAll(/^### (.+)$/gm)].map((m) => m[1].trim()).filter((kind) => !KINDS.includes(kind.toLowerCase()));
  if (unknown.length) throw new Error(`CHANGELOG.md has "### ${unknown.join('", "### ')}", which Keep a Changelog has not (${KINDS.join(', ')})`);
  let changelog;
  try {
    changelog = parser(markdown);
  } catch (error) {
    throw new Error(`CHANGELOG.md does not read as Keep a Changelog (${error.message}): see https://keepachangelog.com/en/1.1.0/`, { cause: error });
  }
  const unreleased = changelog.releases.find((r) => r.version === undefined);
  if (!unreleased) throw new Error('CHANGELOG.md has no "## [Unreleased]" section: add one with what this release changes');
  const parts = KINDS.filter((kind) => unreleased.changes.get(kind)?.length).map(
    (kind) =>
      `### ${kind[0].toUpperCase()}${kind.slice(1)}\n\n${unreleased.changes
        .get(kind)
        .map((c) => `- ${c.title.trim().replace(/\n/g, '\n  ')}`)
        .join('\n')}`,
  );
  if (!parts.length) throw new Error('the Unreleased section of CHANGELOG.md lists no change: say what this release changes before it is made');
  return `## signgate ${version}\n\n${parts.join('\n\n')}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--changelog');
  const path = at === -1 ? 'CHANGELOG.md' : args[at + 1];
  const version = args.find((a, i) => !a.startsWith('--') && (at === -1 || i !== at + 1));
  if (!version || !path) {
    console.error('release-notes: usage: node scripts/release-notes.js <version> [--changelog CHANGELOG.md]');
    process.exit(2);
  }
  try {
    process.stdout.write(releaseNotes(readFileSync(path, 'utf8'), version));
  } catch (error) {
    console.error(`release-notes: ${path}: ${error.message}`);
    process.exit(2);
  }
}
