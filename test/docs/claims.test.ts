// What the documentation says of signgate itself stays true: a rule that is off unless asked for is not described as
// reported by default; the install notes name every runtime dependency with an install script (from the lockfile);
// the README sets up a package source for the solution, not for every restore on the machine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { rules } from '../../src/rules/index.js';
import { repoRoot } from '../helpers/fixtures.js';
import { fences } from '../helpers/markdown.js';

const read = (file: string) => readFileSync(join(repoRoot, file), 'utf8');

/** The paragraphs and list items of a Markdown text, code blocks left out. */
function passages(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const code = fences(lines);
  const prose = lines.map((l, i) => (code.some((f) => f.open <= i && i <= f.close) ? '' : l));
  return prose
    .join('\n')
    .split(/\n\s*\n|\n(?=\s*[-*] )/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

describe('docs/check.md and the rules that are off unless asked for', () => {
  const off = rules.filter((r) => r.enabledByDefault === false);

  test('there is such a rule (SG801)', () => expect(off.map((r) => r.id)).toContain('SG801'));

  test.each(off.map((r) => [r.id, r.name]))('every passage that names %s (%s) says it is reported when asked for', (id, name) => {
    const naming = passages(read('docs/check.md')).filter((p) => p.includes(id) || p.includes(name));
    expect(naming.length).toBeGreaterThan(0);
    for (const p of naming) expect(p, p).toMatch(/\basked\b/);
  });
});

describe('docs/msbuild.md on install scripts', () => {
  test('names every runtime dependency that has an install script, and claims none has none', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean; dev?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([path, p]) => path.startsWith('node_modules/') && p.hasInstallScript && !p.dev)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('pkcs11js');
    const doc = read('docs/msbuild.md');
    for (const name of withScripts) expect(doc).toContain(`\`${name}\``);
    expect(doc).not.toMatch(/runtime dependencies have none/);
    expect(doc).toContain(`npm install-scripts approve ${withScripts[0]}`);
  });
});

describe('README: the local NuGet source', () => {
  test('is set up for the solution (nuget.config), never with a bare `dotnet nuget add source` that writes the user-wide config', () => {
    const readme = read('README.md');
    const lines = readme.split(/\r?\n/);
    const code = fences(lines).flatMap((f) => lines.slice(f.open + 1, f.close));
    for (const line of code.filter((l) => /dotnet nuget add source/.test(l))) expect(line).toContain('--configfile');
    expect(readme).toMatch(/<add key="signgate-local" value="[^"]+" \/>/);
  });
});
