// The body of an upload: multipart/form-data as .NET's MultipartFormDataContent writes it, streamed in pieces
// with progress, and never copied whole.
import { randomBytes } from 'node:crypto';

export interface UploadFile {
  /** The name the service gets: the path relative to the root, with `/` (sent with the configured separator). */
  readonly name: string;
  readonly bytes: Uint8Array;
}

export type Progress = (done: number, total: number) => void;

const CHUNK = 64 * 1024;

/**
 * A file name in a Content-Disposition header as .NET's MultipartFormDataContent writes it: quoted, no
 * escaping (Windows names hold no `"`), non-ASCII names as an RFC 2047 encoded word.
 */
export function dispositionFileName(name: string): string {
  const clean = name.replace(/[\r\n"]/g, '_');
  return /^[\x20-\x7e]*$/.test(clean) ? `"${clean}"` : `"=?utf-8?B?${Buffer.from(clean, 'utf8').toString('base64')}?="`;
}

export interface MultipartOptions {
  /** The folder separator in file names: `\\` as the vendor's script sends them (default), or `/`. */
  readonly separator?: '\\' | '/';
}

/** A multipart/form-data body as a byte stream, with its length, reporting progress as it is read. */
export function multipartBody(
  files: readonly UploadFile[],
  comment: string | undefined,
  onProgress?: Progress,
  options: MultipartOptions = {},
): { contentType: string; length: number; make: () => AsyncIterable<Uint8Array> } {
  const boundary = `----signgate${randomBytes(12).toString('hex')}`;
  const separator = options.separator ?? '\\';
  const enc = new TextEncoder();
  const pieces: Uint8Array[][] = files.map((f, i) => [
    enc.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="files[${i}]"; filename=${dispositionFileName(f.name.split('/').join(separator))}\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    f.bytes,
    enc.encode('\r\n'),
  ]);
  if (comment !== undefined)
    pieces.push([
      enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="comment"\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${comment}\r\n`),
    ]);
  pieces.push([enc.encode(`--${boundary}--\r\n`)]);
  const all = pieces.flat();
  const length = all.reduce((n, p) => n + p.length, 0);
  const fileBytes = files.reduce((n, f) => n + f.bytes.length, 0);
  const fileArrays = new Set<Uint8Array>(files.map((f) => f.bytes));
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
    make: async function* () {
      let sent = 0;
      for (const piece of all) {
        for (let at = 0; at < piece.length; at += CHUNK) {
          const chunk = piece.subarray(at, at + CHUNK);
          yield chunk;
          if (fileArrays.has(piece)) {
            sent += chunk.length;
            onProgress?.(sent, fileBytes);
          }
        }
      }
    },
  };
}
