// The scripts (benchmarks, the executable's build) run the built library from dist/, outside the type checker and
// the linter: every name they take from a dist/ module must still be exported by it, or a benchmark breaks only on
// the day someone runs it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

const scripts = join(repoRoot, 'scripts');
const dist = join(repoRoot, 'dist');

/** `import { a, b as c } from '../dist/x.js'`, `const { a } = await import('../dist/x.js')`, `await dist('x.js')`, `await import(dist('x.js'))`. */
const FORMS = [
  /import\s*\{([^}]*)\}\s*from\s*['"](?:\.\.?\/)dist\/([^'"]+)['"]/g,
  /const\s*\{([^}]*)\}\s*=\s*await\s+import\(\s*['"](?:\.\.?\/)dist\/([^'"]+)['"]\s*\)/g,
  /const\s*\{([^}]*)\}\s*=\s*await\s+(?:dist|import\(\s*dist)\(\s*['"]([^'"]+)['"]\s*\)/g,
];

function distImports(): { script: string; module: string; name: string }[] {
  const found: { script: string; module: string; name: string }[] = [];
  for (const script of readdirSync(scripts).filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(scripts, script), 'utf8');
    for (const form of FORMS) {
      for (const m of text.matchAll(form)) {
        for (const part of m[1]!.split(',')) {
          const name = part
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+|\s*:\s*/)[0]!
            .trim();
          if (name) found.push({ script, module: m[2]!, name });
        }
      }
    }
  }
  return found;
}

test('every name a script takes from dist/ is exported there', async () => {
  const imports = distImports();
  // Not vacuous: the benchmarks take the engine, the reader, the server and the CLI from dist/.
  expect(imports.length).toBeGreaterThan(20);
  expect(imports).toContainEqual({ script: 'bench.js', module: 'engine/index.js', name: 'runEngine' });
  const missing: string[] = [];
  const modules = new Map<string, Record<string, unknown>>();
  for (const { script, module, name } of imports) {
    if (!modules.has(module)) modules.set(module, (await import(pathToFileURL(join(dist, module)).href)) as Record<string, unknown>);
    if (!(name in modules.get(module)!)) missing.push(`scripts/${script}: ${name} from dist/${module}`);
  }
  expect(missing).toEqual([]);
});
