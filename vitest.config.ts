import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/helpers/summary-reporter.js';

/**
 * The heavy legs, which `npm test` leaves out: the one-file executables, the Windows executable under Wine and the
 * NuGet packages (they fetch Node binaries and write about 1 GB), a consumer's install from the registry, the build
 * without the optional pkcs11js (a second full type-check), and the
 * corpora. `npm run test:heavy` runs them;
 * CI runs both (.ci/run).
 */
export const HEAVY = ['test/package/sea.test.ts', 'test/package/wine.test.ts', 'test/package/nuget.test.ts', 'test/package/consumer.test.ts', 'test/package/without-pkcs11js.test.ts', 'test/corpus/**'];
const heavy = process.env.SIGNGATE_TEST_LEG === 'heavy';

export default defineConfig({
  test: {
    include: heavy ? HEAVY : ['test/**/*.test.ts'],
    exclude: heavy ? [] : HEAVY,
    // A temporary folder of the run's own, removed at its end.
    globalSetup: ['./test/helpers/temp-root.ts'],
    // Ceilings, not estimates: a test that waits for something (a process listening, a job finished) waits for the
    // event through test/helpers/wait.ts, whose own ceiling (minutes) ends the wait with what it waited for and what
    // it saw last. These only stop a test that hangs outside such a wait; a loaded machine never comes near them.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    // Corpus and CLI tests spawn processes; two workers fit a 2-core machine.
    maxWorkers: 2,
    reporters: ['default', new SummaryReporter()],
  },
});
