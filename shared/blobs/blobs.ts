/** One object as a listing or a head shows it. */
export interface BlobInfo {
  key: string;
  size: number;
  /** S3's entity tag without its quotes: changes whenever the content does. */
  etag: string;
  lastModified?: string;
  contentType?: string;
  /** A head's user-defined metadata (`x-amz-meta-*`, names lower-cased, without the prefix). */
  metadata?: Record<string, string>;
}

/**
 * Objects in one bucket: uploaded files' content (the product's own bucket) or an `s3` source's
 * documents (a bucket the deployer granted). The AWS SDK's S3 client against S3 in AWS and against
 * an S3-compatible server in local mode and the tests: one code path.
 */
export interface BlobStore {
  readonly bucket: string;
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** The whole object, refused above `maxBytes` before it is read. */
  get(key: string, maxBytes?: number): Promise<Uint8Array>;
  head(key: string): Promise<BlobInfo | undefined>;
  /** The SHA-256 of an object, streamed (a 100 MB upload is never held in memory whole). */
  sha256(key: string): Promise<string>;
  copy(from: string, to: string): Promise<void>;
  delete(keys: string[]): Promise<void>;
  /** Every object under the prefix, in key order. */
  list(prefix: string): AsyncIterable<BlobInfo>;
  /** A URL a client may PUT the object's bytes to until it expires. */
  presignPut(key: string, options: { contentType: string; expiresSeconds: number }): Promise<string>;
}

/** The product's bucket, and the buckets `s3` sources read, through one client. */
export interface Blobs {
  readonly files: BlobStore;
  bucket(name: string): BlobStore;
}

export function unconfiguredBlobStore(): BlobStore {
  const fail = (): never => {
    throw new Error('No blob store in this function: BLOB_BUCKET is not set');
  };
  return { bucket: '', put: fail, get: fail, head: fail, sha256: fail, copy: fail, delete: fail, list: fail, presignPut: fail };
}

/** For runtimes of functions that keep no files. */
export const noBlobs: Blobs = { files: unconfiguredBlobStore(), bucket: () => unconfiguredBlobStore() };
