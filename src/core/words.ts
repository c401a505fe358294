// Words a user may have mistyped: the nearest known one, for "did you mean".

/** Edit distance between two words (Levenshtein), case-insensitively: single-character insertions, deletions and substitutions. */
export function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length]!;
}

/** The candidate nearest to `word` when it is close enough to be a typo. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * The option nearest to a mistyped one: within a typo's distance (see closest), else the only one it begins, or the
 * only one whose dash-separated words it is one of (`destination` for `destination-path`).
 */
export function closestOption(word: string, options: readonly string[]): string | undefined {
  const near = closest(word, options);
  if (near) return near;
  const w = word.toLowerCase();
  const starting = options.filter((o) => o.toLowerCase().startsWith(w));
  if (starting.length === 1) return starting[0];
  const containing = options.filter((o) => o.toLowerCase().split('-').includes(w));
  return containing.length === 1 ? containing[0] : undefined;
}
