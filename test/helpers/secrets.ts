// Looking for a secret in what signgate (or MSBuild around it) printed or wrote: the secret as written, in base64,
// base64url and hex, and every 16-character piece of each, so that a cut or re-encoded copy is found too.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, inflateRawSync } from 'node:zlib';

/** The secret's encodings: as written, base64 (with and without padding), base64url, hex in both cases. */
export function encodings(secret: string): Record<string, string> {
  const b = Buffer.from(secret, 'utf8');
  return {
    plain: secret,
    base64: b.toString('base64').replace(/=+$/, ''),
    base64url: b.toString('base64url'),
    hex: b.toString('hex'),
    HEX: b.toString('hex').toUpperCase(),
  };
}

/** What to search for: each encoding's 16-character pieces (the whole encoding when it is shorter). */
export function needles(secret: string, piece = 16): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, form] of Object.entries(encodings(secret))) {
    if (form.length <= piece) out.set(form, name);
    else for (let i = 0; i + piece <= form.length; i++) out.set(form.slice(i, i + piece), name);
  }
  return out;
}

/** The first place a secret shows in `text`: which encoding, and a little context with the piece masked; or undefined. */
export function findSecret(text: string, secret: string): string | undefined {
  for (const [needle, name] of needles(secret)) {
    const at = text.indexOf(needle);
    if (at >= 0) return `${name} piece at ${at}, after: …${text.slice(Math.max(0, at - 60), at)}`;
  }
  return undefined;
}

/** Every secret from `secrets` found in `text`, by name, with where. */
export function leaks(where: string, text: string, secrets: Record<string, string>): string[] {
  return Object.entries(secrets).flatMap(([name, secret]) => {
    const found = findSecret(text, secret);
    return found ? [`${where}: ${name} (${found})`] : [];
  });
}

/** Every file below `dir` (or `dir` itself), as text; binary files are searched as latin1 and as UTF-16LE too. */
export function filesUnder(dir: string): { path: string; text: string }[] {
  const st = statSync(dir);
  if (!st.isDirectory()) {
    const bytes = readFileSync(dir);
    return [{ path: dir, text: `${bytes.toString('latin1')}\n${bytes.toString('utf16le')}` }];
  }
  return readdirSync(dir).flatMap((name) => filesUnder(join(dir, name)));
}

/**
 * The text of an MSBuild binary log: the GZip stream inflated (its string table, records and environment), and
 * each file of the embedded project-imports ZIP inflated as well, since deflate hides a plain search.
 */
export function binlogText(path: string): string {
  const raw = gunzipSync(readFileSync(path));
  const parts = [raw.toString('latin1'), raw.toString('utf16le')];
  for (let at = raw.indexOf('PK\x03\x04', 0, 'latin1'); at >= 0; at = raw.indexOf('PK\x03\x04', at + 4, 'latin1')) {
    const method = raw.readUInt16LE(at + 8);
    const nameLength = raw.readUInt16LE(at + 26);
    const extraLength = raw.readUInt16LE(at + 28);
    const data = raw.subarray(at + 30 + nameLength + extraLength);
    try {
      parts.push((method === 8 ? inflateRawSync(data, { finishFlush: 2 }) : data.subarray(0, raw.readUInt32LE(at + 18))).toString('utf8'));
    } catch {
      // Not a local file header after all (the bytes happened to match): nothing to inflate.
    }
  }
  return parts.join('\n');
}
