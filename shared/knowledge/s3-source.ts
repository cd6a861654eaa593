import { UpstreamError, ValidationError, BlobTooLargeError, DocumentError } from '../errors';
import type { Runtime } from '../runtime';
import { contentTypeOf, type StoredFile } from '../store/files';
import type { TenantScope } from '../tenancy';
import { bucketRefusal } from './source-limits';
import { s3ConfigOf, type KnowledgeSourceRecord } from './sources';
import { isoNow } from '../clock';
import { eachLimited } from '../each-limited';
import { log } from '../log';
import { accessFromEntries } from './access-lists';

/**
 * `s3` sources: a bucket (and prefix) of the deployer's account, granted by the CDK context
 * `s3SourceBuckets`. A sync lists the objects and keeps an entry per object with its ETag;
 * only objects whose ETag changed are read again, from the bucket itself (nothing is copied).
 */

/** The object metadata that lists who may read it (`x-amz-meta-cairn-access`). */
export const ACCESS_METADATA = 'cairn-access';

/** Objects one source may hold: a sync lists them all. */
export const MAX_S3_OBJECTS = 100_000;

/** S3's answers that no retry changes: a missing bucket, no permission. */
function permanent(error: unknown, bucket: string): never {
  const name = (error as { name?: string }).name ?? '';
  if (/NoSuchBucket|AccessDenied|Forbidden|InvalidAccessKeyId|AllAccessDisabled/.test(name)) {
    throw new UpstreamError(`Bucket ${bucket} cannot be read (${name}): check the bucket name and the deployment's grant`, { bucket, reason: name }, { retryable: false, cause: error });
  }
  throw error;
}

/** Brings the source's entries in line with the bucket: new and changed objects (by ETag) in, vanished ones out. */
export async function refreshS3Entries(rt: Runtime, scope: TenantScope, source: KnowledgeSourceRecord): Promise<void> {
  const { bucket, prefix } = s3ConfigOf(source);
  const refusal = bucketRefusal(bucket);
  // The grant may have been withdrawn since the source was written.
  if (refusal) throw new ValidationError('config.bucket', refusal);
  const existing = new Map((await rt.store.files.listFiles(scope, source.id)).map((f) => [f.path, f]));
  const seen = new Set<string>();
  const changed: StoredFile[] = [];
  try {
    for await (const object of rt.blobs.bucket(bucket).list(prefix)) {
      if (object.key.endsWith('/')) continue; // a "folder" marker
      if (seen.size >= MAX_S3_OBJECTS) throw new ValidationError('config.prefix', `selects more than ${MAX_S3_OBJECTS} objects; narrow it`);
      seen.add(object.key);
      const before = existing.get(object.key);
      // New metadata (an access list) leaves the ETag as it is but not the time it was written.
      if (before?.etag === object.etag && (!object.lastModified || before.updatedAt === object.lastModified)) continue;
      changed.push({
        path: object.key,
        size: object.size,
        contentType: contentTypeOf(object.key),
        sha256: `etag:${object.etag}`,
        etag: object.etag,
        updatedAt: object.lastModified ?? isoNow(rt.clock),
        versionId: object.etag,
      });
    }
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    permanent(error, bucket);
  }
  // Who may read each changed object: its `x-amz-meta-cairn-access` (user:<id>, group:<name>, comma-separated).
  await eachLimited(changed, 16, async (file) => {
    const head = await rt.blobs.bucket(bucket).head(file.path).catch((error: unknown) => permanent(error, bucket));
    const given = head?.metadata?.[ACCESS_METADATA];
    if (given === undefined) return;
    const { access, ignored } = accessFromEntries(given);
    if (ignored > 0) log.warn('access entries ignored', { sourceId: source.id, path: file.path, ignored, expected: 'user:<id> or group:<name>' });
    if (access) file.access = access;
  });
  await rt.store.files.putFileEntries(scope, source.id, changed);
  await rt.store.files.deleteFiles(scope, source.id, [...existing.values()].filter((f) => !seen.has(f.path)));
}

/** One object of an `s3` source, refused above `maxBytes`. */
export async function readS3Object(rt: Runtime, source: KnowledgeSourceRecord, file: StoredFile, maxBytes: number): Promise<Uint8Array> {
  const { bucket } = s3ConfigOf(source);
  try {
    return await rt.blobs.bucket(bucket).get(file.path, maxBytes);
  } catch (error) {
    if (error instanceof BlobTooLargeError) throw error;
    if ((error as { name?: string }).name === 'NoSuchKey') throw new DocumentError('UNREADABLE_DOCUMENT', 'The object was deleted from the bucket while the sync ran');
    return permanent(error, bucket);
  }
}
