// Progress for uploads and downloads: a bar on a terminal (cli-progress), a few plain lines otherwise (CI logs).
import cliProgress from 'cli-progress';
import type { RetryInfo } from '../service-client/http.js';
import type { Io } from './output.js';

/** The line before a retry: the request and its URL once, why, and when (`retrying GET …/licenses (status 503) in 500 ms`). */
export function retryLine(r: RetryInfo): string {
  return `retrying ${r.method} ${r.url} (${r.reason}) in ${r.delayMs} ms`;
}

export type ProgressReporter = { update(done: number, total: number): void; stop(): void };

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

export function createProgress(label: string, io: Io, interactive = Boolean(process.stderr.isTTY)): ProgressReporter {
  if (interactive) {
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {percentage}% | {value_mb} of {total_mb}`, hideCursor: true, stream: process.stderr, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update: (done, total) => {
        if (!started) {
          bar.start(Math.max(total, 1), 0, { value_mb: mb(0), total_mb: mb(total) });
          started = true;
        }
        bar.setTotal(Math.max(total, 1));
        bar.update(done, { value_mb: mb(done), total_mb: mb(total) });
      },
      stop: () => {
        if (started) bar.stop();
      },
    };
  }
  let lastQuarter = -1;
  return {
    update: (done, total) => {
      if (total < 1_000_000) return; // small transfers finish before a line would help
      const quarter = total > 0 ? Math.floor((done / total) * 4) : 0;
      if (quarter > lastQuarter) {
        lastQuarter = quarter;
        io.err(`${label}: ${mb(done)}${total ? ` of ${mb(total)} (${quarter * 25}%)` : ''}`);
      }
    },
    stop: () => {},
  };
}
