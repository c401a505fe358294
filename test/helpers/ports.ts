// A port of 127.0.0.1 that is free now: the system gives one out and takes it back. A service can then be started
// on it, or a client pointed at it to find nothing listening.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
