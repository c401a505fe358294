// The heavy leg's share of the differential test of the one verdict (see well-formed-differential.test.ts): 10,000
// mutants from another range of seeds, through inspect, check and the service, in four runs of 2,500 seeds each (one
// test each, so that a slow machine meets no single test's ceiling; a run takes some minutes).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runDifferential } from '../helpers/differential.js';
import { sandboxConfig, startServer, type TestServer } from '../helpers/server.js';

const MUTANTS = 10_000;
const RUNS = 4;
const PER_RUN = MUTANTS / RUNS;
let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server?.close());

test.each(Array.from({ length: RUNS }, (_, i) => 100_000 + i * PER_RUN))(
  `${PER_RUN} mutants from seed %i (of ${MUTANTS}): inspect, check and the service agree on every one`,
  async (firstSeed) => {
    const { disagreements, judged } = await runDifferential(server, server.token(), sandboxConfig(), PER_RUN, firstSeed, 8);
    expect(disagreements).toEqual([]);
    expect(judged.filter((v) => v.check !== null).length).toBeGreaterThan(PER_RUN / 5);
  },
  1_200_000,
);
