// serve.pid: the process of `signgate serve` that runs on a data directory (written at its start, removed at its
// stop), so that an operator's command that must not change the data behind a running service (serve jobs prune)
// can tell. A file whose process is gone (a crash, kill -9) is stale and means nothing.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PID_FILE = 'serve.pid';

export interface ServePid {
  readonly pid: number;
  readonly startedAt: string;
}

/** Writes the data directory's serve.pid for this process; returns the function that removes it. */
export function writeServePid(dataDir: string): () => void {
  const path = join(dataDir, PID_FILE);
  writeFileSync(path, `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() })}\n`, { mode: 0o600 });
  return () => {
    try {
      if ((JSON.parse(readFileSync(path, 'utf8')) as ServePid).pid === process.pid) rmSync(path, { force: true });
    } catch {
      // gone already, or another service's now
    }
  };
}

/** The service that runs on the data directory now, or undefined (no serve.pid, or its process is gone). */
export function runningService(dataDir: string): ServePid | undefined {
  let found: ServePid;
  try {
    found = JSON.parse(readFileSync(join(dataDir, PID_FILE), 'utf8')) as ServePid;
  } catch {
    return undefined;
  }
  if (!Number.isInteger(found.pid) || found.pid <= 0) return undefined;
  try {
    process.kill(found.pid, 0);
    return found;
  } catch (error) {
    // EPERM: the process exists and belongs to another user (the service's account).
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? found : undefined;
  }
}
