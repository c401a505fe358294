// The signing service client (service-api.md): licenses, upload with progress, status, list, download to a
// file with progress, delete. Every response body is checked before it is used.
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../core/errors.js';
import { assertAnswer, cleanServiceText, fileNameText, idText } from './answers.js';
import { maskSecrets, rememberSecret } from '../core/secrets.js';
import { apiUrl, assertSafeBaseUrl, MAX_JSON_BODY_BYTES, readJson, requestJson, send, type ServiceClientOptions } from './http.js';
import { MAX_CHECKPOINT_BYTES } from '../record/checkpoint.js';
import { getLicenseEntries, getLicenses, getOptionPublicKey } from './license-requests.js';

export interface UploadFile {
  /** The name the service gets: the path relative to the root, with `/` (sent with the configured separator). */
  readonly name: string;
  readonly bytes: Uint8Array;
}

/** Where a job's status, result and deletion live: the URLs the service gave, or built from the id. */
export interface JobRef {
  /** The job id as text (the service may use any JSON type), or the status URL when the service gave only links. */
  readonly id: string;
  readonly links?: { readonly status?: string; readonly download?: string; readonly delete?: string };
}

export interface CreatedJob extends JobRef {
  readonly comment: string | null;
  readonly links: { readonly status: string; readonly download: string; readonly delete: string };
}

export interface JobMessage {
  readonly dateTime: string | null;
  readonly messageType: string;
  readonly message: string;
}

export interface JobFileStatus {
  /** Relative path with `/`, whatever separator the service used. */
  readonly fileName: string;
  /** As the service said it (`Signed`, `Success`, `Error`, …): states the client does not know are kept. */
  readonly fileProcessingState: string;
  readonly messages: readonly JobMessage[];
}

export interface JobStatus {
  readonly id: string | null;
  readonly comment: string | null;
  readonly createdAt: string | null;
  readonly processingFinished: boolean;
  readonly assemblies: readonly JobFileStatus[];
  /** signgate's extension: the job's signature record entries with inclusion proofs in a signed checkpoint (unchecked here: workflows/record-proof.ts checks it). */
  readonly signatureRecord?: unknown;
}

export interface JobSummary {
  readonly id: string;
  readonly comment: string | null;
  /** Null when the service does not say. */
  readonly createdAt: string | null;
  readonly processingFinished: boolean | null;
  readonly fileCount: number | null;
}

export type Progress = (done: number, total: number) => void;

/** States in which the service says a file was not signed. */
export const FAILED_STATES: ReadonlySet<string> = new Set(['error', 'failed', 'failure', 'rejected']);

/** States that are not final yet. */
export const PENDING_STATES: ReadonlySet<string> = new Set(['pending', 'processing', 'queued', 'inprogress', 'in progress', 'running']);

const CHUNK = 64 * 1024;

