import { BlobTooLargeError } from '../errors';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { config } from '../config';
import { loadOnce } from '../load-once';
import { unconfiguredBlobStore, type Blobs, type BlobStore } from './blobs';

const unquote = (etag: string | undefined) => (etag ?? '').replace(/^(W\/)?"|"$/g, '');
const missing = (error: unknown) => ['NoSuchKey', 'NotFound'].includes((error as { name?: string }).name ?? '');

/** The SDK's S3 module, loaded with the first file a function reads or writes, not at its cold start. */
const s3 = loadOnce(() => import('@aws-sdk/client-s3'));

/** `clientOf` makes the SDK's client on first use. */
export function s3BlobStore(clientOf: () => Promise<S3Client>, bucket: string): BlobStore {
  // The client's own send (and its typing of each command's output), the client made on first use.
  const send: S3Client['send'] = async (command: never) => (await clientOf()).send(command);
  return {
    bucket,
    async put(key, body, contentType) {
      const { PutObjectCommand } = await s3();
      await send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }));
    },
    async get(key, maxBytes) {
      const { GetObjectCommand } = await s3();
      const out = await send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (maxBytes !== undefined && (out.ContentLength ?? 0) > maxBytes) {
        (out.Body as Readable | undefined)?.destroy();
        throw new BlobTooLargeError(key, out.ContentLength ?? 0, maxBytes);
      }
      return out.Body!.transformToByteArray();
    },
    async head(key) {
      const { HeadObjectCommand } = await s3();
      try {
        const out = await send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { key, size: out.ContentLength ?? 0, etag: unquote(out.ETag), lastModified: out.LastModified?.toISOString(), contentType: out.ContentType, ...(out.Metadata ? { metadata: out.Metadata } : {}) };
      } catch (error) {
        if (missing(error)) return undefined;
        throw error;
      }
    },
    async sha256(key) {
      const { GetObjectCommand } = await s3();
      const out = await send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const hash = createHash('sha256');
      for await (const piece of out.Body as Readable) hash.update(piece as Buffer);
      return hash.digest('hex');
    },
    async copy(from, to) {
      const { CopyObjectCommand } = await s3();
      await send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: `${bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}` }));
    },
    async delete(keys) {
      const { DeleteObjectsCommand } = await s3();
      for (let i = 0; i < keys.length; i += 1000) {
        const objects = keys.slice(i, i + 1000).map((Key) => ({ Key }));
        if (objects.length > 0) await send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
      }
    },
    async *list(prefix) {
      const { ListObjectsV2Command } = await s3();
      let token: string | undefined;
      do {
        const out = await send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of out.Contents ?? []) yield { key: o.Key!, size: o.Size ?? 0, etag: unquote(o.ETag), lastModified: o.LastModified?.toISOString() };
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    },
    async presignPut(key, { contentType, expiresSeconds }) {
      const [{ PutObjectCommand }, { getSignedUrl }] = await Promise.all([s3(), import('@aws-sdk/s3-request-presigner')]);
      return getSignedUrl(await clientOf(), new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType }), { expiresIn: expiresSeconds });
    },
  };
}

function s3Client(endpoint: string | undefined): () => Promise<S3Client> {
  return loadOnce(async () => new (await s3()).S3Client({
    region: config.region,
    // An S3-compatible server (local mode, tests) answers on one host: bucket names go in the path;
    // local mode's server (s3rver) knows one fixed key. In AWS the function's role signs.
    ...(endpoint ? { endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {}),
  }));
}

/** The blob stores of a function that keeps or reads files (knowledge sources, ingestion); local mode names its own server and bucket. */
export function blobsFromConfig(given: { endpoint?: string; bucket?: string } = {}): Blobs {
  const client = s3Client(given.endpoint ?? config.s3Endpoint);
  const bucket = given.bucket ?? config.blobBucket;
  return {
    files: bucket ? s3BlobStore(client, bucket) : unconfiguredBlobStore(),
    bucket: (name) => s3BlobStore(client, name),
  };
}
