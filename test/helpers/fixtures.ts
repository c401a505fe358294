// Shared test helpers: fixture bytes, Mono availability and running the built CLI.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readModule } from '../../src/strongname/well-formed.js';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const fixturesDir = join(repoRoot, 'fixtures');

export function fixture(relativePath: string): Uint8Array {
  return new Uint8Array(readFileSync(join(fixturesDir, relativePath)));
}

export function fixturePath(relativePath: string): string {
  return join(fixturesDir, relativePath);
}

/** A new folder of the run's temporary folder, and `save`, which writes bytes to a path in it (its folders made) and returns the path. */
export function scratchFolder(prefix: string): { dir: string; save: (name: string, bytes: Uint8Array) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const save = (name: string, bytes: Uint8Array): string => {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
    return path;
  };
  return { dir, save };
}

export function has(tool: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Mono's sn and monodis are installed. In CI they must be: .ci/run installs them. */
export const hasMono = has('sn') && has('monodis');
if (process.env.CI && !hasMono) {
  throw new Error('CI is set but Mono (sn, monodis) is not installed; .ci/run must apt-get install mono-devel mono-utils');
}

export interface CliResult {
  stdout: string;
  stderr: string;
  status: number | null;
}

/** Runs bin/signgate.js (the built CLI) in a child process without colours. */
export function runCli(args: readonly string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliResult {
  const r = spawnSync(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...args], {
    cwd: options.cwd ?? repoRoot,
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env },
    encoding: 'utf8',
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/**
 * The environment that gives a CLI process a name resolver the test controls (test/helpers/resolver-hook.mjs): each
 * name of `table` resolves to its address or fails with its error code (ENOTFOUND, EAI_AGAIN), every other name fails
 * with ENOTFOUND, and no query reaches the machine's resolver.
 */
export function controlledResolver(table: Readonly<Record<string, string>>): Record<string, string> {
  const hook = pathToFileURL(join(repoRoot, 'test', 'helpers', 'resolver-hook.mjs')).href;
  return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import "${hook}"`.trim(), SIGNGATE_TEST_RESOLVER: JSON.stringify(table) };
}

/** Runs a Mono tool and returns its exit code and output. */
export function runMono(tool: string, args: readonly string[]): CliResult {
  const r = spawnSync(tool, args, { encoding: 'utf8' });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

/**
 * Like runCli, without blocking the event loop (for tests whose server runs in this process). `started` gets the
 * process (to pause it with SIGSTOP while a test restarts the service it talks to, say).
 */
export function runCliAsync(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; started?: (child: ChildProcess) => void } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...args], {
      cwd: options.cwd ?? repoRoot,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', ...options.env },
    });
    options.started?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ stdout, stderr, status }));
  });
}

/**
 * A folder for one client run: `out` for the signed files and the cache (SIGNGATE_CACHE_DIR) beside it, below `under`
 * when given, and the environment that names the cache and the access token.
 */
export function clientWorkdir(
  prefix: string,
  token: string,
  under = '',
): { dir: string; out: string; cache: string; env: { SIGNGATE_CACHE_DIR: string; SIGNGATE_ACCESS_TOKEN: string } } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const cache = join(dir, under, 'cache');
  return { dir, out: join(dir, under, 'out'), cache, env: { SIGNGATE_CACHE_DIR: cache, SIGNGATE_ACCESS_TOKEN: token } };
}

/** fixtures/addin/SampleAddin.dll delay-signed for another key: its public key blob replaced by `publicKey`, of the same length. */
export function addinFor(publicKey: Uint8Array): Uint8Array {
  const bytes = Buffer.from(fixture('addin/SampleAddin.dll'));
  const old = readModule(bytes).assembly!.publicKey;
  if (publicKey.length !== old.length) throw new Error(`addinFor: a ${publicKey.length}-byte key blob cannot replace the add-in's ${old.length}-byte one`);
  bytes.set(publicKey, bytes.indexOf(Buffer.from(old)));
  return new Uint8Array(bytes);
}
