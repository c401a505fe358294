// The README's `signgate serve` block, run as written (in a fresh folder, with `signgate` being this repository's
// CLI and the port a free one): the token it makes is accepted by the service it starts.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { repoRoot, runCliAsync } from '../helpers/fixtures.js';

/** The commands of the first sh block after the README heading that starts with `heading`. */
function readmeBlock(heading: string): string[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf(heading));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter(Boolean);
}

/** Splits a command line as a POSIX shell does for these simple lines (no quotes in them). */
const words = (line: string) => line.split(/\s+/);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test("the README's serve block works as written: init, token create, serve; the token is accepted", async () => {
  const lines = readmeBlock('## Run the service');
  expect(lines).toHaveLength(3);
  expect(lines.every((l) => l.startsWith('signgate serve'))).toBe(true);
  const dir = mkdtempSync(join(tmpdir(), 'signgate-readme-'));
  try {
    const port = await freePort();
    const cli = (line: string) => words(line.replace('--port 8080', `--port ${port}`)).slice(1);
    const init = spawnSync(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...cli(lines[0]!)], { cwd: dir, encoding: 'utf8' });
    expect(init.status, init.stderr).toBe(0);
    const created = spawnSync(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...cli(lines[1]!)], { cwd: dir, encoding: 'utf8' });
    expect(created.status, created.stderr).toBe(0);
    const token = created.stdout.trim();
    const service = spawn(process.execPath, [join(repoRoot, 'bin', 'signgate.js'), ...cli(lines[2]!)], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise<void>((resolve, reject) => {
        let log = '';
        service.stdout!.on('data', (d: Buffer) => {
          log += d.toString();
          if (log.includes('API at')) resolve();
        });
        service.on('exit', () => reject(new Error(`serve ended: ${log}`)));
      });
      const r = await runCliAsync(['licenses', '--base-url', `http://127.0.0.1:${port}/assembly-signing/v1.0`], { cwd: dir, env: { SIGNGATE_ACCESS_TOKEN: token } });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('12345');
    } finally {
      service.kill();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
