// `signgate serve` (and its token commands) as child processes, the way an operator runs them.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath, repoRoot } from './fixtures.js';
import { WAIT_CEILING_MS, waitFor, waitForOutput } from './wait.js';

export const CLI = join(repoRoot, 'bin/signgate.js');

/** Runs the CLI (`cli`: another release's bin/signgate.js) to its end; stdout, stderr and the exit code. */
export function runSigngate(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string, cli = CLI): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/**
 * What a `signgate serve` that refused to start said, as other commands say it on stderr (`error CODE: message`,
 * `  hint: …`): its log's fatal line (level 60) on stdout, the only line at that level. Throws when there is none
 * or when a line of its output is not JSON.
 */
export function refusal(stdout: string): string {
  const lines = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { level: number; msg: string; code?: string; hint?: string });
  const fatal = lines.filter((l) => l.level === 60);
  if (fatal.length !== 1) throw new Error(`expected one fatal line in the log of signgate serve, found ${fatal.length}:\n${stdout}`);
  const { code, msg, hint } = fatal[0]!;
  return `error ${code}: ${msg.replace(/^the service did not start: /, '')}${hint ? `\n  hint: ${hint}` : ''}`;
}

/** `signgate sign` of the sandbox's sample add-in (vendor Contoso, option 12345) through `baseUrl`, into `destination`. */
export function sampleSignArgs(baseUrl: string, destination: string): string[] {
  const key = fixturePath('test-keys/12345_public.snk');
  return [
    'sign',
    fixturePath('addin/SampleAddin.dll'),
    '--vendor',
    'Contoso',
    '--key',
    key,
    '--base-url',
    baseUrl,
    '--destination-path',
    destination,
    '--poll-interval',
    '100',
  ];
}

/** Makes a token with `serve token create`; throws with its stderr when that fails. */
export async function cliToken(args: string[], org = 'sandbox', user = 'ci'): Promise<string> {
  const r = await runSigngate(['serve', 'token', 'create', ...args, '--org', org, '--user', user]);
  if (r.code !== 0) throw new Error(`token create exited ${r.code}: ${r.err}`);
  return r.out.trim();
}

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly port: number;
  readonly baseUrl: string;
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Everything it wrote to stdout (its JSON log) so far. */
  stdout(): string;
  /** Resolves with the exit code or signal once the process has ended. */
  readonly exited: Promise<number | string | null>;
}

/**
 * Starts `signgate serve …args` on 127.0.0.1, port 0 unless `args` name one, and resolves once it listens. `cli`: another
 * release's bin/signgate.js (test/helpers/previous-release.ts), which may write its start line to stderr.
 */
export async function startServiceProcess(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string, cli = CLI): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [cli, 'serve', ...(args.includes('--port') ? [] : ['--port', '0']), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd ? { cwd } : {}),
  });
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // The start line is a line of its JSON log (stdout), like every line it writes (older releases: on stderr).
  const started = /(?:API|worker, health) at http:\/\/127\.0\.0\.1:(\d+)/;
  const output = cli === CLI ? () => stdout : () => stdout + stderr;
  // A process that never says it listens is ended here: the caller has no handle to stop it with.
  const listening = await waitForOutput(`signgate serve ${args.join(' ')} to listen`, output, started, { ended: exited, intervalMs: 20 }).catch(
    (error: unknown) => {
      child.kill('SIGKILL');
      throw error;
    },
  );
  const port = Number(listening[1]);
  return { child, port, baseUrl: `http://127.0.0.1:${port}/assembly-signing/v1.0`, stderr: () => stderr, stdout: () => stdout, exited };
}

export interface JobStatus {
  processingFinished: boolean;
  assemblies: { fileName: string; fileProcessingState: string; messages: { messageType: string; message: string }[] }[];
}

/** Waits (ceiling: minutes) until job `id` of the service at `baseUrl` says processingFinished; that status. */
export function waitJobFinished(baseUrl: string, token: string, id: string, ceilingMs = WAIT_CEILING_MS): Promise<JobStatus> {
  return waitFor(
    `job ${id} to finish`,
    async () => {
      const status = (await (await fetch(`${baseUrl}/assemblies/${id}/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as JobStatus;
      return status.processingFinished ? { done: true, value: status } : { done: false, seen: status };
    },
    { ceilingMs },
  );
}

/** Stops a service process: SIGKILL unless told otherwise; resolves once it has ended. */
export async function stopServiceProcess(service: ServiceProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
  await service.exited;
}

/** A copy of the sandbox configuration in a folder of its own (key pairs by absolute path), to edit while a service runs. */
export function sandboxConfigCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'signgate-config-'));
  const raw = JSON.parse(readFileSync(fixturePath('server/sandbox.json'), 'utf8'));
  delete raw.$schema;
  for (const org of raw.organizations) for (const l of org.licenses) l.keyPair = join(fixturePath('server'), l.keyPair);
  const path = join(dir, 'server.json');
  writeFileSync(path, JSON.stringify(raw, null, 2));
  return path;
}

/** Rewrites a configuration file made by sandboxConfigCopy(). */
export function editConfig(
  path: string,
  edit: (raw: { organizations: { id: string; users: { id: string; roles: string[] }[] }[]; limits?: Record<string, number> }) => void,
): void {
  const raw = JSON.parse(readFileSync(path, 'utf8'));
  edit(raw);
  const temp = `${path}.tmp`;
  writeFileSync(temp, JSON.stringify(raw, null, 2));
  renameSync(temp, path);
}
