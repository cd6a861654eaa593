import { createHash, randomBytes } from 'node:crypto';
import { eachLimited } from '../each-limited';
import { contentTypeOf, type StoredFile } from '../store/files';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import { isoNow } from '../clock';
import { accessKey, canonicalAccess, type AccessList } from '../store/segment-access';

/**
 * Files' content lives in the blob store, one object per version; the table holds the entry that
 * points at it. A version's object is written before its entry, so a reader never finds an entry
 * without content, and the object of a replaced version is deleted only after the new entry.
 */

/** A file as a request brings it: its bytes, decoded from `content` or `contentBase64` or a multipart part. */
export interface FileBytes {
  path: string;
  bytes: Uint8Array;
  contentType?: string;
  /** A crawled page's validators, kept with its version for the next crawl's conditional request. */
  etag?: string;
  lastModified?: string;
  /** Who may read it (none: the source's mode decides). */
  access?: AccessList;
}

/** Where a source's file versions live in the files bucket (tenant first: one prefix holds a tenant's files). */
export const sourceBlobPrefix = (scope: TenantScope, sourceId: string) => `files/${scope.tenantId}/${sourceId}/`;
export const blobKeyOf = (scope: TenantScope, sourceId: string, versionId: string) => `${sourceBlobPrefix(scope, sourceId)}${versionId}`;
export const newVersionId = () => randomBytes(10).toString('hex');

export const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The entry of a new version whose object is at `blobKey`. */
export function fileEntry(file: { path: string; size: number; sha256: string; contentType?: string; versionId: string; blobKey: string; access?: AccessList }, updatedAt: string): StoredFile {
  return {
    path: file.path,
    size: file.size,
    contentType: file.contentType ?? contentTypeOf(file.path),
    sha256: file.sha256,
    updatedAt,
    versionId: file.versionId,
    blobKey: file.blobKey,
    ...(file.access ? { access: canonicalAccess(file.access) } : {}),
  };
}

/** Whether two access lists (or none) say the same. */
export const sameAccess = (a: AccessList | undefined, b: AccessList | undefined) => accessKey(a) === accessKey(b);

/** Whether a stored version already holds these bytes as this type. */
export function sameContent(previous: StoredFile | undefined, sha256: string, contentType: string): previous is StoredFile {
  return previous?.sha256 === sha256 && previous.contentType === contentType;
}

/**
 * Adds or replaces files by path; a file whose content is unchanged is not rewritten (a retry is
 * cheap and idempotent) — only its validators or its access list, when they changed. Returns the
 * paths whose content or access list changed (what the next sync indexes again).
 */
export async function writeFiles(rt: Runtime, scope: TenantScope, sourceId: string, files: FileBytes[], existing: StoredFile[]): Promise<string[]> {
  const current = new Map(existing.map((f) => [f.path, f]));
  const entries: StoredFile[] = [];
  const revalidated: StoredFile[] = [];
  const replaced: StoredFile[] = [];
  const relisted: string[] = [];
  for (const file of files) {
    const sha256 = sha256Of(file.bytes);
    const contentType = file.contentType ?? contentTypeOf(file.path);
    const previous = current.get(file.path);
    const validators = { ...(file.etag ? { etag: file.etag } : {}), ...(file.lastModified ? { lastModified: file.lastModified } : {}) };
    if (sameContent(previous, sha256, contentType)) {
      const relist = !sameAccess(previous.access, file.access);
      if (relist) relisted.push(file.path);
      if (relist || previous.etag !== file.etag || previous.lastModified !== file.lastModified) {
        const { etag: _etag, lastModified: _lastModified, access: _access, ...kept } = previous;
        revalidated.push({ ...kept, ...validators, ...(file.access ? { access: canonicalAccess(file.access) } : {}) });
      }
      continue;
    }
    const versionId = newVersionId();
    entries.push({ ...fileEntry({ path: file.path, size: file.bytes.byteLength, sha256, contentType, versionId, blobKey: blobKeyOf(scope, sourceId, versionId), ...(file.access ? { access: file.access } : {}) }, isoNow(rt.clock)), ...validators });
    if (previous) replaced.push(previous);
  }
  const byPath = new Map(files.map((f) => [f.path, f]));
  await eachLimited(entries, 8, (entry) => rt.blobs.files.put(entry.blobKey!, byPath.get(entry.path)!.bytes, entry.contentType));
  await rt.store.files.putFileEntries(scope, sourceId, [...entries, ...revalidated]);
  await discardContents(rt, scope, sourceId, replaced);
  return [...entries.map((e) => e.path), ...relisted];
}

/** Deletes the content of file versions no entry points at any more (legacy parts included). */
export async function discardContents(rt: Runtime, scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
  await rt.blobs.files.delete(files.flatMap((f) => (f.blobKey ? [f.blobKey] : [])));
  const legacy = files.filter((f) => !f.blobKey && f.parts);
  if (legacy.length > 0) await rt.store.files.deleteLegacyParts(scope, sourceId, legacy);
}

/** Removes files: their entries first (so no reader finds them), then their content. */
export async function deleteFiles(rt: Runtime, scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
  await rt.store.files.deleteFiles(scope, sourceId, files);
  await discardContents(rt, scope, sourceId, files);
}

/** Every file of a source and all its content, orphans of interrupted writes included. */
export async function deleteAllFiles(rt: Runtime, scope: TenantScope, sourceId: string): Promise<void> {
  await rt.store.files.deleteAllFiles(scope, sourceId);
  const orphans: string[] = [];
  for await (const blob of rt.blobs.files.list(sourceBlobPrefix(scope, sourceId))) orphans.push(blob.key);
  await rt.blobs.files.delete(orphans);
}

/** One file version's bytes (from the files bucket, or legacy parts), refused above `maxBytes`. */
export async function readFileBytes(rt: Runtime, scope: TenantScope, sourceId: string, file: StoredFile, maxBytes?: number): Promise<Uint8Array> {
  if (file.blobKey) return rt.blobs.files.get(file.blobKey, maxBytes);
  return Buffer.from(await rt.store.files.readLegacyContent(scope, sourceId, file), 'utf8');
}

