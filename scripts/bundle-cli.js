// Bundles the command line (dist/cli/main.js and what it imports of ours and of yargs, chalk and pe-library)
// into a few ES module files in dist/cli-bundle/, which bin/signgate.js loads. Node resolves, reads and compiles
// each module file on its own: about 220 of them made up half of a `signgate check` of one add-in.
// Dynamic imports stay separate chunks, loaded when a command needs them (the service, the audit's HTML, ...).
// The other dependencies (fastify, the AWS SDK, pg, piscina, ajv, asn1js, pkijs, ...) stay in node_modules, loaded
// as before: they read files beside their code, or load lazily through require.
// Worker threads load the unbundled modules of dist/ (src/core/worker-module.ts).
//
//   npm run build   (tsc, then this script)
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { lazyStringWidth, peLibraryWithoutSideEffects } from './bundle-plugins.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The dependencies bundled: those the command line loads at every start. */
const BUNDLED = new Set(['yargs', 'chalk', 'pe-library']);

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

export async function bundleCli() {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  // pkcs11js, an optional dependency, is a native addon: it is loaded from node_modules when a pkcs11: key is used.
  const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }).filter((name) => !BUNDLED.has(name)).flatMap((name) => [name, `${name}/*`]);
  const outdir = join(repoRoot, 'dist', 'cli-bundle');
  rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { main: join(repoRoot, 'dist', 'cli', 'main.js') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node 20 knows the RegExp v flag; esbuild's table does not, and would build string-width's /…/v patterns
    // with new RegExp() at load (compiled at once: 10 ms for \p{RGI_Emoji}) instead of leaving them literals
    // (compiled on first use).
    supported: { 'regexp-set-notation': true },
    outdir,
    external,
    // The bundled CommonJS parts of yargs' dependencies call require() for Node's own modules.
    banner: { js: "import { createRequire as __signgateCreateRequire } from 'node:module'; const require = __signgateCreateRequire(import.meta.url);" },
    legalComments: 'eof',
    logLevel: 'silent',
    plugins: [lazyStringWidth, yargsLocales, peLibraryWithoutSideEffects],
  });
  if (result.warnings.length > 0) throw new Error(`esbuild warned:\n${(await esbuild.formatMessages(result.warnings, { kind: 'warning' })).join('\n')}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bundleCli();
