// A scan worker thread (started by scan.ts with this module as its entry, no pool library): each message is one
// run of consecutive files; the answer is their records, or their JSON text (a string crosses threads far cheaper
// than the object it was made from), in the order of the messages.
import { parentPort } from 'node:worker_threads';
import { scanJson, scanners, type ScanInput, type ScanKind, type ScanSettings, type VerifyRecord } from './scan-file.js';
import type { AssemblyInfo } from '../strongname/assembly-info.js';

export interface ScanTask {
  readonly kind: ScanKind;
  readonly files: readonly ScanInput[];
  readonly settings: ScanSettings;
  /** Return each record's ScanJson instead of the record. */
  readonly json?: boolean;
}

/** A message to a scan thread: a task and the number its answer carries. */
export interface ScanMessage {
  readonly id: number;
  readonly task: ScanTask;
}

/** A scan thread's answer: the records (or their ScanJson) of the task `id`, or the error it threw. */
export type ScanAnswer = { readonly id: number; readonly records: unknown[] } | { readonly id: number; readonly error: unknown };

export default function scanTask({ kind, files, settings, json }: ScanTask): unknown[] {
  const scan = scanners[kind] as (file: ScanInput, settings: ScanSettings) => AssemblyInfo | VerifyRecord;
  return files.map((file) => (json ? scanJson(scan(file, settings)) : scan(file, settings)));
}

// Run as a worker thread's entry: answer each message.
parentPort?.on('message', ({ id, task }: ScanMessage) => {
  let answer: ScanAnswer;
  try {
    answer = { id, records: scanTask(task) };
  } catch (error) {
    answer = { id, error };
  }
  parentPort!.postMessage(answer);
});
