// A scan pool thread (run by piscina): one task scans a run of consecutive files and returns their records, or
// their JSON text (a string crosses threads far cheaper than the object it was made from).
import { scanJson, scanners, type ScanInput, type ScanKind, type ScanSettings, type VerifyRecord } from './scan-file.js';
import type { AssemblyInfo } from '../strongname/assembly-info.js';

export interface ScanTask {
  readonly kind: ScanKind;
  readonly files: readonly ScanInput[];
  readonly settings: ScanSettings;
  /** Return each record's ScanJson instead of the record. */
  readonly json?: boolean;
}

export default function scanTask({ kind, files, settings, json }: ScanTask): unknown[] {
  const scan = scanners[kind] as (file: ScanInput, settings: ScanSettings) => AssemblyInfo | VerifyRecord;
  return files.map((file) => (json ? scanJson(scan(file, settings)) : scan(file, settings)));
}
