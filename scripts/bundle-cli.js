// Bundles the command line (dist/cli/main.js, every command, and what they import of ours and of yargs, chalk and
// pe-library) into one CommonJS script, dist/cli-bundle/cli.cjs, which bin/signgate.js compiles with a code cache
// (V8's compiled code of the previous run, kept in the temporary folder): Node 20 has no compile cache of its own,
// and a `check` of one add-in spent a third of its time compiling the 610 KB of ES module chunks it loaded, and an
// eighth resolving and reading their 20 files. With the cache a start reads one file and compiles almost nothing.
// The other dependencies (fastify, the AWS SDK, pg, piscina, ajv, asn1js, pkijs, ...) stay in node_modules, loaded
// as before when a command needs them (require, or import() through the main context's loader).
// Worker threads load the unbundled modules of dist/ (src/runtime/worker-module.ts).
//
//   npm run build   (tsc, then this script)
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { chalkWithoutTerminalProbe, lazyStringWidth, peLibraryWithoutSideEffects, yargsShim } from './bundle-plugins.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The dependencies bundled: those the command line loads at every start, and jose, the one ES-module-only package
 * the rest imports (the script is CommonJS: Node 20 would load it through require(esm), with a warning).
 */
const BUNDLED = new Set(['yargs', 'chalk', 'pe-library', 'jose']);

/**
 * yargs finds its message translations in `locales/` three folders above its platform shim's file; in a bundle
 * that is not where they are: they are in the first node_modules/yargs above the bundle, as Node's lookup finds
 * it (a few stats: Node's own resolution of yargs/package.json, through its exports, cost 2-4 ms at each
 * start), else where Node resolves yargs (NODE_PATH, a global folder). Evaluated in yargs' platform shim, where
 * `__dirname` is the bundle's file, `require` the bundle's.
 */
const YARGS_LOCALES = `(() => {
    for (let dir = dirname(__dirname); ; dir = dirname(dir)) {
      const yargs = join(dir, 'node_modules', 'yargs');
      if (require('node:fs').existsSync(join(yargs, 'package.json'))) return join(yargs, 'locales');
      if (dirname(dir) === dir) return resolve(dirname(require.resolve('yargs/package.json')), 'locales');
    }
  })()`;

/**
 * `await import('glob')` of a package left in node_modules becomes a require of it (both are CommonJS packages):
 * a script compiled with a code cache cannot call import() (V8 drops the callback that Node gives it).
 */
function dynamicImportAsRequire(external) {
  return {
    name: 'dynamic-import-as-require',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind !== 'dynamic-import' || !external.includes(args.path)) return undefined;
        return { path: args.path, namespace: 'dynamic-import-as-require' };
      });
      build.onLoad({ filter: /.*/, namespace: 'dynamic-import-as-require' }, (args) => ({
        contents: `module.exports = require(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * `text` with each character that is not ASCII written as its \\u escape: the same value in a string, a regular
 * expression or an identifier. A template literal's raw text would change (String.raw), and so would a character
 * after a backslash: the build stops there.
 */
export function asciiOnly(text) {
  return text.replace(/[^\x00-\x7f]/g, (c, at) => {
    const line = text.slice(text.lastIndexOf('\n', at) + 1, text.indexOf('\n', at));
    // After a backslash (an identity escape, `\\é`) the escape would be read as `\\` and text.
    if (text[at - 1] === '\\' || (line.includes('`') && !/^\s*(\/\/|\*)/.test(line))) {
      throw new Error(`bundle-cli: a character that is not ASCII cannot be escaped safely (after a backslash, or beside a template literal):\n${line}`);
    }
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

export async function bundleCli() {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  // pkcs11js, an optional dependency, is a native addon: it is loaded from node_modules when a pkcs11: key is used.
  const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })
    .filter((name) => !BUNDLED.has(name))
    .flatMap((name) => [name, `${name}/*`]);
  const outdir = join(repoRoot, 'dist', 'cli-bundle');
  rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { cli: join(repoRoot, 'dist', 'cli', 'main.js') },
    bundle: true,
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    platform: 'node',
    target: 'node20',
    // Node 20 knows the RegExp v flag; esbuild's table does not, and would build string-width's /…/v patterns
    // with new RegExp() at load (compiled at once: 10 ms for \p{RGI_Emoji}) instead of leaving them literals
    // (compiled on first use).
    supported: { 'regexp-set-notation': true },
    outdir,
    external,
    // Our modules find files beside them from import.meta.url (../../schemas/…, ../package.json): the script is
    // in dist/cli-bundle/, as deep below the package as they are, so its own URL stands for theirs.
    define: { 'import.meta.url': '__signgateBundleUrl' },
    banner: { js: "var __signgateBundleUrl = require('node:url').pathToFileURL(__filename).href;" },
    legalComments: 'eof',
    logLevel: 'silent',
    write: false,
    plugins: [chalkWithoutTerminalProbe, dynamicImportAsRequire(external), lazyStringWidth, yargsShim(YARGS_LOCALES), peLibraryWithoutSideEffects],
  });
  if (result.warnings.length > 0) throw new Error(`esbuild warned:\n${(await esbuild.formatMessages(result.warnings, { kind: 'warning' })).join('\n')}`);
  // The first line names the script's content: bin/signgate.js keeps the compiled code under that name (V8 itself
  // only compares the length of the source), so a cache never serves another build. The script is the function
  // that CommonJS would wrap it in (bin/signgate.js compiles the file's text as it is, no copy into a wrapper),
  // and ASCII: read as latin1 it is V8's one-byte string, with no decoding (esbuild escapes what is not ASCII
  // in strings; what is left, in regular expressions and comments, is escaped here).
  mkdirSync(outdir, { recursive: true });
  for (const file of result.outputFiles) {
    const text = asciiOnly(file.text);
    const hash = createHash('sha256').update(text).digest('hex');
    writeFileSync(file.path, `// signgate bundle ${hash}\n(function (exports, require, module, __filename, __dirname) {${text}\n})`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleCli();
