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

/** True when `namespace` is `root` or lies below it (`Contoso`, `Contoso.Addins`). */
export function isInNamespace(namespace: string, root: string): boolean {
  return namespace === root || namespace.startsWith(`${root}.`);
}
