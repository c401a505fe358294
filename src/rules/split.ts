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

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/**
 * What to say of files that alone exceed the upload limit (`SplitPlan.tooLarge`): their names and sizes and the
 * limit, and what works instead, since no split can upload them.
 */
export function describeTooLarge(tooLarge: readonly SplitItem[], maxBytes: number): { message: string; hint: string } {
  const one = tooLarge.length === 1;
  return {
    message: `${tooLarge.map((f) => `${f.path} (${mb(f.size)}, ${f.size} bytes)`).join(', ')} ${one ? 'is' : 'are each'} larger on ${one ? 'its' : 'their'} own than the upload limit of ${mb(maxBytes)} (${maxBytes} bytes): no split can upload ${one ? 'it' : 'them'}`,
    hint:
      `Make the assembly smaller (move large embedded resources into a satellite or a separate assembly), or ask the service's operator to raise its limit ` +
      `(the reference service: "limits": { "maxUploadBytes": … } in its server.json); if the service already takes more than ${mb(maxBytes)}, tell signgate with --max-upload-bytes.`,
  };
}
