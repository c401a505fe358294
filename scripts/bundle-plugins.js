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

/**
 * yargs' platform shim loads Node's `assert` (3 ms of built-in modules at each start) for its internal
 * consistency checks, which hold in a run that goes well: in the bundle each check loads `assert` only when it
 * fails, to throw the same AssertionError. `locales`, when given, is the expression that replaces the folder of
 * yargs' message translations (`resolve(__dirname, '../../../locales')`, evaluated at load).
 * @param {string | undefined} locales
 */
export function yargsShim(locales) {
  return {
    name: 'yargs-shim',
    setup(build) {
      build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        let text = await readFile(args.path, 'utf8');
        const edits = [
          ["import { notStrictEqual, strictEqual } from 'assert'\n", ''],
          [
            '    notStrictEqual,\n    strictEqual\n',
            // assert.notStrictEqual fails when Object.is(actual, expected), strictEqual when not.
            "    notStrictEqual: (actual, expected, message) => { if (Object.is(actual, expected)) require('node:assert').notStrictEqual(actual, expected, message); },\n" +
              "    strictEqual: (actual, expected, message) => { if (!Object.is(actual, expected)) require('node:assert').strictEqual(actual, expected, message); }\n",
          ],
        ];
        if (locales) edits.push(["directory: resolve(__dirname, '../../../locales')", `directory: ${locales}`]);
        for (const [from, to] of edits) {
          if (!text.includes(from))
            return {
              errors: [{ text: `${args.path}: yargs' platform shim no longer has ${JSON.stringify(from)}; update yargsShim (scripts/bundle-plugins.js)` }],
            };
          text = text.replace(from, to);
        }
        return { contents: text, loader: 'js', resolveDir: dirname(args.path) };
      });
      // yargs() sets a version option of its own before src/cli/main.ts states ours (`.version(VERSION)`, which
      // replaces it): a guess from the first package.json at or above the shim's `mainFilename` (the folder above
      // node_modules; where the script's path has none, as in a checkout or an executable, the working folder).
      // It lists each folder up to the root, and where none has a package.json it loads Node's `assert` to throw
      // and catch: 3 ms of each `check` in a build (MSBuild runs it in the project folder), for a value that is
      // thrown away. The factory no longer makes the guess.
      build.onLoad({ filter: /[\\/]yargs[\\/]build[\\/]lib[\\/]yargs-factory\.js$/ }, async (args) => {
        const { readFile } = await import('node:fs/promises');
        const text = await readFile(args.path, 'utf8');
        const from = '        yargs.help();\n        yargs.version();\n';
        if (!text.includes(from))
          return { errors: [{ text: `${args.path}: yargs' factory no longer has ${JSON.stringify(from)}; update yargsShim (scripts/bundle-plugins.js)` }] };
        return { contents: text.replace(from, '        yargs.help();\n'), loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

/**
 * chalk works out the terminal's colours when it is loaded (its vendored supports-color: node:tty, and with it
 * node:net and the stream modules, and a look at the environment) for its default instances `chalk` and
 * `chalkStderr`, which we never use: the command line makes its own `new Chalk({ level })` (src/cli/output.ts).
 * In the bundle that module answers "no colours" without looking; a module of ours that imports chalk's default
 * instance, `chalkStderr` or `supportsColor` stops the build.
 */
export const chalkWithoutTerminalProbe = {
  name: 'chalk-without-terminal-probe',
  setup(build) {
    build.onResolve({ filter: /^#supports-color$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]chalk[\\/]/.test(args.importer)) return undefined;
      return { path: 'chalk-supports-color', namespace: 'chalk-without-terminal-probe' };
    });
    build.onLoad({ filter: /.*/, namespace: 'chalk-without-terminal-probe' }, () => ({
      contents: 'export default { stdout: false, stderr: false };',
      loader: 'js',
    }));
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/, namespace: 'file' }, async (args) => {
      if (/[\\/]node_modules[\\/]/.test(args.path)) return undefined;
      const { readFile } = await import('node:fs/promises');
      const text = await readFile(args.path, 'utf8');
      for (const m of text.matchAll(/import\s+([^;]*?)\s+from\s+'chalk'/g)) {
        if (!/^\{[^}]*\}$/.test(m[1]) || /\b(chalkStderr|supportsColor|supportsColorStderr|default)\b/.test(m[1])) {
          return {
            errors: [
              {
                text: `${args.path}: ${m[0]}: the bundle's chalk has no default instances (scripts/bundle-plugins.js, chalkWithoutTerminalProbe); make a new Chalk({ level })`,
              },
            ],
          };
        }
      }
      return undefined;
    });
  },
};
