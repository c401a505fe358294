// Findings: what a rule reports about a file or the upload set.

export const Severities = ['error', 'warning', 'note'] as const;
export type Severity = (typeof Severities)[number];
/** A configured severity: `off` disables a rule. */
export type SeveritySetting = Severity | 'off';

export interface FindingLocation {
  readonly fileOffset: number;
  readonly length?: number;
}

export interface Finding {
  /** Stable id, SGnnn. */
  readonly ruleId: string;
  /** Kebab-case rule name. */
  readonly rule: string;
  readonly severity: Severity;
  /** What is wrong, with the values found. */
  readonly message: string;
  /** What to do about it. */
  readonly hint: string;
  /** The file, as displayed (POSIX path relative to the working directory), or null for the whole set. */
  readonly file: string | null;
  readonly location?: FindingLocation;
  /** Machine-readable facts (tokens, sizes, names). */
  readonly data?: Readonly<Record<string, unknown>>;
}

const RANK: Record<Severity, number> = { error: 0, warning: 1, note: 2 };

/** Orders findings by file, then offset, then rule id; set-level findings last. */
export function compareFindings(a: Finding, b: Finding): number {
  if (a.file !== b.file) {
    if (a.file === null) return 1;
    if (b.file === null) return -1;
    return a.file < b.file ? -1 : 1;
  }
  const ao = a.location?.fileOffset ?? -1;
  const bo = b.location?.fileOffset ?? -1;
  if (ao !== bo) return ao - bo;
  if (a.ruleId !== b.ruleId) return a.ruleId < b.ruleId ? -1 : 1;
  return RANK[a.severity] - RANK[b.severity] || (a.message < b.message ? -1 : a.message > b.message ? 1 : 0);
}
