// A loopback HTTP proxy in front of the real service that can answer or break requests on purpose.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export type Intercept = (req: IncomingMessage, res: ServerResponse, count: number) => boolean | 'drop-body';

export interface Proxy {
  baseUrl: string;
  /** Requests seen, as "METHOD /path". */
  seen: string[];
  close(): Promise<void>;
}

/** Forwards to `target` (an origin); `intercept` may answer a request itself (true) or cut its response body short ('drop-body'). */
export async function startProxy(target: string, apiPrefix: string, intercept: Intercept): Promise<Proxy> {
  const seen: string[] = [];
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    seen.push(key);
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    const decision = intercept(req, res, count);
    if (decision === true) {
      req.resume();
      return;
    }
    const upstream = new URL(req.url!, target);
    const forward = request(upstream, { method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (decision === 'drop-body') {
        let sent = 0;
        up.on('data', (chunk: Buffer) => {
          if (sent > 1000) return;
          sent += chunk.length;
          res.write(chunk.subarray(0, 1500));
          if (sent > 1000) res.socket?.destroy();
        });
      } else up.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { baseUrl: `http://127.0.0.1:${port}${apiPrefix}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

/** How a lying proxy changes an answer of the service: the body of a GET of a job's status or download, by path. */
export type Lie = (path: string, body: Buffer, res: ServerResponse) => Buffer;

/**
 * A proxy in front of the service at `baseUrl` that passes each status and download answer through the lie of the
 * moment (`lie(...)` changes it; honest at first).
 */
export async function startLyingProxy(baseUrl: string): Promise<Proxy & { lie: (l: Lie) => void }> {
  const origin = new URL(baseUrl).origin;
  const prefix = new URL(baseUrl).pathname;
  let current: Lie = (_path, body) => body;
  const proxy = await startProxy(origin, prefix, (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET' || !/\/assemblies\/[^/]+(\/status)?$/.test(req.url ?? '')) return false;
    void (async () => {
      const upstream = await fetch(new URL(req.url!, origin), { headers: { authorization: req.headers.authorization ?? '' } });
      const body = current(req.url!, Buffer.from(await upstream.arrayBuffer()), res);
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
        'content-length': String(body.length),
      });
      res.end(body);
    })().catch(() => res.destroy());
    return true;
  });
  return Object.assign(proxy, { lie: (l: Lie) => (current = l) });
}

/** Sends `req` on to the origin `target` as it came (its Host that origin's) and its answer back as it comes. */
export function forward(req: IncomingMessage, res: ServerResponse, target: string): void {
  const upstream = new URL(req.url!, target);
  const out = request(upstream, { method: req.method, headers: { ...req.headers, host: upstream.host } }, (up) => {
    res.writeHead(up.statusCode ?? 502, up.headers);
    up.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
}

/** A round-robin balancer on loopback: each request goes to the next of `targets` (origins), which may change as nodes come and go. */
export interface Balancer {
  baseUrl: string;
  /** The origins requests go to now. */
  targets: string[];
  /** Requests each origin was sent. */
  sent: Map<string, number>;
  close(): Promise<void>;
}

export async function startBalancer(targets: string[], apiPrefix: string): Promise<Balancer> {
  const sent = new Map<string, number>();
  let next = 0;
  const balancer: Balancer = {
    baseUrl: '',
    targets: [...targets],
    sent,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((req, res) => {
    const target = balancer.targets[next++ % balancer.targets.length]!;
    sent.set(target, (sent.get(target) ?? 0) + 1);
    forward(req, res, target);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  balancer.baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}${apiPrefix}`;
  return balancer;
}
