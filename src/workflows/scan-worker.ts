// A scan pool thread (run by piscina): one task scans a run of consecutive files and returns their records.
import { scanners, type ScanInput, type ScanKind, type ScanSettings } from './scan-file.js';

export interface ScanTask {
  readonly kind: ScanKind;
  readonly files: readonly ScanInput[];
  readonly settings: ScanSettings;
}

export default function scanTask({ kind, files, settings }: ScanTask): unknown[] {
  const scan = scanners[kind] as (file: ScanInput, settings: ScanSettings) => unknown;
  return files.map((file) => scan(file, settings));
}
