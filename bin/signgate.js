#!/usr/bin/env node
// The signgate command. The code lives in dist/ (built by `npm install` / `npm run build`), the command line
// bundled in dist/cli-bundle/cli.cjs (scripts/bundle-cli.js).
import module from 'node:module';

// Node 22.1+ keeps compiled code of the modules it loads between runs (the unbundled modules of dist/ below).
module.enableCompileCache?.();

// A closed pipe (`signgate inspect … | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

/**
 * Where the compiled code of the bundle is kept between runs: a folder of this user's in the temporary folder
 * (as Node's own compile cache), used only when it is a folder of this user's that nobody else may write to.
 */
async function codeCacheFolder({ mkdirSync, lstatSync }, { join }, { tmpdir }) {
  const uid = process.getuid?.();
  const dir = join(tmpdir(), `signgate-compile-cache${uid === undefined ? '' : `-${uid}`}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    if (!stat.isDirectory() || (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0))) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Runs the bundled command line: one CommonJS script compiled with V8's code cache of an earlier run of the same
 * command (made after that run, so it holds every function the run compiled), written again when V8 refuses it
 * (another Node, other flags). A cache that cannot be read or written only costs the compilation.
 */
async function runBundle(file, argv) {
  const [fs, path, os, vm] = await Promise.all([import('node:fs'), import('node:path'), import('node:os'), import('node:vm')]);
  const text = fs.readFileSync(file, 'utf8');
  // The bundle's first line names its content (scripts/bundle-cli.js); V8 checks its version and flags itself.
  const content = /^\/\/ signgate bundle ([0-9a-f]{64})\n/.exec(text)?.[1];
  const dir = content && (await codeCacheFolder(fs, path, os));
  // One cache per command, made by a run of that command: a first `--help` does not leave `check` uncompiled.
  const command = argv.find((a) => !a.startsWith('-'));
  const cacheFile = dir && path.join(dir, `${content.slice(0, 32)}-${/^[a-z]{2,12}$/.test(command ?? '') ? command : 'other'}-${process.version}-${process.arch}.bin`);
  let cachedData;
  try {
    if (cacheFile) cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const source = `(function (exports, require, module, __filename, __dirname) {${text}\n})`;
  const script = new vm.Script(source, { filename: file, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const bundle = { exports: {} };
  script.runInThisContext()(bundle.exports, module.createRequire(file), bundle, file, path.dirname(file));
  const code = await bundle.exports.main(argv);
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) {
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(temporary, cacheFile);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  }
  return code;
}

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The one answer a build script asks for most: printed without loading the command line (yargs, chalk).
  const { VERSION } = await import('../dist/core/version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  // After a lone `tsc` (no `npm run build`) the bundle is older than the modules: those run, never a stale bundle.
  const { statSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const bundle = fileURLToPath(new URL('../dist/cli-bundle/cli.cjs', import.meta.url));
  const modules = new URL('../dist/cli/main.js', import.meta.url);
  let stat;
  try {
    stat = statSync(bundle);
    if (stat.mtimeMs < statSync(modules).mtimeMs) stat = undefined;
  } catch {
    stat = undefined;
  }
  if (stat) process.exitCode = await runBundle(bundle, process.argv.slice(2));
  else process.exitCode = await (await import(modules.href)).main(process.argv.slice(2));
}
