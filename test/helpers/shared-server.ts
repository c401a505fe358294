// One service for a whole test file: started before its tests, closed after them.
import { afterAll, beforeAll } from 'vitest';
import { startServer, type TestServer } from './server.js';

export function sharedServer(options: Parameters<typeof startServer>[0] = {}): { server: () => TestServer; token: () => string } {
  let server: TestServer | undefined;
  let token = '';
  beforeAll(async () => {
    server = await startServer(options);
    token = server.token();
  });
  afterAll(() => server?.close());
  return { server: () => server!, token: () => token };
}
