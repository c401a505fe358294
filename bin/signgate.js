#!/usr/bin/env node
// The signgate command. The code lives in dist/ (built by `npm install` / `npm run build`), the command line
// bundled in dist/cli-bundle/cli.cjs (scripts/bundle-cli.js).
//
// This file is CommonJS (bin/package.json): started as an ES module, Node 20 first sets up its ES module loader
// (resolver, fs/promises, readline), a tenth of a `check`'s start, for a script that needs none of it.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const module_ = require('node:module');

// Node 22.1+ keeps compiled code of the modules it loads between runs (the unbundled modules of dist/ below).
module_.enableCompileCache?.();

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
function codeCacheFolder() {
  const uid = process.getuid?.();
  const dir = path.join(require('node:os').tmpdir(), `signgate-compile-cache${uid === undefined ? '' : `-${uid}`}`);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory() || (uid !== undefined && (stat.uid !== uid || (stat.mode & 0o022) !== 0))) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** A code cache file: this line, the V8 flags the command set (space-separated), a line feed, V8's cached data. */
const CACHE_HEADER = 'signgate-code-cache 1';
/** The only flags a cache file may carry: the heap's pace, as src/runtime/heap.ts sets it. */
const CACHE_FLAG = /^--(?:semi-space-growth-factor|heap-growing-percent)=\d{1,3}$/;

/**
 * V8's cached data of a code cache file, after setting the flags it was made under; undefined for a file that is
 * not one (it is then made again).
 */
function readCodeCache(bytes, flagsAllowed) {
  const end = bytes.indexOf(10);
  const header = end < 0 ? '' : bytes.toString('latin1', 0, Math.min(end, 200));
  if (!header.startsWith(`${CACHE_HEADER} `) && header !== CACHE_HEADER) return undefined;
  const flags = header.slice(CACHE_HEADER.length).split(' ').filter(Boolean);
  if (!flags.every((f) => CACHE_FLAG.test(f)) || (flags.length > 0 && !flagsAllowed)) return undefined;
  if (flags.length > 0) {
    const v8 = require('node:v8');
    for (const flag of flags) v8.setFlagsFromString(flag);
  }
  return bytes.subarray(end + 1);
}

/**
 * Runs the bundled command line: one script, compiled with V8's code cache of an earlier run of the same command
 * (made after that run, so it holds every function the run compiled), written again when V8 refuses it (another
 * Node, other flags). The flags the command sets for itself are kept with the cache and set before the next
 * compilation, since V8 checks them. A cache that cannot be read or written only costs the compilation.
 * `text` is the script, ASCII and its own function expression (scripts/bundle-cli.js): read as latin1 it is V8's
 * one-byte string as it is, with no decoding and no copy into a wrapper.
 */
async function runBundle(file, argv, text) {
  const vm = require('node:vm');
  // The bundle's first line names its content (scripts/bundle-cli.js); V8 checks its version and flags itself.
  const content = /^\/\/ signgate bundle ([0-9a-f]{64})\n/.exec(text)?.[1];
  const dir = content && codeCacheFolder();
  // One cache per command, made by a run of that command: a first `--help` does not leave `check` uncompiled. The
  // command is the first argument; any other command line shares one cache, which carries no flags.
  const command = /^[a-z]{2,12}$/.test(argv[0] ?? '') ? argv[0] : 'other';
  const cacheFile = dir && path.join(dir, `${content.slice(0, 32)}-${command}-${process.version}-${process.arch}.bin`);
  let cachedData;
  try {
    if (cacheFile) cachedData = readCodeCache(fs.readFileSync(cacheFile), command !== 'other');
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(text, { filename: file, cachedData, importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
  const bundle = { exports: {} };
  script.runInThisContext()(bundle.exports, module_.createRequire(file), bundle, file, path.dirname(file));
  const code = await bundle.exports.main(argv);
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) {
    const temporary = `${cacheFile}.${process.pid}.tmp`;
    try {
      // The flags the command set (src/runtime/v8-flags.ts) head the cache: V8 accepts it only under the same flags.
      const flags = (globalThis[Symbol.for('signgate.v8Flags')] ?? []).filter((f) => CACHE_FLAG.test(f));
      fs.writeFileSync(temporary, Buffer.concat([Buffer.from(`${CACHE_HEADER} ${flags.join(' ')}\n`, 'latin1'), script.createCachedData()]), { mode: 0o600 });
      fs.renameSync(temporary, cacheFile);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  }
  return code;
}

/** How scripts/bundle-cli.js starts the bundle: its content hash, then the function that the rest of it is. */
const BUNDLE_START = /^\/\/ signgate bundle [0-9a-f]{64}\n\(function \(exports, require, module, __filename, __dirname\) \{/;

async function run(argv) {
  if (argv.length === 1 && argv[0] === '--version') {
    // The one answer a build script asks for most: the version of package.json (as dist/runtime/version.js reads
    // it), printed without loading the command line (yargs, chalk).
    process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version}\n`);
    return 0;
  }
  // After a lone `tsc` (no `npm run build`) the bundle is older than the modules: those run, never a stale bundle.
  const bundle = path.join(__dirname, '..', 'dist', 'cli-bundle', 'cli.cjs');
  const modules = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
  // A bundle of an earlier build, not written as its own function, is not run either.
  let text;
  try {
    if (fs.statSync(bundle).mtimeMs >= fs.statSync(modules).mtimeMs) text = fs.readFileSync(bundle, 'latin1');
  } catch {
    text = undefined;
  }
  if (text !== undefined && BUNDLE_START.test(text)) return runBundle(bundle, argv, text);
  return (await import(require('node:url').pathToFileURL(modules).href)).main(argv);
}

run(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
