// The modules a source file names, the way the layer tests see them: TypeScript's own scan of the file (static
// imports, `export … from`, side-effect and type-only imports, `import()` and `require()`), plus the two ways a module
// names another at run time that no import shows: `createRequire(…)('…')` and a worker's `new URL('….js', import.meta.url)`
// (a URL of a file that is no module, such as package.json or a schema, is data, not an import).
import ts from 'typescript';

/** Every module specifier `text` names, in the order they appear, each once per mention. */
export function moduleSpecifiers(text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => ({ at: f.pos, spec: f.fileName }));
  for (const m of text.matchAll(/\bcreateRequire\([^()]*(?:\([^()]*\)[^()]*)*\)\s*\(\s*['"]([^'"]+)['"]/g)) found.push({ at: m.index!, spec: m[1]! });
  for (const m of text.matchAll(/\bnew\s+URL\(\s*['"](\.[^'"]+\.[cm]?[jt]s)['"]\s*,\s*import\.meta\.url\s*\)/g)) found.push({ at: m.index!, spec: m[1]! });
  return found.sort((a, b) => a.at - b.at).map((f) => f.spec);
}
