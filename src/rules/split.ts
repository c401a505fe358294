// Proposes a split of the upload into jobs that each fit the size limit, with unique names in each job.
import { windowsPathKey } from '../core/windows-names.js';

export interface SplitItem {
  readonly path: string;
  readonly uploadName: string;
  readonly size: number;
}

export interface SplitPlan {
  readonly jobs: readonly (readonly SplitItem[])[];
  /** Files larger than the limit on their own: no split can upload them. */
  readonly tooLarge: readonly SplitItem[];
}

/** First-fit decreasing: largest files first, each into the first job with room and no file of the same name. */
export function proposeSplit(items: readonly SplitItem[], maxBytes: number): SplitPlan {
  const jobs: { items: SplitItem[]; bytes: number; names: Set<string> }[] = [];
  const tooLarge: SplitItem[] = [];
  const sorted = [...items].sort((a, b) => b.size - a.size || (a.path < b.path ? -1 : 1));
  for (const item of sorted) {
    if (item.size > maxBytes) {
      tooLarge.push(item);
      continue;
    }
    const name = windowsPathKey(item.uploadName);
    let job = jobs.find((j) => j.bytes + item.size <= maxBytes && !j.names.has(name));
    if (!job) {
      job = { items: [], bytes: 0, names: new Set() };
      jobs.push(job);
    }
    job.items.push(item);
    job.bytes += item.size;
    job.names.add(name);
  }
  return { jobs: jobs.map((j) => j.items.sort((a, b) => (a.path < b.path ? -1 : 1))), tooLarge };
}
