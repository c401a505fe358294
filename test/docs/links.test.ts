// Every relative link of README.md and docs/*.md leads to a file of the repository, and a link to a heading
// (`page.md#heading`) to a heading that page has, with GitHub's anchors. Text moves between the README and the
// pages of docs/; a link left pointing at the old place fails here.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';
import { fences } from '../helpers/markdown.js';

/** The lines of a Markdown text outside fenced code blocks. */
function prose(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const all = fences(lines);
  return lines.filter((_, i) => !all.some((f) => f.open <= i && i <= f.close));
}

/** GitHub's anchors for the headings of a Markdown text (lower case, punctuation dropped, spaces as dashes, -1 for a repeat). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const line of prose(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const slug = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    result.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return result;
}

test('anchors are made as GitHub makes them', () => {
  expect([...anchors('# A `b` c\n## Keys in a PKCS#11 token\n## SG501\n## SG501\n```sh\n# not a heading\n```\n')]).toEqual([
    'a-b-c',
    'keys-in-a-pkcs11-token',
    'sg501',
    'sg501-1',
  ]);
});

test('every relative link of README.md and docs/*.md leads somewhere', () => {
  const files = [
    'README.md',
    ...readdirSync(join(repoRoot, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(repoRoot, file), 'utf8');
    prose(text).forEach((line) => {
      for (const m of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = path === '' ? join(repoRoot, file) : join(repoRoot, dirname(file), decodeURIComponent(path));
        if (!existsSync(resolved)) {
          broken.push(`${file}: ${target} (no ${relative(repoRoot, resolved)})`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
          broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(repoRoot, resolved)})`);
        }
      }
    });
  }
  expect(broken).toEqual([]);
});
