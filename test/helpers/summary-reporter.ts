// Prints one plain closing line, "N passed, N failed, N skipped", after vitest's own report. A run stopped from
// outside (SIGTERM, SIGINT: CI's time limit) first prints the test files still running, and for how long, so that
// the last lines of the log name what was slow or stuck.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private readonly running = new Map<string, number>();
  private readonly started = Date.now();

  onInit(): void {
    for (const signal of ['SIGTERM', 'SIGINT'] as const)
      process.once(signal, () => {
        const now = Date.now();
        const files = [...this.running].map(([file, since]) => `${file} (${Math.round((now - since) / 1000)} s)`);
        process.stdout.write(
          `\nstopped by ${signal} after ${Math.round((now - this.started) / 1000)} s; test files still running: ${files.length ? files.join(', ') : 'none'}\n`,
        );
        process.kill(process.pid, signal);
      });
  }

  onTestModuleStart(module: TestModule): void {
    this.running.set(module.moduleId.replace(`${process.cwd()}/`, ''), Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    this.running.delete(module.moduleId.replace(`${process.cwd()}/`, ''));
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
