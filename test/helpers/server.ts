// Starts the reference service in this process on 127.0.0.1, port 0, with the sandbox configuration.
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildServer, type BuildServerOptions } from '../../src/server/http/app.js';
import { parseServerConfig, type ServerConfig, type ServerConfigFile } from '../../src/server/server-config.js';
import { fixturePath } from './fixtures.js';
import { databaseFor, STORE_UNDER_TEST } from './database.js';
import { waitJobFinished, type JobStatus } from './service-process.js';
import { WAIT_CEILING_MS } from './wait.js';

export const SANDBOX_CONFIG: ServerConfigFile = JSON.parse(readFileSync(fixturePath('server/sandbox.json'), 'utf8'));

export function sandboxConfig(edit: (c: ServerConfigFile) => void = () => {}): ServerConfig {
  const raw = structuredClone(SANDBOX_CONFIG);
  delete (raw as { $schema?: string }).$schema;
  edit(raw);
  return parseServerConfig(raw, fixturePath('server'));
}

export interface TestServer {
  app: FastifyInstance;
  baseUrl: string;
  dataDir: string;
  /** Replace the configuration the running service sees. */
  setConfig(config: ServerConfig): void;
  token(organization?: string, user?: string, days?: number, now?: Date): string;
  close(): Promise<void>;
}

export async function startServer(
  options: {
    config?: ServerConfig;
    dataDir?: string;
    logger?: BuildServerOptions['logger'];
    port?: number;
    build?: Partial<Pick<BuildServerOptions, 'trustProxy' | 'timeouts' | 'rateLimits' | 'signingWorkers' | 'jobMemoryBytes'>>;
  } = {},
): Promise<TestServer> {
  let config = options.config ?? sandboxConfig();
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'signgate-data-'));
  // SIGNGATE_TEST_STORE=postgres: the same tests on PostgreSQL (a database per data directory).
  const database = STORE_UNDER_TEST === 'postgres' ? await databaseFor(dataDir) : undefined;
  const app = await buildServer({
    ...options.build,
    ...(database ? { database, leaseMs: 5000 } : {}),
    config: () => config,
    dataDir,
    logger: options.logger ?? false,
  });
  await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return {
    app,
    dataDir,
    baseUrl: `http://127.0.0.1:${port}${app.signgate.apiPrefix}`,
    setConfig: (c) => {
      config = c;
    },
    token: (organization = 'sandbox', user = 'ci', days = 30, now) => app.signgate.tokens.create(organization, user, days, now).token,
    close: () => app.close(),
  };
}

export interface UploadFile {
  name: string;
  bytes: Uint8Array;
}

/** Every *.dll/*.exe below a fixture folder, named relative to it. */
export function folderFiles(folder: string): UploadFile[] {
  const root = fixturePath(folder);
  const out: UploadFile[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(dll|exe)$/i.test(name)) out.push({ name: relative(root, path).split('\\').join('/'), bytes: readFileSync(path) });
    }
  };
  walk(root);
  return out;
}

export function uploadForm(files: UploadFile[], comment?: string): FormData {
  const form = new FormData();
  files.forEach((f, i) => form.append(`files[${i}]`, new Blob([f.bytes]), f.name));
  if (comment !== undefined) form.append('comment', comment);
  return form;
}

export async function api(server: TestServer, path: string, token: string | undefined, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, { ...init, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.headers ?? {}) } });
}

/** Waits (ceiling: minutes) until the job says processingFinished, and returns that status. */
export function waitFinished(server: TestServer, token: string, id: string, ceilingMs = WAIT_CEILING_MS): Promise<JobStatus> {
  return waitJobFinished(server.baseUrl, token, id, ceilingMs);
}
