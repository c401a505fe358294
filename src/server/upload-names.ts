// Upload file names: relative paths with `/` (backslashes read as separators), nothing that could escape
// the job's folder, unique per folder level compared case-insensitively as Windows does.
import { SIGNING_LOG } from './signing-worker.js';

const FORBIDDEN = /[<>:"|?*\u0000-\u001f]/;
const DEVICE = /^(con|prn|aux|nul|com\d|lpt\d)(\..*)?$/i;
const MAX_NAME = 260;

export type NameCheck = { readonly ok: true; readonly name: string } | { readonly ok: false; readonly reason: string };

/** Checks one name and records it in `seen` (lower-cased path to the name first seen). */
export function checkUploadName(raw: string | undefined, seen: Map<string, string>): NameCheck {
  if (!raw) return { ok: false, reason: 'the part has an empty file name' };
  const name = raw.replace(/\\/g, '/');
  if (name.length > MAX_NAME) return { ok: false, reason: `the name is longer than ${MAX_NAME} characters` };
  if (name.startsWith('/')) return { ok: false, reason: 'absolute paths are not allowed; send paths relative to the root directory' };
  if (/^[A-Za-z]:/.test(name)) return { ok: false, reason: 'drive letters are not allowed; send paths relative to the root directory' };
  const segments = name.split('/');
  if (segments.some((s) => s === '')) return { ok: false, reason: 'empty path segments are not allowed' };
  if (segments.some((s) => s === '..' || s === '.')) return { ok: false, reason: "'.' and '..' segments are not allowed" };
  if (segments.some((s) => FORBIDDEN.test(s))) return { ok: false, reason: 'the name holds characters Windows does not allow in file names' };
  if (segments.some((s) => DEVICE.test(s) || s.endsWith('.') || s.endsWith(' '))) return { ok: false, reason: 'the name is a reserved device name or ends with a dot or space' };
  if (name.toLowerCase() === SIGNING_LOG) return { ok: false, reason: `${SIGNING_LOG} at the top level is reserved for the signing log` };
  const key = name.toLowerCase();
  const previous = seen.get(key);
  if (previous !== undefined) return { ok: false, reason: `another file has the same name at this folder level: ${previous} (names are compared case-insensitively)` };
  seen.set(key, name);
  return { ok: true, name };
}
