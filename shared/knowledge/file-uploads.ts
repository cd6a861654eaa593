import { AppError, ConflictError, NotFoundError } from '../errors';
import { isId, newId } from '../ids';
import { contentTypeOf, type StoredFile } from '../store/files';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { blobKeyOf, discardContents, fileEntry, newVersionId, sameAccess, sameContent } from './file-contents';
import { canonicalAccess, type AccessList } from '../store/segment-access';
import { MAX_FILE_BYTES } from './source-limits';
import type { UploadInput } from './source-schema';
import { afterFilesChanged, assertFileCollection, knowledgeSources } from './sources';
import { isoNow } from '../clock';

/**
 * Files larger than a request may carry: the client asks for an upload, PUTs the bytes straight to
 * the blob store with the presigned URL (the API never holds them), then completes it, which turns
 * the object into the file's new version. An upload not completed is dropped by the table's TTL and
 * its object by the bucket's lifecycle rule on `uploads/`.
 */

/** How long the upload URL is valid. */
export const UPLOAD_URL_SECONDS = 3600;
/** How long an upload may wait to be completed. */
const UPLOAD_TTL_SECONDS = 24 * 3600;

const uploadKeyOf = (scope: TenantScope, sourceId: string, uploadId: string) => `uploads/${scope.tenantId}/${sourceId}/${uploadId}`;

export async function createUpload(rt: Runtime, scope: TenantScope, sourceId: string, input: UploadInput) {
  const source = await knowledgeSources.get(rt, scope, sourceId);
  assertFileCollection(source);
  if (input.size > MAX_FILE_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `A file may have at most ${MAX_FILE_BYTES} bytes`, { field: 'size', limitBytes: MAX_FILE_BYTES, actualBytes: input.size });
  }
  const uploadId = newId('upload', rt.clock.now());
  const contentType = input.contentType ?? contentTypeOf(input.path);
  const blobKey = uploadKeyOf(scope, sourceId, uploadId);
  const now = rt.clock.now();
  const url = await rt.blobs.files.presignPut(blobKey, { contentType, expiresSeconds: UPLOAD_URL_SECONDS });
  await rt.store.files.putUpload(scope, sourceId, {
    uploadId,
    path: input.path,
    contentType,
    size: input.size,
    blobKey,
    createdAt: new Date(now).toISOString(),
    expiresAt: Math.floor(now / 1000) + UPLOAD_TTL_SECONDS,
    ...(input.access ? { access: canonicalAccess(input.access) } : {}),
  });
  return {
    uploadId,
    path: input.path,
    size: input.size,
    contentType,
    method: 'PUT' as const,
    url,
    headers: { 'content-type': contentType },
    expiresAt: new Date(now + UPLOAD_URL_SECONDS * 1000).toISOString(),
  };
}

/**
 * Makes the uploaded object the file's new version (an unchanged file stays as it is) and, for a
 * connected source, starts a sync. Idempotent: completing again answers with the same file, and a
 * completion cut off after it was recorded writes the file entry it still owes.
 */
export async function completeUpload(rt: Runtime, scope: TenantScope, sourceId: string, uploadId: string) {
  const source = await knowledgeSources.get(rt, scope, sourceId);
  assertFileCollection(source);
  const upload = isId('upload', uploadId) ? await rt.store.files.getUpload(scope, sourceId, uploadId) : undefined;
  if (!upload) throw new NotFoundError('upload', uploadId);
  const existing = (await rt.store.files.getFiles(scope, sourceId, [upload.path]))[0];
  if (upload.completed) {
    const { versionId, sha256 } = upload.completed;
    const owed = existing?.sha256 !== sha256 && (await rt.blobs.files.head(blobKeyOf(scope, sourceId, versionId)));
    if (owed) await writeVersion(rt, scope, sourceId, { path: upload.path, size: owed.size, sha256, contentType: upload.contentType, versionId, access: upload.access }, existing);
    return { source: owed ? await afterFilesChanged(rt, scope, source) : source, path: upload.path, changed: Boolean(owed) };
  }
  const object = await rt.blobs.files.head(upload.blobKey);
  if (!object) throw new ConflictError(`Nothing has been uploaded for ${uploadId} yet: PUT the file to its URL first`, { uploadId });
  if (object.size > MAX_FILE_BYTES) {
    await rt.blobs.files.delete([upload.blobKey]);
    throw new AppError('PAYLOAD_TOO_LARGE', `The uploaded file has ${object.size} bytes; a file may have at most ${MAX_FILE_BYTES}`, { field: 'size', limitBytes: MAX_FILE_BYTES, actualBytes: object.size });
  }
  const sha256 = await rt.blobs.files.sha256(upload.blobKey);
  const sameBytes = sameContent(existing, sha256, upload.contentType);
  // The same bytes with another access list: the entry changes, its content stays.
  const unchanged = sameBytes && sameAccess(existing.access, upload.access);
  const versionId = sameBytes ? existing.versionId : newVersionId();
  if (!sameBytes) await rt.blobs.files.copy(upload.blobKey, blobKeyOf(scope, sourceId, versionId));
  if (!(await rt.store.files.markUploadCompleted(scope, sourceId, uploadId, { sha256, versionId }))) {
    // Another request completed it first; it writes the file.
    if (!sameBytes) await rt.blobs.files.delete([blobKeyOf(scope, sourceId, versionId)]);
    return { source, path: upload.path, changed: false };
  }
  if (!unchanged) await writeVersion(rt, scope, sourceId, { path: upload.path, size: object.size, sha256, contentType: upload.contentType, versionId, access: upload.access }, existing);
  await rt.blobs.files.delete([upload.blobKey]);
  return { source: unchanged ? source : await afterFilesChanged(rt, scope, source), path: upload.path, changed: !unchanged };
}

/** The file entry of a version whose object is in place; the version it replaces (read once by the caller) loses its content. */
async function writeVersion(rt: Runtime, scope: TenantScope, sourceId: string, version: { path: string; size: number; sha256: string; contentType: string; versionId: string; access?: AccessList }, previous: StoredFile | undefined) {
  await rt.store.files.putFileEntries(scope, sourceId, [fileEntry({ ...version, blobKey: blobKeyOf(scope, sourceId, version.versionId) }, isoNow(rt.clock))]);
  if (previous && previous.versionId !== version.versionId) await discardContents(rt, scope, sourceId, [previous]);
}
