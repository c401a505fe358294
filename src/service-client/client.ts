// The signing service client (service-api.md): licenses, upload with progress, status, list, download to a
// file with progress, delete. Each request is named here and sent through the one connection (http.ts); every
// answer is checked by its reader (answers.ts) before it is used.
import { ServiceError } from '../core/errors.js';
import { MAX_CHECKPOINT_BYTES } from '../record/checkpoint.js';
import {
  consistencyAnswer,
  createdAnswer,
  licenseEntriesAnswer,
  listAnswer,
  recordKeyAnswer,
  statusAnswer,
  type CreatedAnswer,
  type JobStatus,
  type JobSummary,
  type LicenseEntry,
} from './answers.js';
import { type ServiceClientOptions } from './http.js';
import { openConnection } from './connection.js';
import { MAX_JSON_BODY_BYTES } from './service-errors.js';
import { DEFAULT_RETRY } from './http.js';
import { multipartBody, type Progress, type UploadFile } from './multipart.js';
import { cleanServiceText } from './text.js';

export type { JobStatus, JobSummary, LicenseEntry } from './answers.js';
export type { Progress, UploadFile } from './multipart.js';

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

// A file's state words and how a service's word is read: core/file-states.ts.
export { FAILED_STATES } from '../core/file-states.js';

function bad(method: string, url: string, what: string): ServiceError {
  return new ServiceError('SG_ERR_HTTP_BAD_RESPONSE', `${method} ${url}: ${what}`, { method, url });
}

/** Most bytes a public key file may have: a 16384-bit RSA key's blob is about 2 KB. */
const MAX_PUBLIC_KEY_BYTES = 64 * 1024;

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
  const http = openConnection(options);
  const separator = options.nameSeparator ?? '\\';
  const refOf = (job: JobRef | string): JobRef => (typeof job === 'string' ? { id: job } : job);
  const byId = (id: string, suffix = '') => http.url(`/assemblies/${encodeURIComponent(id)}${suffix}`);
  const statusUrl = (job: JobRef) => http.ownLink(job.links?.status) ?? byId(job.id, '/status');
  const downloadUrl = (job: JobRef) => http.ownLink(job.links?.download) ?? byId(job.id);
  const deleteUrl = (job: JobRef) => http.ownLink(job.links?.delete) ?? byId(job.id);

  return {
    baseUrl: http.baseUrl,

    /** The organization's licensed option ids (GET /licenses). */
    licenses: async (): Promise<number[]> => (await http.json('GET', http.url('/licenses'), licenseEntriesAnswer)).map((e) => e.optionId),

    /** The license entries with each option's public key token, where the service reports it (see LicenseEntry). */
    licenseEntries: (): Promise<LicenseEntry[]> => http.json('GET', http.url('/licenses'), licenseEntriesAnswer),

    /**
     * The option's public key file (`<optionId>_public.snk`) from GET /licenses/{optionId}/public-key, signgate's
     * extension: the bytes as the service sent them, at most 64 KiB (the caller checks them). 404 means the
     * organization does not hold the option, or the service does not offer the endpoint.
     */
    async publicKey(optionId: number): Promise<Uint8Array> {
      if (!Number.isSafeInteger(optionId) || optionId < 0) throw new RangeError(`optionId must be a whole number of at least 0, not ${optionId}`);
      return http.bytes(http.url(`/licenses/${optionId}/public-key`), MAX_PUBLIC_KEY_BYTES, 'application/octet-stream');
    },

    /**
     * Uploads the files as one job. Without `idempotencyKey` it is retried only when the service refused it with
     * 429 or 503 before accepting it; with one (sent as Idempotency-Key) also after a network error or a 5xx,
     * since the service answers a repeated key with the job it made the first time.
     * @throws ServiceError with advice for 400 (names), 401, 403, 409 (job limit), 413 (too large)
     */
    async upload(files: readonly UploadFile[], comment?: string, onProgress?: Progress, upload: { idempotencyKey?: string } = {}): Promise<CreatedJob> {
      const body = multipartBody(files, comment, onProgress, { separator });
      const target = http.url('/assemblies');
      const key = upload.idempotencyKey;
      const created = await http.json('POST', target, createdAnswer, {
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
      const links = { status: http.ownLink(created.links.status), download: http.ownLink(created.links.download), delete: http.ownLink(created.links.delete) };
      if (created.id === undefined && (!links.status || !links.download)) {
        throw bad('POST', target, 'the answer has no job id and its links lead to another origin; the token is never sent there');
      }
      const id = created.id ?? links.status!;
      return {
        id,
        comment: created.comment,
        links: { status: links.status ?? byId(id, '/status'), download: links.download ?? byId(id), delete: links.delete ?? links.download ?? byId(id) },
      };
    },

    /**
     * Uploads a project archive (a ZIP of the build output) as one job: POST /archives, signgate's extension. Retried
     * only when the service refused it with 429 or 503 before accepting it. The answer is an upload's: the job's
     * id (as text) and its links as the service gave them (the caller holds them against the base URL).
     * @throws ServiceError with advice for 400, 401, 403, 409 (job limit), 413 (too large); SG_ERR_HTTP_BAD_RESPONSE
     *   for an answer with no job id
     */
    async uploadArchive(bytes: Uint8Array, fileName: string, comment?: string): Promise<{ id: string; links: CreatedAnswer['links'] }> {
      const target = http.url('/archives');
      // A Blob takes no view of shared memory: such bytes are copied once.
      const part = (bytes.buffer instanceof SharedArrayBuffer ? Uint8Array.from(bytes) : bytes) as Uint8Array<ArrayBuffer>;
      const makeBody = () => {
        const form = new FormData();
        form.append('archive', new Blob([part]), fileName);
        if (comment !== undefined) form.append('comment', comment);
        return form;
      };
      const created = await http.json('POST', target, createdAnswer, { idempotent: false, retryStatuses: [429, 503], makeBody });
      if (created.id === undefined) throw bad('POST', target, 'the answer has no job id');
      return { id: created.id, links: created.links };
    },

    /**
     * A job's status. With `files` (how many the job holds), its body may be at most statusBodyBound(files): a service
     * cannot stall the client with a status of megabytes.
     */
    status: (job: JobRef | string, expect: { files?: number } = {}): Promise<JobStatus> =>
      http.json('GET', statusUrl(refOf(job)), statusAnswer, { maxBytes: expect.files === undefined ? undefined : statusBodyBound(expect.files) }),

    /** The record key's public half (GET /record/public-key), as the service gives it. */
    recordPublicKey: (): Promise<string> => http.json('GET', http.url('/record/public-key'), recordKeyAnswer),

    /** The RFC 9162 consistency proof between two sizes of the record (GET /record/consistency), base64 hashes. */
    recordConsistency: (from: number, to: number): Promise<string[]> =>
      http.json('GET', http.url(`/record/consistency?from=${from}&to=${to}`), consistencyAnswer),

    list: (): Promise<JobSummary[]> => http.json('GET', http.url('/assemblies'), listAnswer),

    async delete(job: JobRef | string): Promise<void> {
      await http.exchange('DELETE', deleteUrl(refOf(job)), { idempotent: true });
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
      const attempts = (options.retry ?? DEFAULT_RETRY).retries + 1;
      for (let attempt = 1; ; attempt++) {
        const response = await http.exchange('GET', u, { idempotent: true, headers: { accept: 'application/zip' } });
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
