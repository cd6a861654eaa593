import { createHash, randomBytes } from 'node:crypto';
import type { TenantScope } from '../tenancy';
import { deleteRequest, putRequest, batchOps } from './batch';
import type { Db } from './db';
import { keys } from './keys';

/** What the store keeps of a file besides its content. */
export interface StoredFile {
  path: string;
  size: number;
  contentType: string;
  sha256: string;
  updatedAt: string;
  versionId: string;
  parts: number;
}

/** Content is split into parts well under DynamoDB's 400 KB item limit. */
const PART_BYTES = 300 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  html: 'text/html',
  htm: 'text/html',
  json: 'application/json',
  csv: 'text/csv',
};

export function contentTypeOf(path: string): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return CONTENT_TYPES[ext] ?? 'text/plain';
}

/** Splits UTF-8 content at character boundaries into parts of at most PART_BYTES. */
function splitContent(content: string): string[] {
  const bytes = Buffer.from(content, 'utf8');
  if (bytes.length <= PART_BYTES) return [content];
  const parts: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + PART_BYTES, bytes.length);
    while (end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a character
    parts.push(bytes.subarray(start, end).toString('utf8'));
    start = end;
  }
  return parts;
}

function toStored(item: Record<string, unknown>): StoredFile {
  const { path, size, contentType, sha256, updatedAt, versionId, parts } = item as unknown as StoredFile;
  return { path, size, contentType, sha256, updatedAt, versionId, parts };
}

export function filesStore(db: Db) {
  const { batchWrite, batchGet, queryAll } = batchOps(db);
  async function listFiles(scope: TenantScope, sourceId: string): Promise<StoredFile[]> {
    return (await queryAll(keys.filePartition(scope, sourceId))).map(toStored);
  }

  /**
   * Adds or replaces files by path. Parts are written before the file entry that points at them,
   * so a reader never sees a file whose content is missing; a file whose content is unchanged is
   * not rewritten (retries are cheap and idempotent). Returns the paths that changed.
   */
  async function putFiles(
    scope: TenantScope,
    sourceId: string,
    files: Array<{ path: string; content: string }>,
    existing: StoredFile[],
  ): Promise<string[]> {
    const current = new Map(existing.map((f) => [f.path, f]));
    const now = new Date().toISOString();
    const parts: ReturnType<typeof putRequest>[] = [];
    const entries: ReturnType<typeof putRequest>[] = [];
    const obsolete: ReturnType<typeof deleteRequest>[] = [];
    const changed: string[] = [];
    for (const file of files) {
      const sha256 = createHash('sha256').update(file.content, 'utf8').digest('hex');
      const previous = current.get(file.path);
      if (previous?.sha256 === sha256) continue;
      const versionId = randomBytes(8).toString('hex');
      const pieces = splitContent(file.content);
      pieces.forEach((content, index) =>
        parts.push(putRequest({ ...keys.filePart(scope, sourceId, versionId, index), content })),
      );
      const stored: StoredFile = {
        path: file.path,
        size: Buffer.byteLength(file.content, 'utf8'),
        contentType: contentTypeOf(file.path),
        sha256,
        updatedAt: now,
        versionId,
        parts: pieces.length,
      };
      entries.push(putRequest({ ...keys.file(scope, sourceId, file.path), ...stored }));
      if (previous) obsolete.push(...partKeys(scope, sourceId, previous).map(deleteRequest));
      changed.push(file.path);
    }
    await batchWrite(parts);
    await batchWrite(entries);
    await batchWrite(obsolete);
    return changed;
  }

  function partKeys(scope: TenantScope, sourceId: string, file: StoredFile) {
    return Array.from({ length: file.parts }, (_, i) => keys.filePart(scope, sourceId, file.versionId, i));
  }

  async function deleteFiles(scope: TenantScope, sourceId: string, files: StoredFile[]): Promise<void> {
    await batchWrite(files.map((f) => deleteRequest(keys.file(scope, sourceId, f.path))));
    await batchWrite(files.flatMap((f) => partKeys(scope, sourceId, f).map(deleteRequest)));
  }

  /** Deletes every file entry and every part, orphans from interrupted writes included. */
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

  /** One file's content, from its parts. */
  async function readFileContent(scope: TenantScope, sourceId: string, file: StoredFile): Promise<string> {
    const parts = await queryAll(keys.filePartPartition(scope, sourceId), `${file.versionId}#`);
    return parts.map((p) => String(p.content)).join('');
  }

  /** The content of the given files, read in one pass over the source's parts. */
  async function readContents(
    scope: TenantScope,
    sourceId: string,
    files: StoredFile[],
  ): Promise<Map<string, string>> {
    const wanted = new Map(files.map((f) => [f.versionId, f]));
    const pieces = new Map<string, string[]>();
    for (const item of await queryAll(keys.filePartPartition(scope, sourceId))) {
      const [versionId, index] = String(item.sk).split('#');
      if (!versionId || !wanted.has(versionId)) continue;
      const list = pieces.get(versionId) ?? [];
      list[Number(index)] = String(item.content);
      pieces.set(versionId, list);
    }
    const out = new Map<string, string>();
    for (const file of files) out.set(file.path, (pieces.get(file.versionId) ?? []).join(''));
    return out;
  }
  return { listFiles, putFiles, deleteFiles, deleteAllFiles, getFiles, readFileContent, readContents };
}

export type FilesStore = ReturnType<typeof filesStore>;
