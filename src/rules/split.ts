// Proposes a split of the upload into jobs that each fit the size limit, with unique names in each job.
import { windowsPathKey } from '../core/windows-names.js';

export interface SplitItem {
  readonly path: string;
  readonly uploadName: string;
  readonly size: number;
  /** Items with the same unit go into one job together (a multi-module assembly: its manifest's path). */
  readonly unit?: string;
}

export interface SplitPlan {
  readonly jobs: readonly (readonly SplitItem[])[];
  /** Files (or units of files) larger than the limit on their own: no split can upload them. */
  readonly tooLarge: readonly SplitItem[];
}

/** First-fit decreasing: largest units first, each into the first job with room and no file of the same name. */
export function proposeSplit(items: readonly SplitItem[], maxBytes: number): SplitPlan {
  const units = new Map<string, SplitItem[]>();
  for (const item of items) {
    const key = item.unit ?? item.path;
    units.set(key, [...(units.get(key) ?? []), item]);
  }
  const sizeOf = (unit: readonly SplitItem[]) => unit.reduce((n, i) => n + i.size, 0);
  const jobs: { items: SplitItem[]; bytes: number; names: Set<string> }[] = [];
  const tooLarge: SplitItem[] = [];
  const sorted = [...units.entries()].sort(([a, x], [b, y]) => sizeOf(y) - sizeOf(x) || (a < b ? -1 : 1)).map(([, unit]) => unit);
  for (const unit of sorted) {
    const size = sizeOf(unit);
    if (size > maxBytes) {
      tooLarge.push(...unit);
      continue;
    }
    const names = unit.map((i) => windowsPathKey(i.uploadName));
    let job = jobs.find((j) => j.bytes + size <= maxBytes && !names.some((n) => j.names.has(n)));
    if (!job) {
      job = { items: [], bytes: 0, names: new Set() };
      jobs.push(job);
    }
    job.items.push(...unit);
    job.bytes += size;
    names.forEach((n) => job.names.add(n));
  }
  return { jobs: jobs.map((j) => j.items.sort((a, b) => (a.path < b.path ? -1 : 1))), tooLarge };
}
