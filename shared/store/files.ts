import { GetCommand, PutCommand, UpdateCommand } from './dynamo-commands';
import type { TenantScope } from '../tenancy';
import { ifConditionHolds } from './conditional';
import { deleteRequest, putRequest, batchOps } from './batch';
import type { Db } from './db';
import { keys } from './keys';
import { readItem } from './item-shape';
import { z } from 'zod';

/** What the store keeps of a file: its content is a blob (`blobKey`), or, for files written before blobs, parts in the table. */
const fileShape = z.lazy(() => z.object({
  path: z.string(),
  size: z.number(),
  contentType: z.string(),
  sha256: z.string(),
  updatedAt: z.string(),
  versionId: z.string(),
  blobKey: z.string().optional(),
  /** Legacy: how many parts of at most 300 KB hold the content in the table. */
  parts: z.number().optional(),
  /** Why the last sync could not read this version of the file (`sha256`: the version it tried). */
  error: z.object({ code: z.string(), message: z.string(), sha256: z.string() }).optional(),
  /** `s3` and `web` sources: what the origin said of the object (re-syncs compare it). */
  etag: z.string().optional(),
  lastModified: z.string().optional(),
  /** Who may read it (none: the source's mode decides). */
  access: z.object({ users: z.array(z.string()), groups: z.array(z.string()) }).optional(),
}));
export type StoredFile = z.infer<typeof fileShape>;

const CONTENT_TYPES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  csv: 'text/csv',
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export function contentTypeOf(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'text/plain';
}

const toStored = (item: Record<string, unknown>): StoredFile => readItem(fileShape, item, 'file');

/** An upload: where the client PUTs the bytes, and what the file will be once it is completed. */
const uploadShape = z.lazy(() => z.object({
  uploadId: z.string(),
  path: z.string(),
  contentType: z.string(),
  size: z.number(),
  blobKey: z.string(),
  createdAt: z.string(),
  /** Epoch seconds: the table's TTL removes an abandoned upload (the bucket's lifecycle its object). */
  expiresAt: z.number(),
  /** Set once completed: a repeated complete answers with the same file. */
  completed: z.object({ sha256: z.string(), versionId: z.string() }).optional(),
  /** Who may read the file once completed. */
  access: z.object({ users: z.array(z.string()), groups: z.array(z.string()) }).optional(),
}));
export type UploadRecord = z.infer<typeof uploadShape>;

export function filesStore(db: Db) {
  const { batchWrite, batchGet, queryAll } = batchOps(db);
  async function listFiles(scope: TenantScope, sourceId: string): Promise<StoredFile[]> {
    return (await queryAll(keys.filePartition(scope, sourceId))).map(toStored);
  }

  /** Writes file entries (their content is already in the blob store): the entry is what makes a version visible. */
  async function putFileEntries(scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
    await batchWrite(files.map((f) => putRequest({ ...keys.file(scope, sourceId, f.path), ...f })));
  }

  /** Sets one field of a file entry (or removes it, undefined) while `condition` holds; otherwise nothing changes. */
  async function setFileField(scope: TenantScope, sourceId: string, path: string, field: string, value: unknown, condition: { expression: string; values?: Record<string, unknown> }): Promise<void> {
    const values = { ...condition.values, ...(value !== undefined ? { ':value': value } : {}) };
    await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.file(scope, sourceId, path),
          UpdateExpression: value !== undefined ? 'SET #field = :value' : 'REMOVE #field',
          ConditionExpression: condition.expression,
          ExpressionAttributeNames: { '#field': field },
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        }),
      ),
    );
  }

  /** Records (or clears) why a version of a file could not be read; a newer version is left alone. */
  const setFileError = (scope: TenantScope, sourceId: string, path: string, sha256: string, error: { code: string; message: string } | undefined) =>
    setFileField(scope, sourceId, path, 'error', error ? { ...error, sha256 } : undefined, { expression: 'sha256 = :sha', values: { ':sha': sha256 } });

  /** Sets (or removes) a file's access list; a file gone meanwhile is left gone. */
  const setFileAccess = (scope: TenantScope, sourceId: string, path: string, access: { users: string[]; groups: string[] } | undefined) =>
    setFileField(scope, sourceId, path, 'access', access, { expression: 'attribute_exists(pk)' });

  async function putUpload(scope: TenantScope, sourceId: string, upload: UploadRecord): Promise<void> {
    await db.client.send(new PutCommand({ TableName: db.table, Item: { ...keys.upload(scope, sourceId, upload.uploadId), ...upload } }));
  }

  async function getUpload(scope: TenantScope, sourceId: string, uploadId: string): Promise<UploadRecord | undefined> {
    const out = await db.client.send(new GetCommand({ TableName: db.table, Key: keys.upload(scope, sourceId, uploadId), ConsistentRead: true }));
    return out.Item ? readItem(uploadShape, out.Item, 'upload') : undefined;
  }

  /** Marks an upload completed once; false when another request completed it first. */
  async function markUploadCompleted(scope: TenantScope, sourceId: string, uploadId: string, completed: NonNullable<UploadRecord['completed']>): Promise<boolean> {
    const out = await ifConditionHolds(
      db.client.send(
        new UpdateCommand({
          TableName: db.table,
          Key: keys.upload(scope, sourceId, uploadId),
          UpdateExpression: 'SET completed = :c',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(completed)',
          ExpressionAttributeValues: { ':c': completed },
        }),
      ),
    );
    return out !== undefined;
  }

  function partKeys(scope: TenantScope, sourceId: string, file: StoredFile) {
    return Array.from({ length: file.parts ?? 0 }, (_, i) => keys.filePart(scope, sourceId, file.versionId, i));
  }

  async function deleteFiles(scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
    await batchWrite(files.map((f) => deleteRequest(keys.file(scope, sourceId, f.path))));
  }

  async function deleteLegacyParts(scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
    await batchWrite(files.flatMap((f) => partKeys(scope, sourceId, f).map(deleteRequest)));
  }

  /** Deletes every file entry and every legacy part, orphans from interrupted writes included. */
  async function deleteAllFiles(scope: TenantScope, sourceId: string): Promise<void> {
    for (const pk of [keys.filePartition(scope, sourceId), keys.filePartPartition(scope, sourceId)]) {
      const items = await queryAll(pk);
      await batchWrite(items.map((item) => deleteRequest({ pk, sk: String(item.sk) })));
    }
  }

  /** File entries for the given paths (missing paths are absent from the result). */
  async function getFiles(scope: TenantScope, sourceId: string, paths: string[]): Promise<StoredFile[]> {
    return (await batchGet(paths.map((p) => keys.file(scope, sourceId, p)))).map(toStored);
  }

  /** Legacy: the content of a file written before blobs, from its parts in the table. */
  async function readLegacyContent(scope: TenantScope, sourceId: string, file: StoredFile): Promise<string> {
    const parts = await queryAll(keys.filePartPartition(scope, sourceId), `${file.versionId}#`);
    return parts.map((p) => String(p.content)).join('');
  }
  return { putUpload, getUpload, markUploadCompleted, listFiles, putFileEntries, setFileError, setFileAccess, deleteFiles, deleteLegacyParts, deleteAllFiles, getFiles, readLegacyContent };
}

export type FilesStore = ReturnType<typeof filesStore>;
