// The heavy leg's share of the differential test of the one verdict (see well-formed-differential.test.ts): 10,000
// mutants from another range of seeds, through inspect, check and the service.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runDifferential } from '../helpers/differential.js';
import { sandboxConfig, startServer, type TestServer } from '../helpers/server.js';

const MUTANTS = 10_000;
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

test(`${MUTANTS} mutants: inspect, check and the service agree on every one`, async () => {
  const { disagreements, judged } = await runDifferential(server, server.token(), sandboxConfig(), MUTANTS, 100_000, 8);
  expect(disagreements).toEqual([]);
  expect(judged.filter((v) => v.check !== null).length).toBeGreaterThan(MUTANTS / 5);
});
