// RFC 2047 encoded-words in a multipart filename: .NET's ContentDispositionHeaderValue (HttpClient,
// PowerShell's Invoke-RestMethod -Form) writes a non-ASCII file name as filename="=?utf-8?B?…?=".
// filename*=UTF-8''… (RFC 5987 / RFC 7578) is decoded by busboy already.

const ENCODED_WORD = /=\?([^?*\s]+)(?:\*[^?\s]*)?\?([BbQq])\?([^?\s]*)\?=/y;

/** The bytes of one encoded-word's text; undefined when it is not valid B or Q encoding. */
function decodeWordBytes(encoding: string, text: string): Uint8Array | undefined {
  if (encoding === 'B' || encoding === 'b') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 === 1) return undefined;
    return Buffer.from(text, 'base64');
  }
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '_') bytes.push(0x20);
    else if (c === '=') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c.charCodeAt(0) > 0x20 && c.charCodeAt(0) < 0x7f) bytes.push(c.charCodeAt(0));
    else return undefined;
  }
  return Uint8Array.from(bytes);
}

/**
 * Decodes a value made only of RFC 2047 encoded-words (whitespace between adjacent words is dropped, as the
 * RFC says; adjacent words of one charset are joined before decoding, for encoders that split a character).
 * Anything else, an unknown charset or bytes that are not valid in the charset leave the value as it is: the
 * name checks then refuse it with a clear reason.
 */
export function decodeEncodedWords(value: string): string {
  const trimmed = value.trim();
  if (!trimmed.startsWith('=?')) return value;
  const runs: { charset: string; bytes: Uint8Array[] }[] = [];
  let position = 0;
  while (position < trimmed.length) {
    ENCODED_WORD.lastIndex = position;
    const match = ENCODED_WORD.exec(trimmed);
    if (!match) return value;
    const bytes = decodeWordBytes(match[2]!, match[3]!);
    if (!bytes) return value;
    const charset = match[1]!.toLowerCase();
    if (runs.at(-1)?.charset === charset) runs.at(-1)!.bytes.push(bytes);
    else runs.push({ charset, bytes: [bytes] });
    position = ENCODED_WORD.lastIndex;
    while (position < trimmed.length && /\s/.test(trimmed[position]!)) position++;
  }
  try {
    return runs.map((run) => new TextDecoder(run.charset, { fatal: true }).decode(Buffer.concat(run.bytes))).join('');
  } catch {
    return value; // an unknown charset, or bytes that are not text in it
  }
}
