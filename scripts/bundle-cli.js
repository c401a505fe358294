// Bundles the command line (dist/cli/main.js, every command, and what they import of ours and of yargs, chalk and
// pe-library) into one CommonJS script, dist/cli-bundle/cli.cjs, which bin/signgate.js compiles with a code cache
// (V8's compiled code of the previous run, kept in the temporary folder): Node 20 has no compile cache of its own,
// and a `check` of one add-in spent a third of its time compiling the 610 KB of ES module chunks it loaded, and an
// eighth resolving and reading their 20 files. With the cache a start reads one file and compiles almost nothing.
// The other dependencies (fastify, the AWS SDK, pg, piscina, ajv, asn1js, pkijs, ...) stay in node_modules, loaded
// as before when a command needs them (require, or import() through the main context's loader).
// Worker threads load the unbundled modules of dist/ (src/core/worker-module.ts).
//
//   npm run build   (tsc, then this script)
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { lazyStringWidth, peLibraryWithoutSideEffects } from './bundle-plugins.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The dependencies bundled: those the command line loads at every start, and jose, the one ES-module-only package
 * the rest imports (the script is CommonJS: Node 20 would load it through require(esm), with a warning).
 */
const BUNDLED = new Set(['yargs', 'chalk', 'pe-library', 'jose']);

/**
 * yargs finds its message translations in `locales/` three folders above its platform shim's file; in a bundle
 * that is not where they are: they are found from yargs' own package.json, wherever npm installed it.
 */
const yargsLocales = {
  name: 'yargs-locales',
  setup(build) {
    build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const from = "directory: resolve(__dirname, '../../../locales')";
      if (!text.includes(from)) return { errors: [{ text: `${args.path}: yargs no longer names its locales as "${from}"; update scripts/bundle-cli.js` }] };
      return { contents: text.replace(from, "directory: resolve(dirname(require.resolve('yargs/package.json')), 'locales')"), loader: 'js' };
    });
  },
};

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
      build.onLoad({ filter: /.*/, namespace: 'dynamic-import-as-require' }, (args) => ({ contents: `module.exports = require(${JSON.stringify(args.path)});`, loader: 'js' }));
    },
  };
}

export async function bundleCli() {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  // pkcs11js, an optional dependency, is a native addon: it is loaded from node_modules when a pkcs11: key is used.
  const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }).filter((name) => !BUNDLED.has(name)).flatMap((name) => [name, `${name}/*`]);
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
    plugins: [dynamicImportAsRequire(external), lazyStringWidth, yargsLocales, peLibraryWithoutSideEffects],
  });
  if (result.warnings.length > 0) throw new Error(`esbuild warned:\n${(await esbuild.formatMessages(result.warnings, { kind: 'warning' })).join('\n')}`);
  // The first line names the script's content: bin/signgate.js keeps the compiled code under that name (V8 itself
  // only compares the length of the source), so a cache never serves another build.
  mkdirSync(outdir, { recursive: true });
  for (const file of result.outputFiles) {
    writeFileSync(file.path, `// signgate bundle ${createHash('sha256').update(file.contents).digest('hex')}\n${file.text}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleCli();
