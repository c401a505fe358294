// esbuild plugins shared by the bundled command line (scripts/bundle-cli.js) and the one-file executables
// (scripts/build-sea.js). Each changes when a dependency starts, never what it does.
import { basename, dirname } from 'node:path';

/**
 * string-width (three copies, imported by yargs, cliui and wrap-ansi) builds an `Intl.Segmenter` and compiles
 * Unicode property patterns (`/^\p{RGI_Emoji}$/v`) when it is loaded: ICU's data, 15-25 ms of every start, for a
 * width that only `--help` and a wrapped message ask for. In the bundle each import of it becomes a function that
 * loads the real module (bundled, evaluated on first call) when it is first called.
 */
export const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(build) {
    build.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.kind !== 'import-statement' || args.pluginData === 'lazy-string-width') return undefined;
      const real = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'lazy-string-width' });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `export default function stringWidth(text, options) { return require(${JSON.stringify(`./${basename(args.path)}`)}).default(text, options); }`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * pe-library declares no `"sideEffects": false`, so a bundle keeps every module its index imports (NtExecutable,
 * its resource editor, the checksum: about 40 KB compiled at each start) although src/pe reads headers through
 * `Format` only. Its modules only define classes and functions: the bundle may drop those nobody uses.
 */
export const peLibraryWithoutSideEffects = {
  name: 'pe-library-without-side-effects',
  setup(build) {
    build.onResolve({ filter: /^(pe-library$|\.)/ }, async (args) => {
      if (args.pluginData === 'pe-library' || (args.path !== 'pe-library' && !/[\\/]node_modules[\\/]pe-library[\\/]/.test(args.importer))) return undefined;
      const real = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'pe-library' });
      if (real.errors.length > 0) return { errors: real.errors };
      return { ...real, sideEffects: false };
    });
  },
};
