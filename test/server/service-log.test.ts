// What a real `signgate serve` writes, read line by line: every line on stdout and stderr, from the first to the
// last, is one JSON object (the key pair warnings, the start, requests, jobs, the stop, a refused start, Node's
// process warnings, a crash); a job whose files all failed is logged at warn with its counts; --log-level,
// SIGNGATE_LOG_LEVEL and server.json's logLevel filter it (debug adds the status polls, warn leaves out info).
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { uploadForm } from '../helpers/server.js';
import { CLI, cliToken, editConfig, refusal, runSigngate, sandboxConfigCopy, waitJobFinished } from '../helpers/service-process.js';
import { STORE_UNDER_TEST } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

const API = '/assembly-signing/v1.0';
const LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

interface Run {
  /** Every line of stdout, each parsed as JSON (a line that is not fails the test). */
  lines: LogLine[];
  stderr: string;
  exit: number | string | null;
}

/** A free port of 127.0.0.1 (for a service whose log does not say where it listens). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every line of a service's output, each of which must be a JSON object. */
function parseLines(output: string, stream: string): LogLine[] {
  return output
    .split('\n')
    .filter((l, i, all) => l !== '' || i < all.length - 1)
    .map((line) => {
      let parsed: unknown;
      expect(() => (parsed = JSON.parse(line)), `a line of ${stream} that is not JSON: ${line}`).not.toThrow();
      expect(parsed, line).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
      return parsed as LogLine;
    });
}

/** `signgate serve …args` as a child process, its output collected; SIGNGATE_LOG_LEVEL unset unless `env` sets it. */
function spawnServe(args: string[], env: NodeJS.ProcessEnv) {
  const options = { env: { ...process.env, SIGNGATE_LOG_LEVEL: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] };
  const child = spawn(process.execPath, [CLI, 'serve', ...args], options);
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output.stderr += d.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  return { child, output, exited };
}

/**
 * Runs `signgate serve …args` on a port chosen here, waits until /healthz answers, runs `work` against it, then stops it
 * with SIGTERM and reads every line it wrote.
 */
