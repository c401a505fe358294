// Every shell block of README.md and docs/*.md marked `<!-- runnable … -->` runs as written, in a fresh copy of a
// fixture workspace, with `signgate` on the PATH being this repository's CLI, and ends with the exit code the
// marker states (0 unless `exit=N`). Blocks marked `service` run against a real `signgate serve` on 127.0.0.1
// started here, with SIGNGATE_BASE_URL and SIGNGATE_ACCESS_TOKEN set. The convention: docs/testing.md#runnable-examples.
import { spawn } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fixturePath, repoRoot } from '../helpers/fixtures.js';
import { fences } from '../helpers/markdown.js';

/** A block marked runnable: where it is, what it runs and what the marker asks. */
export interface RunnableBlock {
  file: string;
  line: number;
  script: string;
  exit: number;
  service: boolean;
  workspace: string;
}

/** The workspaces a block may ask for with `workspace=<name>` (default `addin`); built in beforeAll below. */
export const WORKSPACES = ['addin', 'unsigned-dependency'] as const;

const MARKER = /^<!--\s*runnable\b(.*?)-->\s*$/;

/**
 * The runnable blocks of one Markdown text. A marker must stand on the line right before a ```sh or ```bash fence;
 * its words are `exit=<code>`, `service` and `workspace=<name>`. Anything else is an error naming the file and line,
 * so that a mistyped marker never silently skips a block.
 */
export function runnableBlocks(file: string, text: string): RunnableBlock[] {
  const lines = text.split(/\r?\n/);
  const blocks: RunnableBlock[] = [];
  const all = fences(lines);
  // A marker shown inside a code block (as docs/testing.md shows one) is no marker.
  const inside = (i: number) => all.some((f) => f.open <= i && i <= f.close);
  lines.forEach((line, i) => {
    const m = MARKER.exec(line);
    if (!m || inside(i)) return;
    const where = `${file}:${i + 1}`;
    const fence = all.find((f) => f.open === i + 1);
    if (!fence || !/^(sh|bash)$/.test(fence.info))
      throw new Error(`${where}: a runnable marker must be followed directly by a \`\`\`sh block; found ${JSON.stringify(lines[i + 1] ?? '(end of file)')}`);
    if (fence.close >= lines.length) throw new Error(`${where}: the runnable block is never closed`);
    const block: RunnableBlock = { file, line: i + 2, script: lines.slice(i + 2, fence.close).join('\n'), exit: 0, service: false, workspace: 'addin' };
    for (const word of m[1]!.trim().split(/\s+/).filter(Boolean)) {
      const [key, value] = word.split('=', 2);
      if (key === 'exit' && value !== undefined && /^\d+$/.test(value)) block.exit = Number(value);
      else if (key === 'service' && value === undefined) block.service = true;
      else if (key === 'workspace' && (WORKSPACES as readonly string[]).includes(value ?? '')) block.workspace = value!;
      else throw new Error(`${where}: unknown runnable option ${JSON.stringify(word)}; use exit=<code>, service or workspace=<${WORKSPACES.join('|')}>`);
    }
    blocks.push(block);
  });
  return blocks;
}

/** README.md and docs/*.md, as the repository has them. */
function documents(): Array<{ file: string; text: string }> {
  const docs = readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].map((file) => ({ file, text: readFileSync(join(repoRoot, file), 'utf8') }));
}

interface Run {
  status: number | null;
  stdout: string;
  /** stdout and stderr as they came. */
  output: string;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => ((stdout += d), (output += d)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, output }));
  });
}

describe('the marker', () => {
  test('reads exit, service and workspace, and refuses what it does not know', () => {
    const text = '# t\n\n<!-- runnable exit=1 service workspace=unsigned-dependency -->\n```sh\nsigngate check x\n```\n\n```sh\nnot marked\n```\n';
    expect(runnableBlocks('t.md', text)).toEqual([
      { file: 't.md', line: 4, script: 'signgate check x', exit: 1, service: true, workspace: 'unsigned-dependency' },
    ]);
    expect(() => runnableBlocks('t.md', '<!-- runnable exit=one -->\n```sh\nx\n```\n')).toThrow('t.md:1: unknown runnable option "exit=one"');
    expect(() => runnableBlocks('t.md', '<!-- runnable -->\n\n```sh\nx\n```\n')).toThrow('t.md:1: a runnable marker must be followed directly');
    expect(() => runnableBlocks('t.md', '<!-- runnable -->\n```json\n{}\n```\n')).toThrow('followed directly by a ```sh block');
    expect(runnableBlocks('t.md', '````md\n<!-- runnable -->\n```sh\nshown, not run\n```\n````\n')).toEqual([]);
  });

  test('the README marks the examples of its journeys runnable', () => {
    const readme = runnableBlocks('README.md', readFileSync(join(repoRoot, 'README.md'), 'utf8'));
    const commands = readme.map((b) => b.script).join('\n');
    for (const command of ['signgate check', 'signgate sign', 'signgate audit', 'signgate fix']) expect(commands).toContain(command);
  });
});

