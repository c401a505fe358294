// File names compared as Windows compares them: NTFS looks names up through its upcase table, which maps
// each UTF-16 code unit to one code unit (simple uppercase mapping, no normalization, no full case folding).

/**
 * One path segment as NTFS compares it: every UTF-16 code unit uppercased on its own, and only where the
 * uppercase form is a single code unit. So `σ` and `ς` both become `Σ`, `ß` stays `ß` (its uppercase is
 * `SS`), surrogate halves stay as they are (the upcase table covers the BMP only), and `é` (U+00E9) and
 * `e` + U+0301 stay different names (NTFS does not normalize). The Win32 layer also drops trailing dots and
 * spaces from a segment (`a.dll.` opens `a.dll`), so they are stripped before comparing; whether such a
 * name may be used at all is the caller's decision (the service refuses it).
 *
 * The mapping follows the Unicode tables of this JavaScript engine, which may differ from a volume's
 * upcase table for characters added after the volume was formatted; 8.3 short names are not considered.
 */
export function windowsSegmentKey(segment: string): string {
  const stripped = segment.replace(/[. ]+$/, '');
  let key = '';
  for (let i = 0; i < stripped.length; i++) {
    const unit = stripped[i]!;
    const upper = unit.toUpperCase();
    key += upper.length === 1 ? upper : unit;
  }
  return key;
}

/** A relative path as Windows compares it: `\` and `/` both separate segments, each compared by `windowsSegmentKey`. */
export function windowsPathKey(path: string): string {
  return path.split(/[\\/]/).map(windowsSegmentKey).join('/');
}

/** True when Windows would take the two relative paths for the same file. */
export function sameWindowsPath(a: string, b: string): boolean {
  return windowsPathKey(a) === windowsPathKey(b);
}

const RESERVED = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])(\..*)?$/i;
/** A device name with what Win32 drops after it: spaces before an extension, trailing dots and spaces. */
const DEVICE = /^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])[ ]*(\..*)?$/i;

/**
 * The reserved device name a path segment stands for on Windows (`CON` for `con.dll`, `CON .txt`, `Con.`), or
 * undefined: Win32 opens the device, not a file, whatever the extension.
 */
export function windowsDeviceName(segment: string): string | undefined {
  const m = DEVICE.exec(segment.replace(/[. ]+$/, ''));
  return m ? m[1]!.toUpperCase() : undefined;
}
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
