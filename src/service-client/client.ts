// The signing service client (service-api.md): licenses, upload with progress, status, list, download to a
// file with progress, delete. Every response body is checked before it is used.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { ServiceError } from '../core/errors.js';
import { apiUrl, assertSafeBaseUrl, requestJson, send, type ServiceClientOptions } from './http.js';
import { getLicenses } from './licenses.js';

export interface UploadFile {
  /** The name the service gets: relative path with `/`. */
  readonly name: string;
  readonly bytes: Uint8Array;
}

export interface CreatedJob {
  readonly id: string;
  readonly comment: string | null;
  readonly links: { readonly status: string; readonly download: string; readonly delete: string };
}

export interface JobMessage {
  readonly dateTime: string;
  readonly messageType: string;
  readonly message: string;
}

export interface JobStatus {
  readonly id: string;
  readonly comment: string | null;
  readonly createdAt: string;
  readonly processingFinished: boolean;
  readonly assemblies: readonly { readonly fileName: string; readonly fileProcessingState: string; readonly messages: readonly JobMessage[] }[];
}

export interface JobSummary {
  readonly id: string;
  readonly comment: string | null;
  readonly createdAt: string;
  readonly processingFinished: boolean;
  readonly fileCount: number;
}

export type Progress = (done: number, total: number) => void;

const CHUNK = 64 * 1024;

function bad(method: string, url: string, what: string): ServiceError {
  return new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url}: ${what}`, { method, url });
}

function quote(name: string): string {
  return name.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/[\r\n]/g, ' ');
}

/** A multipart/form-data body as a byte stream, with its length, reporting progress as it is read. */
export function multipartBody(files: readonly UploadFile[], comment: string | undefined, onProgress?: Progress): { contentType: string; length: number; make: () => AsyncIterable<Uint8Array> } {
  const boundary = `----signgate${randomBytes(12).toString('hex')}`;
  const enc = new TextEncoder();
  const pieces: Uint8Array[][] = files.map((f, i) => [
    enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="files[${i}]"; filename="${quote(f.name)}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    f.bytes,
    enc.encode('\r\n'),
  ]);
  if (comment !== undefined) pieces.push([enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="comment"\r\n\r\n${comment}\r\n`)]);
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

export function createServiceClient(options: ServiceClientOptions) {
  assertSafeBaseUrl(options.baseUrl);
  const url = (path: string) => apiUrl(options.baseUrl, path);
  const jobPath = (id: string) => `/assemblies/${encodeURIComponent(id)}`;

  return {
    baseUrl: options.baseUrl,

    licenses: () => getLicenses(options),

    /**
     * Uploads the files as one job. Retried only when the service refused it with 429 or 503 before accepting it.
     * @throws ServiceError with advice for 400 (names), 401, 403, 409 (job limit), 413 (too large)
     */
    async upload(files: readonly UploadFile[], comment?: string, onProgress?: Progress): Promise<CreatedJob> {
      const body = multipartBody(files, comment, onProgress);
      const target = url('/assemblies');
      const response = await send(options, 'POST', target, {
        idempotent: false,
        retryStatuses: [429, 503],
        makeBody: () => body.make() as unknown as RequestInit['body'],
        headers: { 'content-type': body.contentType, 'content-length': String(body.length), accept: 'application/json' },
      });
      const created = (await response.json().catch(() => undefined)) as Partial<CreatedJob> | undefined;
      if (!created || typeof created.id !== 'string') throw bad('POST', target, 'the answer has no job id');
      const base = url(jobPath(created.id));
      return {
        id: created.id,
        comment: created.comment ?? null,
        links: { status: created.links?.status ?? `${base}/status`, download: created.links?.download ?? base, delete: created.links?.delete ?? base },
      };
    },

    async status(id: string): Promise<JobStatus> {
      const { url: u, body } = await requestJson(options, 'GET', `${jobPath(id)}/status`);
      const s = body as Partial<JobStatus>;
      if (typeof s?.processingFinished !== 'boolean' || !Array.isArray(s.assemblies)) throw bad('GET', u, 'the status has no processingFinished flag or assemblies list');
      return s as JobStatus;
    },

    async list(): Promise<JobSummary[]> {
      const { url: u, body } = await requestJson(options, 'GET', '/assemblies');
      if (!Array.isArray(body)) throw bad('GET', u, 'the job list is not a JSON array');
      return body as JobSummary[];
    },

    async delete(id: string): Promise<void> {
      await send(options, 'DELETE', url(jobPath(id)), { idempotent: true });
    },

    /**
     * Streams the result package into `target` through a temporary file; a dropped connection starts the
     * download again (up to the retry policy). The result must be a ZIP.
     */
    async download(id: string, target: string, onProgress?: Progress): Promise<number> {
      const u = url(jobPath(id));
      const attempts = (options.retry?.retries ?? 4) + 1;
      for (let attempt = 1; ; attempt++) {
        const response = await send(options, 'GET', u, { idempotent: true, headers: { accept: 'application/zip' } });
        const total = Number(response.headers.get('content-length') ?? 0);
        const temp = join(dirname(target), `.${basename(target)}.part-${randomBytes(4).toString('hex')}`);
        let received = 0;
        let first: Uint8Array | undefined;
        try {
          await new Promise<void>((resolve, reject) => {
            const out = createWriteStream(temp, { flags: 'wx' });
            out.on('error', reject);
            (async () => {
              for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
                first ??= chunk;
                received += chunk.length;
                onProgress?.(received, total);
                if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
              }
              out.end(() => resolve());
            })().catch((error) => {
              out.destroy();
              reject(error);
            });
          });
          if (total && received !== total) throw new Error(`the download ended after ${received} of ${total} bytes`);
          if (!first || first[0] !== 0x50 || first[1] !== 0x4b) throw bad('GET', u, `the result is not a ZIP package (content-type ${response.headers.get('content-type') ?? 'none'})`);
          await rename(temp, target);
          return received;
        } catch (error) {
          await rm(temp, { force: true });
          if (error instanceof ServiceError || attempt >= attempts) {
            throw error instanceof ServiceError ? error : new ServiceError('SG_ERR_HTTP_UNREACHABLE', `GET ${u} broke off: ${(error as Error).message}`, { method: 'GET', url: u }, { cause: error });
          }
          options.onRetry?.({ method: 'GET', url: u, attempt, delayMs: 0, reason: `download broke off after ${received} bytes` });
        }
      }
    },
  };
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