describe('runnable blocks of README.md and docs/*.md', () => {
  const blocks = documents().flatMap(({ file, text }) => runnableBlocks(file, text));
  const root = mkdtempSync(join(tmpdir(), 'signgate-runnable-'));
  const shim = join(root, 'shim');
  const cli = join(repoRoot, 'bin', 'signgate.js');
  const serviceConfig = fixturePath('server/sandbox.json');
  const serviceData = join(root, 'service-data');
  let service: ReturnType<typeof spawn> | undefined;
  let baseUrl = '';
  let token = '';

  /** The environment of a block: signgate on the PATH; the service's address and token only when it asks. */
  const environment = (cwd: string, withService: boolean): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${shim}${delimiter}${process.env.PATH ?? ''}`,
      NO_COLOR: '1',
      FORCE_COLOR: '0',
      SIGNGATE_CACHE_DIR: join(cwd, '.cache'),
    };
    delete env.SIGNGATE_BASE_URL;
    delete env.SIGNGATE_ACCESS_TOKEN;
    if (withService) Object.assign(env, { SIGNGATE_BASE_URL: baseUrl, SIGNGATE_ACCESS_TOKEN: token });
    return env;
  };

  beforeAll(async () => {
    mkdirSync(shim);
    writeFileSync(join(shim, 'signgate'), `#!/bin/sh\nexec "${process.execPath}" "${cli}" "$@"\n`);
    chmodSync(join(shim, 'signgate'), 0o755);

    // The service: the sandbox organization with the TEST keys (option 12345), on a free port of 127.0.0.1.
    const created = await run(
      process.execPath,
      [cli, 'serve', 'token', 'create', '--config', serviceConfig, '--data-dir', serviceData, '--org', 'sandbox', '--user', 'ci', '--days', '1'],
      root,
      environment(root, false),
    );
    expect(created.status, created.output).toBe(0);
    token = created.stdout.trim();
    const serveArgs = ['serve', '--config', serviceConfig, '--data-dir', serviceData, '--port', '0', '--host', '127.0.0.1'];
    service = spawn(process.execPath, [cli, ...serveArgs], { cwd: root, env: environment(root, false), stdio: ['ignore', 'pipe', 'ignore'] });
    baseUrl = await new Promise<string>((resolve, reject) => {
      // The start line is a line of its JSON log, on stdout; the log is read to its end.
      let log = '';
      service!.stdout!.setEncoding('utf8').on('data', (d: string) => {
        if (log.length < 1_000_000) log += d;
        const m = /API at (http:\/\/127\.0\.0\.1:\d+\/\S+?),/.exec(log);
        if (m) resolve(m[1]!);
      });
      service!.on('exit', (code) => reject(new Error(`signgate serve ended (${code}) before it listened:\n${log}`)));
    });

    // Workspace `addin`: the sample add-in's build output, the option's public key, a key pair of one's own, the
    // sandbox's key pair (option 12345's TEST key pair), a signgate.config.json, and the output of one real signing
    // round (signed/, the same files as release/, and the job ledger in .cache/; the job itself deleted).
    const addin = join(root, 'workspaces', 'addin');
    mkdirSync(join(addin, 'bin'), { recursive: true });
    cpSync(fixturePath('addin'), join(addin, 'bin', 'Release'), { recursive: true });
    cpSync(fixturePath('test-keys/12345_public.snk'), join(addin, '12345_public.snk'));
    cpSync(fixturePath('test-keys/other_keypair.snk'), join(addin, 'your-key.snk'));
    cpSync(fixturePath('test-keys/12345_keypair.snk'), join(addin, 'sandbox.snk'));
    writeFileSync(
      join(addin, 'signgate.config.json'),
      `${JSON.stringify({ vendor: 'Contoso', keys: ['12345_public.snk'], paths: ['bin/Release'], root: 'bin/Release' }, null, 2)}\n`,
    );
    const signed = await run(
      join(shim, 'signgate'),
      ['sign', 'bin/Release', '--root-directory', 'bin/Release', '--destination-path', 'signed', '--poll-interval', '100', '--delete-afterwards'],
      addin,
      environment(addin, true),
    );
    expect(signed.status, signed.output).toBe(0);
    cpSync(join(addin, 'signed'), join(addin, 'release'), { recursive: true });

    // Workspace `unsigned-dependency`: the same, with an add-in that references a library without a strong name (SG401).
    const unsigned = join(root, 'workspaces', 'unsigned-dependency');
    mkdirSync(join(unsigned, 'bin'), { recursive: true });
    cpSync(fixturePath('addin'), join(unsigned, 'bin', 'Release'), { recursive: true });
    cpSync(fixturePath('sdk/bin/wrong-turns/UnsignedReference'), join(unsigned, 'bin', 'Release'), { recursive: true });
    cpSync(fixturePath('test-keys/12345_public.snk'), join(unsigned, '12345_public.snk'));
    cpSync(fixturePath('test-keys/other_keypair.snk'), join(unsigned, 'your-key.snk'));
  });

  afterAll(() => {
    service?.kill();
    rmSync(root, { recursive: true, force: true });
  });

  test('there are runnable blocks', () => expect(blocks.length).toBeGreaterThan(0));

  let n = 0;
  for (const block of blocks) {
    const name = `${block.file}:${block.line} (${block.workspace}${block.service ? ', service' : ''}, exit ${block.exit})`;
    const index = ++n;
    test(name, async () => {
      const cwd = join(root, 'runs', String(index));
      cpSync(join(root, 'workspaces', block.workspace), cwd, { recursive: true });
      const r = await run('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', block.script], cwd, environment(cwd, block.service));
      expect(r.status, `${name}\n${block.script}\n---\n${r.output}`).toBe(block.exit);
      rmSync(cwd, { recursive: true, force: true });
    });
  }
});
