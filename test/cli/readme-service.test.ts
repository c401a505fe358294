// The service's first steps as a user takes them, with `signgate` being this repository's CLI and the port a free
// one: the README's `signgate serve` block run as written, and the next steps `serve init` prints, run as printed
// (from another folder, through a path with a space); the token each makes is accepted by the service it starts.
// And the mix-up they prevent: a token made for another data folder is refused with a 401 that says so.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { repoRoot, runCliAsync } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { waitFor } from '../helpers/wait.js';

const CLI = join(repoRoot, 'bin', 'signgate.js');

/** The commands of the first sh block after the README heading that starts with `heading`. */
function readmeBlock(heading: string): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** Splits a command line as a POSIX shell does for these lines: words, and words in double quotes. */
const words = (line: string) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);

/** `signgate …` of a printed line, with the port replaced by `port`, as arguments to bin/signgate.js. */
const argumentsOf = (line: string, port: number) => words(line.replace(/--port \d+|127\.0\.0\.1:\d+/g, (m) => m.replace(/\d+$/, String(port)))).slice(1);

const signgate = (args: readonly string[], cwd: string) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-first-steps-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts `signgate serve …` and waits until it listens; its log (JSON lines on standard output) so far, and more as it comes. */
async function startService(args: readonly string[], cwd: string): Promise<{ log: () => string }> {
  const service = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'ignore'] });
  cleanups.unshift(() => service.kill());
  let out = '';
  await new Promise<void>((resolve, reject) => {
    service.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('API at')) resolve();
    });
    service.on('exit', () => reject(new Error(`serve ended: ${out}`)));
  });
  return { log: () => out };
}

const licenses = (port: number, token: string, cwd: string) =>
  runCliAsync(['licenses', '--base-url', `http://127.0.0.1:${port}/assembly-signing/v1.0`], { cwd, env: { SIGNGATE_ACCESS_TOKEN: token } });

test("the README's serve block works as written: init, token create, serve; the token is accepted", async () => {
  const lines = readmeBlock('## Run the service');
  expect(lines).toHaveLength(3);
  expect(lines.every((l) => l.startsWith('signgate serve'))).toBe(true);
  const dir = folder();
  const port = await freePort();
  const init = signgate(argumentsOf(lines[0]!, port), dir);
  expect(init.status, init.stderr).toBe(0);
  const created = signgate(argumentsOf(lines[1]!, port), dir);
  expect(created.status, created.stderr).toBe(0);
  await startService(argumentsOf(lines[2]!, port), dir);
  const r = await licenses(port, created.stdout.trim(), dir);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toContain('12345');
});

test("serve init's next steps, run as printed in order from another folder, give a token its service accepts", async () => {
  const root = folder();
  const elsewhere = join(root, 'elsewhere');
  mkdirSync(elsewhere);
  const init = signgate(['serve', 'init', '--dir', 'my service'], root);
  expect(init.status, init.stderr).toBe(0);
  const steps = init.stderr
    .split('\n')
    .filter((l) => l.startsWith('  signgate '))
    .map((l) => l.trim());
  expect(steps.map((s) => words(s).slice(0, 3).join(' '))).toEqual(['signgate serve token', 'signgate serve --config', 'signgate licenses --base-url']);
  // Every command names the same data folder, the one beside the configuration.
  const dataDirs = steps.flatMap((s) => words(s).flatMap((w, i, all) => (all[i - 1] === '--data-dir' ? [w] : [])));
  expect(dataDirs).toEqual([join(root, 'my service', 'data'), join(root, 'my service', 'data')]);
  const port = await freePort();
  const created = signgate(argumentsOf(steps[0]!, port), elsewhere);
  expect(created.status, created.stderr).toBe(0);
  expect(created.stderr).toContain(`Its hash is in ${join(root, 'my service', 'data', 'tokens.json')}, a data folder made just now`);
  const token = created.stdout.trim();
  const service = await startService(argumentsOf(steps[1]!, port), elsewhere);
  expect(service.log()).not.toContain('holds no tokens');
  const listed = await runCliAsync(argumentsOf(steps[2]!, port), { cwd: elsewhere, env: { SIGNGATE_ACCESS_TOKEN: token } });
  expect(listed.status, listed.stderr).toBe(0);
  expect(listed.stdout).toContain('12345');
  const answer = await fetch(`http://127.0.0.1:${port}/assembly-signing/v1.0/licenses`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
});

test('token create and serve share their default data folder: without --data-dir either, the token is accepted', async () => {
  const dir = folder();
  expect(signgate(['serve', 'init', '--dir', 'service'], dir).status).toBe(0);
  const created = signgate(['serve', 'token', 'create', '--config', 'service/server.json', '--org', 'sandbox', '--user', 'ci'], dir);
  expect(created.status, created.stderr).toBe(0);
  expect(created.stderr).toContain(`the service knows the token when it runs with --data-dir ${join(dir, 'signgate-data')}`);
  const port = await freePort();
  await startService(['serve', '--config', 'service/server.json', '--port', String(port)], dir);
  const r = await licenses(port, created.stdout.trim(), dir);
  expect(r.status, r.stderr).toBe(0);
});

test('a token made for another data folder: the service says at start, and in its 401, that it holds no tokens at all', async () => {
  const dir = folder();
  expect(signgate(['serve', 'init', '--dir', 'service'], dir).status).toBe(0);
  // The mix-up of the old next steps and the README: the token into ./signgate-data, the service on service/data.
  const created = signgate(['serve', 'token', 'create', '--config', 'service/server.json', '--org', 'sandbox', '--user', 'ci'], dir);
  expect(created.status, created.stderr).toBe(0);
  const port = await freePort();
  const service = await startService(['serve', '--config', 'service/server.json', '--data-dir', 'service/data', '--port', String(port)], dir);
  const data = join(dir, 'service', 'data');
  // The note is the log line after the one that says the service listens: waited for, not raced.
  const note = `note: ${data} holds no tokens yet: every token is refused until one is made for this data folder`;
  await waitFor('the note of a data folder without tokens', () =>
    service.log().includes(note) ? { done: true, value: undefined } : { done: false, seen: service.log() },
  );
  const r = await licenses(port, created.stdout.trim(), dir);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('The access token is not known. This service holds no tokens at all in its data folder, so the token was made for another one');
  const answer = await fetch(`http://127.0.0.1:${port}/assembly-signing/v1.0/licenses`, { headers: { authorization: `Bearer ${created.stdout.trim()}` } });
  expect(answer.status).toBe(401);
  // Once the folder holds a token, an unknown one is just that.
  const made = signgate(['serve', 'token', 'create', '--config', 'service/server.json', '--data-dir', 'service/data', '--org', 'sandbox', '--user', 'ci'], dir);
  expect(made.status, made.stderr).toBe(0);
  const unknown = await licenses(port, created.stdout.trim(), dir);
  expect(unknown.stderr).toContain('The access token is not known. Create a new token.');
});
