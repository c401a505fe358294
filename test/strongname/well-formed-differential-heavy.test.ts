// The heavy leg's share of the differential test of the one verdict (see well-formed-differential.test.ts): 10,000
// mutants from another range of seeds, through inspect, check and the service, in four runs of 2,500 seeds each (one
// test each, so that a slow machine meets no single test's ceiling; a run takes some minutes). The heavy leg runs it
// beside Wine and real builds: a job may wait its turn longer than the 10 s npm test's share gives it, so each job
// gets a minute, and the service's log shows that no job was retried as the service's fault.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runDifferential } from '../helpers/differential.js';
import { sandboxConfig, startServer, type TestServer } from '../helpers/server.js';

const MUTANTS = 10_000;
const RUNS = 4;
const PER_RUN = MUTANTS / RUNS;
let server: TestServer;
const warnings: { level: number; msg: string }[] = [];
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n')) if (line) warnings.push(JSON.parse(line));
    done();
  },
});
beforeAll(async () => {
  server = await startServer({ logger: { level: 'warn', stream } });
});
afterAll(() => server?.close());

test.each(Array.from({ length: RUNS }, (_, i) => 100_000 + i * PER_RUN))(
  `${PER_RUN} mutants from seed %i (of ${MUTANTS}): inspect, check and the service agree on every one`,
  async (firstSeed) => {
    const { disagreements, judged } = await runDifferential(server, server.token(), sandboxConfig(), PER_RUN, firstSeed, 4, 60_000);
    expect(disagreements).toEqual([]);
    // No job failed an attempt and was queued again (a file's own fault ends that file at the first attempt).
    expect(warnings.filter((w) => /queued again|attempts ran out|processing failed/.test(w.msg))).toEqual([]);
    expect(judged.filter((v) => v.check !== null).length).toBeGreaterThan(PER_RUN / 5);
  },
  1_200_000,
);
