// Text files as Windows tools write them: Windows PowerShell 5.1's `>` and Out-File (UTF-16LE with a byte-order
// mark), Notepad's "Unicode" and "Unicode big endian" (UTF-16 with a mark) and "UTF-8 with BOM", and UTF-8 without
// a mark (PowerShell 7, Notepad since Windows 10 1903, every other tool). A UTF-16LE file without a mark (some
// editors' "UCS-2 LE") is recognized by its zero high bytes.

/** The encoding `decodeText` found, for messages. */
export type TextEncoding = 'utf-8' | 'utf-8 with BOM' | 'utf-16le with BOM' | 'utf-16be with BOM' | 'utf-16le';

/** The text of a file's bytes, with its byte-order mark dropped, and the encoding it was read as. */
export function decodeText(bytes: Uint8Array): { text: string; encoding: TextEncoding } {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { text: b.subarray(3).toString('utf8'), encoding: 'utf-8 with BOM' };
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe)
    return { text: b.subarray(2, b.length - (b.length % 2)).toString('utf16le'), encoding: 'utf-16le with BOM' };
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) {
    const body = Buffer.from(b.subarray(2, b.length - (b.length % 2)));
    return { text: body.swap16().toString('utf16le'), encoding: 'utf-16be with BOM' };
  }
  if (b.length >= 4 && b.length % 2 === 0 && b[0] !== 0 && b[1] === 0 && b[2] !== 0 && b[3] === 0) return { text: b.toString('utf16le'), encoding: 'utf-16le' };
  return { text: b.toString('utf8'), encoding: 'utf-8' };
}

/** The first character of `text` that a one-word secret may not hold, said in words (`a space at character 12`), or undefined. */
export function describeNonPrintable(text: string): string | undefined {
  const at = [...text].findIndex((c) => !/^[\x21-\x7e]$/.test(c));
  if (at < 0) return undefined;
  const c = [...text][at]!;
  const code = `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  const names: Record<string, string> = {
    ' ': 'a space',
    '\t': 'a tab',
    '\0': 'a NUL',
    '\u00a0': 'a no-break space',
    '\ufeff': 'a byte-order mark',
    '\r': 'a carriage return',
  };
  const what =
    names[c] ?? (c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f ? `a control character (${code})` : `a character outside printable ASCII (${code})`);
  return `${what} at character ${at + 1}`;
}
