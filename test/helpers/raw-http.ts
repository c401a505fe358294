// Requests written byte for byte: multipart bodies as other clients build them, and bodies that stall.
import { connect } from 'node:net';
import { request } from 'node:http';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends one request with exactly these headers and body bytes. */
export function sendRaw(url: string, method: string, headers: Record<string, string | number>, body: Uint8Array = new Uint8Array()): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface MultipartPart {
  /** Header lines in the order they are written, without CRLF. */
  headers: string[];
  body: Uint8Array;
}

/** A multipart body laid out as .NET's MultipartContent writes it: no preamble, CRLF before each later boundary; headers in UTF-8. */
export function multipartBytes(boundary: string, parts: MultipartPart[]): Buffer {
  const chunks: Buffer[] = [];
  parts.forEach((part, i) => {
    chunks.push(Buffer.from(`${i === 0 ? '' : '\r\n'}--${boundary}\r\n${part.headers.map((h) => `${h}\r\n`).join('')}\r\n`, 'utf8'));
    chunks.push(Buffer.from(part.body));
  });
  chunks.push(Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1'));
  return Buffer.concat(chunks);
}

export interface StalledRequest {
  /** Resolves with what the server wrote before it closed the connection (or after `waitMs`). */
  outcome: Promise<{ closed: boolean; text: string; elapsedMs: number }>;
  destroy(): void;
}

/** Writes `head` and the first body bytes over a plain socket, then sends nothing more. */
export function stalledRequest(port: number, head: string, firstBytes: Uint8Array, waitMs: number): StalledRequest {
  const socket = connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  socket.write(head);
  socket.write(firstBytes);
  const outcome = new Promise<{ closed: boolean; text: string; elapsedMs: number }>((resolve) => {
    const timer = setTimeout(() => resolve({ closed: false, text, elapsedMs: Date.now() - started }), waitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, text, elapsedMs: Date.now() - started });
    });
  });
  return { outcome, destroy: () => socket.destroy() };
}
