// Markdown as the docs tests read it: where the fenced code blocks are.

/** A fenced code block: the line numbers (0-based) of its opening and closing fence, and its info string. */
export interface Fence {
  open: number;
  close: number;
  info: string;
}

/**
 * The fenced code blocks of a text's lines (``` or ~~~, three or more; a block closes at a fence of the same
 * character at least as long, so a ```` block can show a ``` one). An unclosed block runs to the end.
 */
export function fences(lines: readonly string[]): Fence[] {
  const found: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const mark = open[1]!;
    let close = i + 1;
    while (close < lines.length && !new RegExp(`^\\s*${mark[0] === '`' ? '`' : '~'}{${mark.length},}\\s*$`).test(lines[close]!)) close++;
    found.push({ open: i, close, info: open[2]!.trim() });
    i = close;
  }
  return found;
}
