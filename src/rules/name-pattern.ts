// Assembly-name patterns such as `Contoso.*`: `*` any run of characters, `?` one; case-insensitive,
// as assembly names are compared by the .NET loader.

export type NameMatcher = (name: string) => boolean;

export function compileNamePatterns(patterns: readonly string[]): NameMatcher {
  const regexes = patterns.map((p) => {
    const body = p
      .split('')
      .map((ch) => (ch === '*' ? '.*' : ch === '?' ? '.' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('');
    return new RegExp(`^${body}$`, 'i');
  });
  return (name) => regexes.some((r) => r.test(name));
}

/**
 * When `name` is `root` or lies below it (`Contoso`, `Contoso.Addins`), ignoring case: the part of `name` that
 * matches `root`, in `name`'s own spelling; else undefined.
 */
export function namespacePrefix(name: string, root: string): string | undefined {
  const n = name.toLowerCase();
  const r = root.toLowerCase();
  return n === r || n.startsWith(`${r}.`) ? name.slice(0, root.length) : undefined;
}