async function runService(args: string[], env: NodeJS.ProcessEnv, work: (origin: string) => Promise<void>): Promise<Run> {
  const port = await freePort();
  const { child, output, exited } = spawnServe(['--port', String(port), ...args], env);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      'the service to answer /healthz',
      async () => {
        if (child.exitCode !== null) throw new Error(`serve ended (${child.exitCode}):\n${output.stdout}${output.stderr}`);
        const ok = await fetch(`${origin}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        return ok ? { done: true, value: undefined } : { done: false, seen: output.stdout.slice(-500) };
      },
      { intervalMs: 30 },
    );
    await work(origin);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  }
  const exit = await exited;
  return { lines: parseLines(output.stdout, 'stdout'), stderr: output.stderr, exit };
}

/** Uploads one file; its job's id. */
async function upload(origin: string, token: string, name: string, bytes: Uint8Array): Promise<string> {
  const r = await fetch(`${origin}${API}/assemblies`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: uploadForm([{ name, bytes }]) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
}

/**
 * A service configuration and data directory with a token. Its key pairs are copies of the fixtures', 0600 but for
 * option 12345's (`exposed`), which others may read: the one warning at start.
 */
async function service(edit?: (raw: Record<string, unknown>) => void): Promise<{ config: string; dataDir: string; token: string; exposed: string }> {
  const config = sandboxConfigCopy();
  const keys = mkdtempSync(join(tmpdir(), 'signgate-log-keys-'));
  let exposed = '';
  editConfig(config, (raw) => {
    for (const org of (raw as unknown as { organizations: { licenses: { optionId: number; keyPair: string }[] }[] }).organizations) {
      for (const license of org.licenses) {
        const copy = join(keys, `${license.optionId}_keypair.snk`);
        copyFileSync(license.keyPair, copy);
        chmodSync(copy, license.optionId === 12345 ? 0o644 : 0o600);
        if (license.optionId === 12345) exposed = copy;
        license.keyPair = copy;
      }
    }
    edit?.(raw as unknown as Record<string, unknown>);
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'signgate-log-'));
  return { config, dataDir, token: await cliToken(['--config', config, '--data-dir', dataDir]), exposed };
}

const addin = fixture('findings/passing/FindingAddin.dll');
const broken = Buffer.from('this is not a .NET assembly');
const levelsOf = (run: Run) => new Set(run.lines.map((l) => LEVELS[l.level]));

/** Store-independent (the data directory): the PostgreSQL leg (SIGNGATE_TEST_STORE=postgres) would repeat them. */
const dataDirDescribe = describe.skipIf(STORE_UNDER_TEST === 'postgres');

dataDirDescribe('every line is one JSON object', () => {
  test('at info: the key pair warning, the start, requests, a job that signs (info) and one that fails (warn, with its counts), the stop', async () => {
    const s = await service();
    const ids: string[] = [];
    const run = await runService(['--config', s.config, '--data-dir', s.dataDir], {}, async (origin) => {
      ids.push(await upload(origin, s.token, 'FindingAddin.dll', addin), await upload(origin, s.token, 'Broken.dll', broken));
      for (const id of ids) await waitJobFinished(`${origin}${API}`, s.token, id);
    });
    expect(run.exit).toBe(0);
    expect(run.stderr).toBe('');
    const { lines } = run;
    expect(lines[0]).toMatchObject({ level: 40, keyPair: s.exposed, mode: '0644' });
    expect(lines[0]!.msg).toContain(`the key pair ${s.exposed} is readable by other users of this machine (mode 0644)`);
    expect(lines.find((l) => l.msg.startsWith('signgate serve: API at'))).toMatchObject({ level: 30, role: 'all', dataDir: s.dataDir });
    // The two jobs are signed at once: in either order.
    const processed = lines.filter((l) => l.msg === 'job processed').sort((a, b) => ids.indexOf(a.job as string) - ids.indexOf(b.job as string));
    expect(processed).toEqual([
      expect.objectContaining({ level: 30, job: ids[0], files: 1, signed: 1, failed: 0 }),
      expect.objectContaining({ level: 40, job: ids[1], files: 1, signed: 0, failed: 1 }),
    ]);
    expect(lines.filter((l) => l.msg === 'request completed').length).toBeGreaterThan(0);
    // Status polls that were answered are not at info.
    expect(lines.some((l) => l.msg === 'status poll answered')).toBe(false);
    expect(lines.at(-1)).toMatchObject({ level: 30, msg: 'signgate serve stopped', signal: 'SIGTERM' });
    expect(JSON.stringify(lines)).not.toContain(s.token);
  });

  test("a process warning and a crash: log lines too, never Node's text on stderr", async () => {
    const s = await service();
    // Loaded before signgate: on SIGUSR2 the process emits a warning, then throws where nothing catches it.
    const preload = join(mkdtempSync(join(tmpdir(), 'signgate-log-preload-')), 'trouble.cjs');
    const trouble = [
      "process.on('SIGUSR2', () => {",
      "  process.emitWarning('a warning made by a test', 'TestWarning');",
      "  setTimeout(() => { throw new Error('a crash made by a test'); }, 100);",
      '});',
    ];
    writeFileSync(preload, `${trouble.join('\n')}\n`);
    const { child, output, exited } = spawnServe(['--config', s.config, '--data-dir', s.dataDir, '--port', '0'], { NODE_OPTIONS: `--require ${preload}` });
    await waitFor('the service to start', () => (output.stdout.includes('API at') ? { done: true, value: undefined } : { done: false, seen: output }));
    child.kill('SIGUSR2');
    expect(await exited).toBe(1);
    expect(output.stderr).toBe('');
    const lines = parseLines(output.stdout, 'stdout');
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'a warning made by a test', warning: { name: 'TestWarning' } }));
    expect(lines.at(-1)).toMatchObject({ level: 60, msg: 'the service crashed', err: expect.objectContaining({ message: 'a crash made by a test' }) });
  });

  test('a start it refuses: one fatal line with the code and the hint', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-log-'));
    const r = await runSigngate(['serve', '--config', sandboxConfigCopy(), '--data-dir', dataDir, '--port', '0', '--role', 'api'], {
      SIGNGATE_DATABASE_URL: '',
    });
    expect(r.code).toBe(2);
    expect(r.err).toBe('');
    const lines = parseLines(r.out, 'stdout');
    expect(lines.at(-1)).toMatchObject({ level: 60, code: 'SG_ERR_USAGE', hint: expect.stringContaining('--database') });
    expect(refusal(r.out)).toContain('error SG_ERR_USAGE: --role api needs --database');
  });
});

dataDirDescribe('the level', () => {
  test('--log-level debug: the status polls appear, at debug', async () => {
    const s = await service();
    const run = await runService(['--config', s.config, '--data-dir', s.dataDir, '--log-level', 'debug'], {}, async (origin) => {
      await waitJobFinished(`${origin}${API}`, s.token, await upload(origin, s.token, 'FindingAddin.dll', addin));
    });
    expect(run.stderr).toBe('');
    const polls = run.lines.filter((l) => l.msg === 'status poll answered');
    expect(polls.length).toBeGreaterThan(0);
    expect(polls.every((l) => l.level === 20 && (l.req as { url: string }).url.endsWith('/status'))).toBe(true);
  });

  test("--log-level trace: the multipart parser's own lines too, still without the token", async () => {
    const s = await service();
    const run = await runService(['--config', s.config, '--data-dir', s.dataDir, '--log-level', 'trace'], {}, async (origin) => {
      await waitJobFinished(`${origin}${API}`, s.token, await upload(origin, s.token, 'FindingAddin.dll', addin));
    });
    expect(levelsOf(run).has('trace')).toBe(true);
    const text = run.lines.map((l) => JSON.stringify(l)).join('\n');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(s.token);
  });

  test("SIGNGATE_LOG_LEVEL=warn: no info line (not even the start), the failed job's line and the key pair warning remain", async () => {
    const s = await service();
    const run = await runService(['--config', s.config, '--data-dir', s.dataDir], { SIGNGATE_LOG_LEVEL: 'warn' }, async (origin) => {
      await waitJobFinished(`${origin}${API}`, s.token, await upload(origin, s.token, 'FindingAddin.dll', addin));
      await waitJobFinished(`${origin}${API}`, s.token, await upload(origin, s.token, 'Broken.dll', broken));
    });
    expect(run.stderr).toBe('');
    expect([...levelsOf(run)]).toEqual(['warn']);
    expect(run.lines.map((l) => l.msg)).toEqual([expect.stringContaining('is readable by other users'), 'job processed']);
    expect(run.lines[1]).toMatchObject({ signed: 0, failed: 1 });
  });

  test("server.json's logLevel applies; SIGNGATE_LOG_LEVEL wins over it, and --log-level over both", async () => {
    const s = await service((raw) => (raw.logLevel = 'warn'));
    const args = ['--config', s.config, '--data-dir', s.dataDir];
    const nothing = async () => {};
    const fromConfig = await runService(args, {}, nothing);
    expect(levelsOf(fromConfig).has('info')).toBe(false);
    const fromEnvironment = await runService(args, { SIGNGATE_LOG_LEVEL: 'info' }, nothing);
    expect(fromEnvironment.lines.some((l) => l.msg.startsWith('signgate serve: API at'))).toBe(true);
    const fromFlag = await runService([...args, '--log-level', 'error'], { SIGNGATE_LOG_LEVEL: 'debug' }, nothing);
    expect(fromFlag.lines).toEqual([]);
  });

  test('a SIGNGATE_LOG_LEVEL that is no level refuses the start, naming the levels', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'signgate-log-'));
    const r = await runSigngate(['serve', '--config', sandboxConfigCopy(), '--data-dir', dataDir, '--port', '0'], { SIGNGATE_LOG_LEVEL: 'loud' });
    expect(r.code).toBe(2);
    const levels = 'trace, debug, info, warn, error, fatal, silent';
    expect(refusal(r.out)).toBe(`error SG_ERR_USAGE: SIGNGATE_LOG_LEVEL="loud" is not a log level\n  hint: Set one of ${levels}, or unset it.`);
  });
});
