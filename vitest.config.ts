import { defineConfig } from 'vitest/config';
import SummaryReporter from './test/helpers/summary-reporter.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Corpus and CLI tests spawn processes; two workers fit a 2-core machine.
    maxWorkers: 2,
    reporters: ['default', new SummaryReporter()],
  },
});
