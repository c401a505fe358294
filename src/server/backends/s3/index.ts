// Job files in S3-compatible object storage: the part of the PostgreSQL backend that --blob-store names. The AWS SDK
// is loaded only by a process that names a bucket.
import type { S3Blobs } from './s3-blobs.js';

/** The bucket of --blob-store (s3://bucket/prefix?endpoint=…), or undefined without one (an empty one is refused). */
export async function openBlobs(blobStore: string | undefined): Promise<S3Blobs | undefined> {
  if (blobStore === undefined) return undefined;
  const s3 = await import('./s3-blobs.js');
  return new s3.S3Blobs(s3.parseBlobStoreUrl(blobStore));
}

/**
 * Refuses a --blob-store that is no s3:// URL, or that names a key, before a backend is chosen (so that the URL's
 * own error comes first).
 * @throws UsageError
 */
export async function checkBlobStore(blobStore: string): Promise<void> {
  const s3 = await import('./s3-blobs.js');
  s3.parseBlobStoreUrl(blobStore);
}
