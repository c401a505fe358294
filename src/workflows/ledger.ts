// The local job ledger: what was uploaded where, with SHA-256 of each file and the job's state, so that a
// run interrupted by a network loss, Ctrl-C or a timeout resumes the same job instead of uploading again.
// JSON in the user's cache folder; it never holds a token.
import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from './files.js';
import { windowsPathKey } from '../core/windows-names.js';

export type LedgerState = 'uploaded' | 'finished' | 'downloaded' | 'verified' | 'failed' | 'deleted';

export interface LedgerFile {
  readonly name: string;
  readonly sha256: string;
  readonly size: number;
  /** Where the file was read from, as shown. */
  readonly source: string;
}

export interface LedgerEntry {
  readonly jobId: string;
  /** The job's URLs as the service gave them (same origin as baseUrl), when it gave any. */
  readonly links?: { readonly status?: string; readonly download?: string; readonly delete?: string };
  readonly baseUrl: string;
  readonly comment: string | null;
  readonly createdAt: string;
  updatedAt: string;
  state: LedgerState;
  readonly files: readonly LedgerFile[];
  destination?: string;
  /** Per file: the service's state, whether it verified, the SHA-256 of the returned file, the messages. */
  results?: { fileName: string; state: string; verified: boolean; outputSha256: string | null; messages: { dateTime: string | null; messageType: string; message: string }[] }[];
}

/** The cache folder: SIGNGATE_CACHE_DIR, else %LOCALAPPDATA%\signgate on Windows, else $XDG_CACHE_HOME/signgate or ~/.cache/signgate. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SIGNGATE_CACHE_DIR) return env.SIGNGATE_CACHE_DIR;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'signgate');
  return join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'signgate');
}

export function ledgerPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'jobs.json');
}

export class Ledger {
  private entries: LedgerEntry[];

  constructor(readonly path = ledgerPath()) {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as { jobs?: LedgerEntry[] };
      this.entries = Array.isArray(parsed.jobs) ? parsed.jobs : [];
    } catch {
      this.entries = [];
    }
  }

  all(): readonly LedgerEntry[] {
    return this.entries;
  }

  find(jobId: string): LedgerEntry | undefined {
    return this.entries.find((e) => e.jobId === jobId);
  }

  /** A job of the same service with exactly these files (names and contents) that was not completed. */
  resumable(baseUrl: string, files: readonly { name: string; sha256: string }[]): LedgerEntry | undefined {
    return this.latest(baseUrl, files, ['uploaded', 'finished', 'downloaded']);
  }

  /** The newest completed job of the same service with exactly these files. */
  completed(baseUrl: string, files: readonly { name: string; sha256: string }[]): LedgerEntry | undefined {
    return this.latest(baseUrl, files, ['verified', 'failed', 'deleted']);
  }

  private latest(baseUrl: string, files: readonly { name: string; sha256: string }[], states: readonly LedgerState[]): LedgerEntry | undefined {
    const key = (fs: readonly { name: string; sha256: string }[]) => fs.map((f) => `${windowsPathKey(f.name)}\u0000${f.sha256}`).sort().join('\n');
    const wanted = key(files);
    return [...this.entries].reverse().find((e) => e.baseUrl === baseUrl && states.includes(e.state) && key(e.files) === wanted);
  }

  upsert(entry: LedgerEntry): void {
    entry.updatedAt = new Date().toISOString();
    this.entries = [...this.entries.filter((e) => e.jobId !== entry.jobId), entry];
    this.save();
  }

  private save(): void {
    // The ledger names the service, its jobs and what it said: the user's alone (0600 in a 0700 folder).
    const folder = join(this.path, '..');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32') {
      try {
        if (statSync(folder).mode & 0o077) chmodSync(folder, 0o700);
      } catch {
        // a folder we may not change: the file itself is 0600
      }
    }
    writeFileAtomic(this.path, new TextEncoder().encode(`${JSON.stringify({ jobs: this.entries }, null, 2)}\n`), 0o600);
  }
}
