import { BlobTooLargeError } from '../errors';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  NotFound,
  NoSuchKey,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { config } from '../config';
import { unconfiguredBlobStore, type Blobs, type BlobStore } from './blobs';

const unquote = (etag: string | undefined) => (etag ?? '').replace(/^(W\/)?"|"$/g, '');
const missing = (error: unknown) => error instanceof NoSuchKey || error instanceof NotFound || (error as { name?: string }).name === 'NotFound';

export function s3BlobStore(client: S3Client, bucket: string): BlobStore {
  return {
    bucket,
    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.byteLength }));
    },
    async get(key, maxBytes) {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (maxBytes !== undefined && (out.ContentLength ?? 0) > maxBytes) {
        (out.Body as Readable | undefined)?.destroy();
        throw new BlobTooLargeError(key, out.ContentLength ?? 0, maxBytes);
      }
      return out.Body!.transformToByteArray();
    },
    async head(key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return { key, size: out.ContentLength ?? 0, etag: unquote(out.ETag), lastModified: out.LastModified?.toISOString(), contentType: out.ContentType };
      } catch (error) {
        if (missing(error)) return undefined;
        throw error;
      }
    },
    async sha256(key) {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const hash = createHash('sha256');
      for await (const piece of out.Body as Readable) hash.update(piece as Buffer);
      return hash.digest('hex');
    },
    async copy(from, to) {
      await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: `${bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}` }));
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const objects = keys.slice(i, i + 1000).map((Key) => ({ Key }));
        if (objects.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } }));
      }
    },
    async *list(prefix) {
      let token: string | undefined;
      do {
        const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
        for (const o of out.Contents ?? []) yield { key: o.Key!, size: o.Size ?? 0, etag: unquote(o.ETag), lastModified: o.LastModified?.toISOString() };
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    },
    presignPut(key, { contentType, expiresSeconds }) {
      return getSignedUrl(client, new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType }), { expiresIn: expiresSeconds });
    },
  };
}

function s3Client(endpoint: string | undefined): S3Client {
  return new S3Client({
    region: config.region,
    // An S3-compatible server (local mode, tests) answers on one host: bucket names go in the path;
    // local mode's server (s3rver) knows one fixed key. In AWS the function's role signs.
    ...(endpoint ? { endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } : {}),
  });
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
