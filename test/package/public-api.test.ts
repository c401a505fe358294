// The public API is the four entries of package.json "exports" and nothing else: `signgate` (what the commands do,
// as functions), `signgate/reader`, `signgate/record` and `signgate/server` (docs/api.md says what each is for).
// The names each entry exports (values and types, read from its source by the TypeScript checker) are listed in
// test/package/public-api.json, so that the surface changes only on purpose: a name added, removed or moved between
// entries fails here until the list says so; the examples of docs/api.md import each name from its entry. Unused
// exports inside src/ are knip's (knip.json, `npm run knip`).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../helpers/fixtures.js';

interface EntrySurface {
  /** Names that exist at run time (functions, classes, constants). */
  values: string[];
  /** Names that are types only (interfaces, type aliases, `export type`). */
  types: string[];
}

const listFile = join(repoRoot, 'test', 'package', 'public-api.json');
const listed = JSON.parse(readFileSync(listFile, 'utf8')) as Record<string, EntrySurface>;
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, string | { types: string; default: string }>;
};
const entries = Object.entries(pkg.exports).filter((e): e is [string, { types: string; default: string }] => typeof e[1] !== 'string');

/** dist/x.js -> src/x.ts, as tsconfig.json's rootDir and outDir map them. */
const sourceOf = (built: string) => join(repoRoot, built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));

/** The names a source file exports, values and types apart, through every `export … from` to where each is declared. */
function surfaces(files: readonly string[]): Map<string, EntrySurface> {
  const program = ts.createProgram([...files], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: ['node'],
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const typeOnly = (s: ts.Symbol) =>
    (s.declarations ?? []).some((d) => (ts.isExportSpecifier(d) && (d.isTypeOnly || d.parent.parent.isTypeOnly)) || ts.isTypeOnlyImportOrExportDeclaration(d));
  const out = new Map<string, EntrySurface>();
  for (const file of files) {
    const source = program.getSourceFile(file);
    if (!source) throw new Error(`${file} is not in the program`);
    const module = checker.getSymbolAtLocation(source)!;
    const surface: EntrySurface = { values: [], types: [] };
    for (const s of checker.getExportsOfModule(module)) {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      const value = (target.flags & ts.SymbolFlags.Value) !== 0 && !typeOnly(s);
      (value ? surface.values : surface.types).push(s.name);
    }
    surface.values.sort();
    surface.types.sort();
    out.set(file, surface);
  }
  return out;
}

describe('the public API', () => {
  let actual: Map<string, EntrySurface>;
  beforeAll(() => {
    const found = surfaces(entries.map(([, e]) => sourceOf(e.default)));
    actual = new Map(entries.map(([name, e]) => [name, found.get(sourceOf(e.default))!]));
  });

  test('package.json "exports" has the entries the list has, and main/types are the main entry', () => {
    expect(entries.map(([name]) => name).sort()).toEqual(Object.keys(listed).sort());
    expect(pkg.exports['./package.json']).toBe('./package.json');
    expect(pkg.main).toBe((pkg.exports['.'] as { default: string }).default);
    expect(pkg.types).toBe((pkg.exports['.'] as { types: string }).types);
  });

  test.each(Object.keys(listed))('%s exports the names test/package/public-api.json lists (change the list when the change is meant)', (name) => {
    expect(actual.get(name)).toEqual(listed[name]);
  });

  test('no name is exported by two entries (each name has one home)', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const [entry, s] of actual) {
      for (const n of [...s.values, ...s.types]) {
        if (seen.has(n)) twice.push(`${n}: ${seen.get(n)} and ${entry}`);
        else seen.set(n, entry);
      }
    }
    expect(twice).toEqual([]);
  });

  test("the process's helpers are no API: pools, thresholds, heap and V8 settings, the pipeline's steps", () => {
    const all = [...actual.values()].flatMap((s) => [...s.values, ...s.types]);
    const helpers = all.filter((n) => /heap|idleCores|threads?$|pool|threshold|v8|garbage|inRounds|pooled|^prepare|^runCheck|^buildAudit/i.test(n));
    expect(helpers).toEqual([]);
  });
});

test("docs/api.md's examples import each name from the entry that exports it", () => {
  const text = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8');
  const wrong: string[] = [];
  let imports = 0;
  for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(signgate(?:\/[a-z]+)?)'/g)) {
    const entry = m[2] === 'signgate' ? '.' : `.${m[2]!.slice('signgate'.length)}`;
    const surface = listed[entry];
    for (const name of m[1]!
      .split(',')
      .map((n) => n.trim().replace(/^type\s+/, ''))
      .filter(Boolean)) {
      imports++;
      if (!surface || ![...surface.values, ...surface.types].includes(name)) wrong.push(`${name} from '${m[2]}'`);
    }
  }
  expect(imports).toBeGreaterThan(20);
  expect(wrong).toEqual([]);
});

describe('every entry of package.json "exports" is built, with its types', () => {
  test.each(entries)('%s', async (name, entry) => {
    const built = join(repoRoot, entry.default);
    const types = join(repoRoot, entry.types);
    expect(existsSync(built), `${entry.default} is missing: npm run build`).toBe(true);
    expect(existsSync(types), `${entry.types} is missing: npm run build`).toBe(true);
    expect(entry.types).toBe(entry.default.replace(/\.js$/, '.d.ts'));
    // What the built module has at run time is what its source exports as values.
    const module = (await import(pathToFileURL(built).href)) as Record<string, unknown>;
    expect(Object.keys(module).sort(), name).toEqual(listed[name]!.values);
  });
});
