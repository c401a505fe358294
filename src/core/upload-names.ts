// Upload file names: relative paths with `/` (backslashes read as separators), nothing that could escape
// the job's folder, each name unique and never both a file and a folder, compared as Windows compares names.
import { windowsPathKey } from './windows-names.js';

/** The signing log's name at the top of a result package; reserved in uploads. */
export const SIGNING_LOG = 'signing-log.txt';

const FORBIDDEN = /[<>:"|?*\u0000-\u001f]/;
const DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;
const MAX_NAME = 260;
/** NTFS allows 255 UTF-16 units per name, ext4 and most Linux file systems 255 bytes: the smaller limit wins. */
const MAX_SEGMENT_BYTES = 255;

export type NameCheck = { readonly ok: true; readonly name: string } | { readonly ok: false; readonly reason: string };

/** The names of one upload so far: each new name is checked against them as Windows would. */
export class UploadNames {
  /** Windows key of each file to its name as first seen. */
  private readonly files = new Map<string, string>();
  /** Windows key of each folder that holds a file, to the folder's path as first seen. */
  private readonly folders = new Map<string, string>();

  /** Checks one name and, when it is acceptable, records it. */
  check(raw: string | undefined): NameCheck {
    const shape = checkNameShape(raw);
    if (!shape.ok) return shape;
    const { name } = shape;
    const key = windowsPathKey(name);
    const previous = this.files.get(key);
    if (previous !== undefined)
      return {
        ok: false,
        reason: `another file has the same name at this folder level: ${previous} (names are compared as Windows compares them, ignoring case)`,
      };
    const folder = this.folders.get(key);
    if (folder !== undefined) return { ok: false, reason: `${folder} is also a folder of other files in this upload; a file and a folder cannot share a name` };
    const segments = name.split('/');
    const keys = key.split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const file = this.files.get(keys.slice(0, depth).join('/'));
      if (file !== undefined) return { ok: false, reason: `${file} is a file in this upload, so it cannot also be a folder` };
    }
    for (let depth = 1; depth < segments.length; depth++) {
      const folderKey = keys.slice(0, depth).join('/');
      if (!this.folders.has(folderKey)) this.folders.set(folderKey, segments.slice(0, depth).join('/'));
    }
    this.files.set(key, name);
    return { ok: true, name };
  }
}

/** The checks that need no other name: returns the name with `/` as separator. */
function checkNameShape(raw: string | undefined): NameCheck {
  if (!raw) return { ok: false, reason: 'the part has an empty file name' };
  const name = raw.replace(/\\/g, '/');
  if (name.length > MAX_NAME) return { ok: false, reason: `the name is longer than ${MAX_NAME} characters` };
  if (name.startsWith('/')) return { ok: false, reason: 'absolute paths are not allowed; send paths relative to the root directory' };
  if (/^[A-Za-z]:/.test(name)) return { ok: false, reason: 'drive letters are not allowed; send paths relative to the root directory' };
  const segments = name.split('/');
  if (segments.some((s) => s === '')) return { ok: false, reason: 'empty path segments are not allowed' };
  if (segments.some((s) => s === '..' || s === '.')) return { ok: false, reason: "'.' and '..' segments are not allowed" };
  if (segments.some((s) => Buffer.byteLength(s, 'utf8') > MAX_SEGMENT_BYTES))
    return { ok: false, reason: `a folder or file name is longer than ${MAX_SEGMENT_BYTES} bytes (UTF-8)` };
  if (segments.some((s) => FORBIDDEN.test(s))) return { ok: false, reason: 'the name holds characters Windows does not allow in file names' };
  // Windows drops trailing dots and spaces, so such a name would not arrive under the name it was sent as.
  if (segments.some((s) => DEVICE.test(s) || s.endsWith('.') || s.endsWith(' ')))
    return { ok: false, reason: 'the name is a reserved device name or ends with a dot or space' };
  if (windowsPathKey(name) === windowsPathKey(SIGNING_LOG)) return { ok: false, reason: `${SIGNING_LOG} at the top level is reserved for the signing log` };
  return { ok: true, name };
}
