// A stand-in for the vendor's signing service on loopback: it really signs what it receives (with the TEST key
// pair of option 12345), but differs from `signgate serve` wherever the vendor's published facts leave room or a
// test asks it to misbehave. Each difference is one option.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { parseStrongNameKeyFile } from '../../src/strongname/key-blob.js';
import { readModule } from '../../src/strongname/well-formed.js';
import { signAssembly } from '../../src/strongname/strong-name.js';
import { fixturePath } from './fixtures.js';
import { buildZip, type RawEntry } from './hostile-zip.js';

export interface UploadedPart {
  /** The part's headers as sent. */
  readonly disposition: string;
  readonly name: string | undefined;
  readonly filename: string | undefined;
  readonly data: Buffer;
}

export interface StandInOptions {
  /** How the upload answer names the job. */
  idStyle?: 'string' | 'number' | 'links-only' | { id: unknown };
  /** The state of a signed file (`Signed` in our service; `Success` elsewhere). */
  signedState?: string;
  /** The separator of file names in the status. */
  statusSeparator?: '/' | '\\';
  /** The name of the log file in the result package. */
  logName?: string;
  /** Entries of the result package, instead of the signed files and the log. */
  packageEntries?: (signed: RawEntry[]) => RawEntry[];
  /** Answer the upload with this status and body instead. */
  uploadError?: { status: number; contentType: string; body: string };
  /** The job list, instead of the real one. */
  list?: (ids: string[]) => unknown;
  /** The status body, instead of the real one. */
  status?: (real: Record<string, unknown>) => unknown;
  /** The upload answer, instead of the real one. */
  created?: (real: Record<string, unknown>) => unknown;
  /** Appended to every link of an upload answer (a gateway's `?access_token=…`, say). */
  linkSuffix?: string;
  /** Take over any request (return true when answered). */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface StandIn {
  readonly baseUrl: string;
  readonly origin: string;
  /** Every request as "METHOD url". */
  readonly seen: string[];
  /** The parts of each upload, in order. */
  readonly uploads: UploadedPart[][];
  /** Jobs still kept. */
  readonly jobs: Map<string, { files: { name: string; data: Buffer }[]; createdAt: string }>;
  close(): Promise<void>;
}

const PREFIX = '/assembly-signing/v1.0';
const KEY_PAIR = parseStrongNameKeyFile(readFileSync(fixturePath('test-keys/12345_keypair.snk')));

/** A multipart/form-data body split into parts, byte for byte (no decoding of names). */
export function parseMultipart(body: Buffer, contentType: string): UploadedPart[] {
  const boundary = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!boundary) throw new Error('no boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: UploadedPart[] = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // after CRLF, before CRLF
    const split = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, split).toString('latin1');
    const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1]?.trim() ?? '';
    parts.push({
      disposition,
      name: /\bname="([^"]*)"/.exec(disposition)?.[1],
      filename: /\bfilename="([^"]*)"/.exec(disposition)?.[1],
      data: Buffer.from(part.subarray(split + 4)),
    });
    at = next;
  }
  return parts;
}

function decodeName(raw: string): string {
  const m = /^=\?utf-8\?B\?([^?]*)\?=$/i.exec(raw);
  return (m ? Buffer.from(m[1]!, 'base64').toString('utf8') : raw).replace(/\\/g, '/');
}

export async function startStandIn(options: StandInOptions = {}): Promise<StandIn> {
  const seen: string[] = [];
  const uploads: UploadedPart[][] = [];
  const jobs: StandIn['jobs'] = new Map();
  let counter = 0;
  let origin = '';
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (options.intercept?.(req, res)) return;
      const url = req.url ?? '';
      if (!url.startsWith(PREFIX)) return json(res, 404, { message: 'not here' });
      const path = url.slice(PREFIX.length);
      if (path === '/licenses') return json(res, 200, [{ optionId: 12345, note: 'unknown fields are ignored' }]);
      if (req.method === 'POST' && path === '/assemblies') {
        if (options.uploadError)
          return res.writeHead(options.uploadError.status, { 'content-type': options.uploadError.contentType }).end(options.uploadError.body);
        const parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type'] ?? '');
        uploads.push(parts);
        const id = String(++counter);
        const files = parts.filter((p) => p.filename !== undefined).map((p) => ({ name: decodeName(p.filename!), data: p.data }));
        jobs.set(id, { files, createdAt: new Date().toISOString() });
        const suffix = options.linkSuffix ?? '';
        const links = { status: `${origin}${PREFIX}/jobs-by-link/${id}/state${suffix}`, download: `${origin}${PREFIX}/jobs-by-link/${id}/package${suffix}` };
        const style = options.idStyle ?? 'string';
        const answer = style === 'number' ? { id: counter } : style === 'links-only' ? { links } : typeof style === 'object' ? { id: style.id } : { id };
        return json(res, 201, options.created ? options.created({ ...answer, links }) : answer);
      }
      if (req.method === 'GET' && path === '/assemblies') {
        const ids = [...jobs.keys()];
        return json(
          res,
          200,
          options.list
            ? options.list(ids)
            : ids.map((id) => ({ id, createdAt: jobs.get(id)!.createdAt, processingFinished: true, fileCount: jobs.get(id)!.files.length })),
        );
      }
      const m = /^\/(?:assemblies|jobs-by-link)\/([^/]+)(\/status|\/state|\/package)?$/.exec(path);
      const job = m ? jobs.get(decodeURIComponent(m[1]!)) : undefined;
      if (!m || !job) return json(res, 404, { title: 'Not Found', status: 404 });
      if (req.method === 'DELETE') {
        jobs.delete(decodeURIComponent(m[1]!));
        return res.writeHead(204).end();
      }
      if (m[2] === '/status' || m[2] === '/state') {
        const real = {
          id: m[1],
          processingFinished: true,
          assemblies: job.files.map((f) => ({
            fileName: options.statusSeparator === '\\' ? f.name.replace(/\//g, '\\') : f.name,
            fileProcessingState: options.signedState ?? 'Signed',
            messages: [{ dateTime: new Date().toISOString(), messageType: 'Info', message: 'Signed.' }],
          })),
        };
        return json(res, 200, options.status ? options.status(real) : real);
      }
      const signed: RawEntry[] = job.files.map((f) => ({ name: f.name, data: signAssembly(readModule(f.data), KEY_PAIR) }));
      const entries = options.packageEntries
        ? options.packageEntries(signed)
        : [...signed, { name: options.logName ?? 'SigningLog.txt', data: Buffer.from('signed\r\n') }];
      const zip = buildZip(entries);
      return res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    baseUrl: `${origin}${PREFIX}`,
    origin,
    seen,
    uploads,
    jobs,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
