// Job files in S3-compatible object storage (@aws-sdk/client-s3), for nodes that share no folder. Nodes keep
// files on their own disk only while they work on them: an API node writes an upload to its data directory and
// puts it into the bucket before the job becomes visible; a worker gets the uploads into a scratch folder,
// signs there, and puts the result package into the bucket before it marks the job finished.
//   jobs/<organization>/<job id>/uploads/<file name>    as uploaded
//   jobs/<organization>/<job id>/<result file>          the result package
// Configured by --blob-store s3://bucket[/prefix]?endpoint=…&region=…; credentials come from the SDK's usual
// places (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, a profile, an instance role) and are never logged.
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectsCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../../../core/errors.js';
import { mkdirPrivate, PRIVATE_FILE } from '../../fs-atomic.js';

export interface S3BlobOptions {
  readonly bucket: string;
  /** Key prefix inside the bucket ('' or ending in '/'). */
  readonly prefix: string;
  /** An S3-compatible server's URL (MinIO, Ceph, …); the AWS endpoint of `region` when absent. */
  readonly endpoint?: string;
  readonly region: string;
}

/** Reads `s3://bucket[/prefix][?endpoint=URL&region=NAME]`; a user or key in the URL is refused, and never shown. */
export function parseBlobStoreUrl(url: string): S3BlobOptions {
  const hint =
    'Pass s3://bucket/prefix?endpoint=https://s3.example.com&region=eu-central-1; credentials come from the AWS environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, a profile or a role), never from the URL.';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Not echoed: a malformed URL may still hold a key.
    throw new UsageError('--blob-store is not a URL', hint);
  }
  if (u.username || u.password)
    throw new UsageError(`--blob-store s3://${u.hostname}${u.pathname} names a user or key before the bucket; it was ignored and is not shown`, hint);
  // Without a host (`s3:AK:SECRET@bucket/pre`) the whole rest may be credentials: the scheme alone is shown.
  if (!u.hostname) throw new UsageError(`--blob-store ${u.protocol} (rest not shown) is not an s3://bucket URL`, hint);
  if (u.protocol !== 's3:') throw new UsageError(`--blob-store ${u.protocol}//${u.hostname}${u.pathname} is not an s3://bucket URL`, hint);
  const path = u.pathname.replace(/^\/+/, '');
  const endpoint = u.searchParams.get('endpoint') ?? undefined;
  return {
    bucket: u.hostname,
    prefix: path && !path.endsWith('/') ? `${path}/` : path,
    ...(endpoint ? { endpoint } : {}),
    region: u.searchParams.get('region') ?? process.env.AWS_REGION ?? 'us-east-1',
  };
}

/** Every file below `dir`, as `/`-separated paths relative to it. */
async function filesBelow(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'));
  }
  return out;
}

export class S3Blobs {
  private readonly client: S3Client;

  constructor(readonly options: S3BlobOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
      // Checksums only where S3 demands them: S3-compatible servers differ in the newer checksum headers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /** The key of a job's file (or of the job's folder with `name` ''). */
  key(organization: string, id: string, name = ''): string {
    return `${this.options.prefix}jobs/${organization}/${id}/${name}`;
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
  }

  /**
   * Puts one file; `signal` stops it at once (an object half sent is never visible: S3 keeps only whole PUTs).
   * @throws an AbortError (name 'AbortError') once `signal` is aborted
   */
  async putFile(path: string, key: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const { size } = await stat(path);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: createReadStream(path), ContentLength: size }),
      signal ? { abortSignal: signal } : {},
    );
  }

  /** Puts every file below `dir` under `keyPrefix`, a few at a time. */
  async putFolder(dir: string, keyPrefix: string): Promise<void> {
    const files = await filesBelow(dir);
    for (let i = 0; i < files.length; i += 8) await Promise.all(files.slice(i, i + 8).map((f) => this.putFile(join(dir, ...f.split('/')), keyPrefix + f)));
  }

  async keys(keyPrefix: string, signal?: AbortSignal): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: keyPrefix, ContinuationToken: token }),
        signal ? { abortSignal: signal } : {},
      );
      for (const o of page.Contents ?? []) if (o.Key) out.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async open(key: string, signal?: AbortSignal): Promise<Readable> {
    const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }), signal ? { abortSignal: signal } : {});
    return object.Body as Readable;
  }

  /** The object's bytes, or undefined when there is no such key. */
  async get(key: string): Promise<Buffer | undefined> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return Buffer.from(await object.Body!.transformToByteArray());
    } catch (error) {
      if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }

  /**
   * Writes every object under `keyPrefix` to `dir`, by the rest of its key. `signal` stops it between objects and
   * inside one (the listing, the request, the copy to disk): a stopping worker does not wait for a big job's files.
   * @throws an AbortError (name 'AbortError') once `signal` is aborted
   */
  async getFolder(keyPrefix: string, dir: string, signal?: AbortSignal): Promise<void> {
    for (const key of await this.keys(keyPrefix, signal)) {
      signal?.throwIfAborted();
      const rest = key.slice(keyPrefix.length);
      if (!rest || rest.split('/').some((s) => s === '' || s === '.' || s === '..')) continue; // only names this service wrote
      const target = join(dir, ...rest.split('/'));
      await mkdirPrivate(dirname(target));
      await pipeline(await this.open(key, signal), createWriteStream(target, { mode: PRIVATE_FILE }), signal ? { signal } : {});
    }
  }

  /** Removes every object under `keyPrefix`. */
  async removePrefix(keyPrefix: string): Promise<void> {
    const keys = await this.keys(keyPrefix);
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }),
      );
    }
  }

  async remove(key: string): Promise<void> {
    await this.client.send(new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: [{ Key: key }], Quiet: true } }));
  }

  close(): void {
    this.client.destroy();
  }
}
