// File names as Windows sees them: our users' file systems are NTFS, so two names that differ only in case are
// one file, and some names cannot be created at all.

/**
 * A key under which names that NTFS treats as the same file are equal: each UTF-16 code unit upper-cased
 * by its simple mapping (NTFS's upcase table maps σ and ς both to Σ), separators folded to `/`.
 */
export function windowsNameKey(name: string): string {
  let out = '';
  for (const ch of name.replace(/\\/g, '/')) {
    const upper = ch.toUpperCase();
    out += upper.length === ch.length ? upper : ch;
  }
  return out;
}

const RESERVED = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])(\..*)?$/i;
const FORBIDDEN = /[<>:"|?*\u0000-\u001f]/;

/** Why a relative path (`/` or `\`) cannot be written on Windows as it is, or undefined when it can. */
export function windowsNameProblem(name: string): string | undefined {
  const n = name.replace(/\\/g, '/');
  if (n === '' || n.endsWith('/')) return 'has an empty name';
  if (n.startsWith('/')) return 'is an absolute path';
  if (/^[A-Za-z]:/.test(n)) return 'has a drive letter';
  for (const segment of n.split('/')) {
    if (segment === '' || segment === '.') return 'has an empty or "." folder';
    if (segment === '..') return 'has a ".." segment';
    if (FORBIDDEN.test(segment)) return `has a character Windows does not allow in ${JSON.stringify(segment)}`;
    if (/[. ]$/.test(segment)) return `ends ${JSON.stringify(segment)} with a dot or space, which Windows drops`;
    if (RESERVED.test(segment)) return `uses the reserved Windows device name ${JSON.stringify(segment)}`;
    if (Buffer.byteLength(segment, 'utf16le') / 2 > 255) return 'has a folder or file name longer than 255 characters';
  }
  return undefined;
}
