import { defineConfig } from 'vitest/config';
import LongFirstSequencer from './test/helpers/long-first-sequencer.js';
import SummaryReporter from './test/helpers/summary-reporter.js';

/**
 * The heavy leg, which `npm test` leaves out: the one-file executables, the Windows executable under Wine and the
 * NuGet packages (they fetch Node binaries and write about 1 GB), a consumer's install from the registry, the build
 * without the optional pkcs11js (a second full type-check), the corpora, 20 service processes started one after
 * the other on a PKCS#11 token (test/server/jobs/pkcs11-process.test.ts), Go's sumdb note and tlog checking the record's
 * checkpoints and proofs (test/record/go-sumdb.test.ts), records larger than the heap verified in bounded memory (64 MB
 * in test/record/record-over-heap.test.ts, 600 MB in test/record/record-large.test.ts), 8 `sign` runs at once on one job
 * ledger (test/client/ledger-parallel-sign-eight.test.ts; 2 and 3 are in the service leg), and the fault injection of test/faults (a
 * disk that fills up, a lost answer, rounds of kill -9 and restart of the service with hundreds of files in
 * flight). `npm run test:heavy` runs them.
 */
export const HEAVY = [
  'test/strongname/well-formed-differential-heavy.test.ts',
  'test/package/sea.test.ts',
  'test/package/wine.test.ts',
  'test/package/nuget.test.ts',
  'test/package/consumer.test.ts',
  'test/package/without-pkcs11js.test.ts',
  'test/corpus/**',
  'test/server/jobs/pkcs11-process.test.ts',
  'test/server/jobs/pkcs11-key-wait.test.ts',
  'test/faults/**',
  'test/record/go-sumdb.test.ts',
  'test/record/record-over-heap.test.ts',
  'test/record/record-large.test.ts',
  'test/client/ledger-parallel-sign-eight.test.ts',
];
/**
 * The SDK leg, which `npm test` leaves out too: the tests that run real `dotnet build`s of projects (the MSBuild
 * targets in add-in projects, the rebuild of the SDK fixtures, the OpenAPI readers, the generated C# client and the
 * two strong-namers `npm run bench` times fix against),
 * minutes of MSBuild, and the programs compiled again and again by mcs and Roslyn until their .text ends where
 * strongNameAssembly must move the metadata's tail, then run on Mono and .NET (test/strongname/strong-name-layout.test.ts),
 * and a strong-named add-in with its fixed dependencies run on .NET by tools/fix-host (strong-name-writer.test.ts, a
 * minute). `npm run test:sdk` runs them. The tests that only run a tool of tools/ for a moment build it once per run
 * (buildOnce in test/sdk/dotnet.ts) and stay in `npm test`.
 */
export const SDK = [
  'test/sdk/msbuild.test.ts',
  'test/sdk/msbuild-fix.test.ts',
  'test/sdk/msbuild-diagnostics.test.ts',
  'test/sdk/msbuild-keys.test.ts',
  'test/sdk/msbuild-solution.test.ts',
  'test/sdk/sdk-rebuild.test.ts',
  'test/sdk/openapi-reader.test.ts',
  'test/sdk/csharp-client.test.ts',
  'test/sdk/fix-peers.test.ts',
  'test/sdk/sbom-publish.test.ts',
  'test/sdk/ship-release.test.ts',
  'test/sdk/xml-serializers.test.ts',
  'test/strongname/strong-name-layout.test.ts',
  'test/strongname/strong-name-writer.test.ts',
];
/**
 * The service leg, which `npm test` leaves out too: the reference service (test/server: its processes, stores,
 * record, reloads, browsers on its pages), the client against it (test/client: sign, jobs, the ledger, hostile
 * services), the README's first steps with the service and the sweep for secrets, on the data directory; `npm run test:service` runs them, `npm run test:postgres` runs test/server again
 * on PostgreSQL. What is in HEAVY stays there.
 */
export const SERVICE = [
  'test/server/**/*.test.ts',
  'test/client/**/*.test.ts',
  // Service processes as a user starts them: the README's first steps, and the secrets swept from every output.
  'test/cli/readme-service.test.ts',
  'test/secrets/leaks.test.ts',
];
const LEGS: Record<string, { include: string[]; exclude: string[] }> = {
  heavy: { include: HEAVY, exclude: [] },
  sdk: { include: SDK, exclude: [] },
  service: { include: SERVICE, exclude: [...HEAVY, ...SDK] },
  postgres: { include: ['test/server/**/*.test.ts'], exclude: [...HEAVY, ...SDK] },
};
const leg = LEGS[process.env.SIGNGATE_TEST_LEG ?? ''];
/** `npx vitest run test/x/y.test.ts` names files: they run whichever leg they are in. */
const named = process.argv.some((a, i) => /\.test\.ts$/.test(a) && !a.startsWith('-') && process.argv[i - 1] !== '--exclude');

export default defineConfig({
  test: {
    // CI runs every leg (.ci/run).
    include: leg?.include ?? ['test/**/*.test.ts'],
    exclude: leg?.exclude ?? (named ? [] : [...HEAVY, ...SDK, ...SERVICE]),
    // A temporary folder of the run's own, removed at its end.
    globalSetup: ['./test/helpers/temp-root.ts'],
    // Ceilings, not estimates: a test that waits for something (a process listening, a job finished) waits for the
    // event through test/helpers/wait.ts, whose own ceiling (minutes) ends the wait with what it waited for and what
    // it saw last. These only stop a test that hangs outside such a wait; a loaded machine never comes near them.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Most tests wait on the processes they spawn (services, the CLI, Mono, dotnet): with two workers a 2-core machine
    // ran the suite on about one core (103 % CPU, 421 s); four keep both busy (176 %, 248 s).
    maxWorkers: 4,
    reporters: ['default', new SummaryReporter()],
    // The slowest files start first (test/helpers/long-first-sequencer.ts).
    sequence: { sequencer: LongFirstSequencer },
  },
});