function bad(method: string, url: string, what: string): ServiceError {
  return new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url}: ${what}`, { method, url });
}

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

export interface ClientOptions extends ServiceClientOptions {
  /** The folder separator in uploaded file names (default `\\`, as the vendor's script sends them). */
  readonly nameSeparator?: '\\' | '/';
}

/**
 * Where a download goes (the caller's file: workflows/files.ts). Each attempt opens a part of its own, whose bytes
 * are written in order and then committed as the result or discarded.
 */
export interface DownloadSink {
  open(): Promise<DownloadPart>;
}

export interface DownloadPart {
  write(chunk: Uint8Array): Promise<void>;
  /** The part's bytes are the result. */
  commit(): Promise<void>;
  /** The part is dropped (never throws). */
  discard(): Promise<void>;
}

export interface DownloadOptions {
  readonly onProgress?: Progress;
  /** The most bytes the result package may have; a longer download is cut off and refused. */
  readonly maxBytes?: number;
}

/** Default cap of a result package when the caller does not know the upload size: 1 GiB. */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

/**
 * The most bytes a job's status may have for a job of `files` files: 64 KiB and 16 KiB a file (a file's state and
 * messages, its record entry and an inclusion proof of up to 63 hashes take about 5 KiB), and the checkpoint.
 */
export function statusBodyBound(files: number): number {
  return Math.min(MAX_JSON_BODY_BYTES, 64 * 1024 + 16 * 1024 * Math.max(1, files) + MAX_CHECKPOINT_BYTES);
}

/**
 * The signing service client: licenses, upload, status, list, download, delete. Ids from the service are
 * untrusted: they go into URLs encoded, never into paths; `links` are followed only to the base URL's origin.
 * @example
 * const client = createServiceClient({ baseUrl: 'https://signing.example.com/assembly-signing/v1.0', accessToken });
 * const job = await client.upload([{ name: 'MyAddin.dll', bytes }], 'nightly');
 * const status = await client.status(job);
 */
export function createServiceClient(options: ClientOptions) {
  const base = assertSafeBaseUrl(options.baseUrl);
  rememberSecret(options.accessToken);
  const url = (path: string) => apiUrl(options.baseUrl, path);
  const jobPath = (id: string) => `/assemblies/${encodeURIComponent(id)}`;
  /**
   * A link from the service, when it is on the base URL's origin; foreign links are ignored, and so are links that
   * carry a secret (a gateway's `?access_token=…`): they would be kept in the job ledger.
   */
  const ownLink = (link: string | undefined): string | undefined => {
    if (!link || maskSecrets(link) !== link) return undefined;
    try {
      const u = new URL(link, options.baseUrl);
      return u.origin === base.origin ? u.href : undefined;
    } catch {
      return undefined;
    }
  };
  const refOf = (job: JobRef | string): JobRef => (typeof job === 'string' ? { id: job } : job);
  const statusUrl = (job: JobRef) => ownLink(job.links?.status) ?? url(`${jobPath(job.id)}/status`);
  const downloadUrl = (job: JobRef) => ownLink(job.links?.download) ?? url(jobPath(job.id));
  const deleteUrl = (job: JobRef) => ownLink(job.links?.delete) ?? url(jobPath(job.id));

  return {
    baseUrl: options.baseUrl,

    licenses: () => getLicenses(options),

    /** The license entries with each option's public key token, where the service reports it (see LicenseEntry). */
    licenseEntries: () => getLicenseEntries(options),

    /** The option's public key file (GET /licenses/{optionId}/public-key, signgate's extension), unchecked bytes. */
    publicKey: (optionId: number) => getOptionPublicKey(options, optionId),

    /**
     * Uploads the files as one job. Without `idempotencyKey` it is retried only when the service refused it with
     * 429 or 503 before accepting it; with one (sent as Idempotency-Key) also after a network error or a 5xx,
     * since the service answers a repeated key with the job it made the first time.
     * @throws ServiceError with advice for 400 (names), 401, 403, 409 (job limit), 413 (too large)
     */
    async upload(files: readonly UploadFile[], comment?: string, onProgress?: Progress, upload: { idempotencyKey?: string } = {}): Promise<CreatedJob> {
      const body = multipartBody(files, comment, onProgress, { separator: options.nameSeparator ?? '\\' });
      const target = url('/assemblies');
      const key = upload.idempotencyKey;
      const response = await send(options, 'POST', target, {
        idempotent: key !== undefined,
        retryStatuses: [429, 503],
        makeBody: () => body.make() as unknown as RequestInit['body'],
        headers: {
          'content-type': body.contentType,
          'content-length': String(body.length),
          accept: 'application/json',
          ...(key === undefined ? {} : { 'idempotency-key': key }),
        },
      });
      const created = assertAnswer('created', await readJson(response, { method: 'POST', url: target }), { method: 'POST', url: target }) as {
        id?: unknown;
        comment?: unknown;
        links?: { status?: string; download?: string; delete?: string };
      };
      const links = { status: ownLink(created.links?.status), download: ownLink(created.links?.download), delete: ownLink(created.links?.delete) };
      const rawId = created.id === undefined || created.id === null ? undefined : idText(created.id);
      if (rawId === undefined && (!links.status || !links.download)) {
        throw bad('POST', target, 'the answer has no job id and its links lead to another origin; the token is never sent there');
      }
      const id = rawId ?? links.status!;
      const byId = (suffix = '') => url(`${jobPath(id)}${suffix}`);
      return {
        id,
        comment: typeof created.comment === 'string' ? cleanServiceText(created.comment) : null,
        links: { status: links.status ?? byId('/status'), download: links.download ?? byId(), delete: links.delete ?? links.download ?? byId() },
      };
    },

    /**
     * A job's status. With `files` (how many the job holds), its body may be at most statusBodyBound(files): a service
     * cannot stall the client with a status of megabytes.
     */
    async status(job: JobRef | string, expect: { files?: number } = {}): Promise<JobStatus> {
      const u = statusUrl(refOf(job));
      const { body } = await requestJson(options, 'GET', u, expect.files === undefined ? undefined : statusBodyBound(expect.files));
      const s = assertAnswer('status', body, { method: 'GET', url: u }) as {
        id?: unknown;
        comment?: unknown;
        createdAt?: unknown;
        processingFinished: boolean;
        assemblies: { fileName: string; fileProcessingState: string; messages?: { dateTime?: unknown; messageType?: unknown; message?: unknown }[] | null }[];
      };
      return {
        id: s.id === undefined || s.id === null ? null : idText(s.id),
        comment: typeof s.comment === 'string' ? cleanServiceText(s.comment) : null,
        createdAt: typeof s.createdAt === 'string' ? cleanServiceText(s.createdAt, 100) : null,
        processingFinished: s.processingFinished,
        ...((s as { signatureRecord?: unknown }).signatureRecord !== undefined
          ? { signatureRecord: (s as { signatureRecord?: unknown }).signatureRecord }
          : {}),
        assemblies: s.assemblies.map((a) => ({
          fileName: fileNameText(a.fileName),
          fileProcessingState: cleanServiceText(a.fileProcessingState, 100) || '(none)',
          messages: (a.messages ?? []).map((m) => ({
            dateTime: typeof m.dateTime === 'string' ? cleanServiceText(m.dateTime, 100) : null,
            messageType: typeof m.messageType === 'string' ? cleanServiceText(m.messageType, 100) : 'Info',
            message: typeof m.message === 'string' ? cleanServiceText(m.message) : '',
          })),
        })),
      };
    },

    /** The record key's public half (GET /record/public-key), as the service gives it. */
    async recordPublicKey(): Promise<string> {
      const { url: u, body } = await requestJson(options, 'GET', '/record/public-key');
      const key = (body as { publicKey?: unknown } | null)?.publicKey;
      if (typeof key !== 'string') throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${u}: the answer has no publicKey`, { method: 'GET', url: u });
      return key;
    },

    /** The RFC 9162 consistency proof between two sizes of the record (GET /record/consistency), base64 hashes. */
    async recordConsistency(from: number, to: number): Promise<string[]> {
      const { url: u, body } = await requestJson(options, 'GET', `/record/consistency?from=${from}&to=${to}`);
      const proof = (body as { proof?: unknown } | null)?.proof;
      if (!Array.isArray(proof) || proof.some((p) => typeof p !== 'string'))
        throw new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `GET ${u}: the answer has no proof (a list of base64 hashes)`, { method: 'GET', url: u });
      return proof as string[];
    },

    async list(): Promise<JobSummary[]> {
      const { url: u, body } = await requestJson(options, 'GET', '/assemblies');
      return (
        assertAnswer('list', body, { method: 'GET', url: u }) as {
          id: unknown;
          comment?: unknown;
          createdAt?: unknown;
          processingFinished?: unknown;
          fileCount?: unknown;
        }[]
      ).map((j) => ({
        id: idText(j.id),
        comment: typeof j.comment === 'string' ? cleanServiceText(j.comment, 200) : null,
        createdAt: typeof j.createdAt === 'string' ? cleanServiceText(j.createdAt, 100) : null,
        processingFinished: typeof j.processingFinished === 'boolean' ? j.processingFinished : null,
        fileCount: typeof j.fileCount === 'number' ? j.fileCount : null,
      }));
    },

    async delete(job: JobRef | string): Promise<void> {
      await send(options, 'DELETE', deleteUrl(refOf(job)), { idempotent: true });
    },

    /**
     * Streams the result package into a part that `into` opens for each attempt; a dropped connection starts the
     * download again (up to the retry policy) in a new part. The result must be a ZIP of at most `maxBytes`: only
     * then is the part committed, else it is discarded.
     * @throws ServiceError SG_ERR_HTTP_BAD_RESPONSE for a body that is not a ZIP or is too long
     */
    async download(job: JobRef | string, into: DownloadSink, downloadOptions: DownloadOptions = {}): Promise<number> {
      const u = downloadUrl(refOf(job));
      const maxBytes = downloadOptions.maxBytes ?? DEFAULT_MAX_DOWNLOAD_BYTES;
      const attempts = (options.retry?.retries ?? 4) + 1;
      for (let attempt = 1; ; attempt++) {
        const response = await send(options, 'GET', u, { idempotent: true, headers: { accept: 'application/zip' } });
        const total = Number(response.headers.get('content-length') ?? 0);
        let part: DownloadPart | undefined;
        let received = 0;
        let first: Uint8Array | undefined;
        try {
          if (total > maxBytes) throw bad('GET', u, `the result package announces ${total} bytes, more than the ${maxBytes} allowed (--max-download-bytes)`);
          part = await into.open();
          try {
            for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
              first ??= chunk;
              received += chunk.length;
              if (received > maxBytes)
                throw bad('GET', u, `the result package is longer than the ${maxBytes} bytes allowed (--max-download-bytes); the download was cut off`);
              downloadOptions.onProgress?.(received, total);
              await part.write(chunk);
            }
          } catch (error) {
            void response.body?.cancel().catch(() => {});
            throw error;
          }
          if (total && received !== total) throw new Error(`the download ended after ${received} of ${total} bytes`);
          if (!first || first[0] !== 0x50 || first[1] !== 0x4b)
            throw bad('GET', u, `the result is not a ZIP package (content-type ${cleanServiceText(response.headers.get('content-type') ?? 'none', 100)})`);
          await part.commit();
          return received;
        } catch (error) {
          await part?.discard();
          if (error instanceof ServiceError || attempt >= attempts) {
            throw error instanceof ServiceError
              ? error
              : new ServiceError('SG_ERR_HTTP_UNREACHABLE', `GET ${u} broke off: ${(error as Error).message}`, { method: 'GET', url: u }, { cause: error });
          }
          options.onRetry?.({ method: 'GET', url: u, attempt, delayMs: 0, reason: `download broke off after ${received} bytes` });
        }
      }
    },
  };
}

export type ServiceClient = ReturnType<typeof createServiceClient>;
