import { z } from '@hono/zod-openapi';
import { documentAccessInput } from './source-schema';
import { ConflictError, NotFoundError } from '../errors';
import type { Runtime } from '../runtime';
import { canonicalAccess, type AccessList } from '../store/segment-access';
import { hashWithAccess } from './access-lists';
import type { TenantScope } from '../tenancy';
import { knowledgeSources } from './sources';

/**
 * Who may read a document: the users and groups it names. Given per file (`files[].access`, on
 * upload too), from a PostgreSQL column, from an S3 object's metadata, or set later with
 * `PUT …/documents/{documentId}/access`, which changes what searches return at once without
 * indexing the text again. Documents without a list follow the source's `access`: `open` (readable
 * by everyone) or `restricted` (by nobody).
 */
export type { AccessList };

/**
 * Sets (or, with null, removes) a document's list: in its segments' items, where searches read
 * it, then in its record (and, for a file, in the file, so a later sync of it keeps the list). A
 * source that is syncing or compacting answers 409: its chunks are moving.
 */
export async function setDocumentAccess(rt: Runtime, scope: TenantScope, sourceId: string, documentId: string, access: AccessList | null) {
  const source = await knowledgeSources.get(rt, scope, sourceId);
  if (!/^doc_[0-9a-f]{26}$/.test(documentId)) throw new NotFoundError('document', documentId);
  if (source.status !== 'ready' || source.compaction) throw new ConflictError(`Knowledge source ${sourceId} is ${source.compaction ? 'being compacted' : source.status}: set a document’s access when it is ready`, { status: source.status });
  const document = (await rt.store.searchIndex.listDocuments(scope, sourceId)).find((d) => d.documentId === documentId);
  if (!document) throw new NotFoundError('document', documentId);
  const list = access ? canonicalAccess(access) : undefined;
  const applied = await rt.store.searchIndex.setChunkAccess(scope, sourceId, document.chunks.map((c) => c.docNo), list);
  if (!applied) throw new ConflictError(`The chunks of document ${documentId} moved meanwhile (a compaction): try again`, { retryable: true });
  const { access: _old, ...rest } = document;
  await rt.store.searchIndex.writeDocuments(scope, sourceId, [{ ...rest, hash: hashWithAccess(baseHash(document.hash), list), ...(list ? { access: list } : {}) }]);
  if (source.type === 'file-collection') await rt.store.files.setFileAccess(scope, sourceId, document.documentKey, list);
  return { documentId, path: document.documentKey, access: list ?? null };
}

/** A hash without the list part `hashWithAccess` added. */
const baseHash = (hash: string) => hash.split(':')[0]!;

export const documentAccessShown = z
  .object({ documentId: z.string(), path: z.string().openapi({ description: 'The file’s path (or the row key)' }), access: documentAccessInput.nullable().openapi({ description: 'null: none (the source’s mode decides)' }) })
  .openapi('DocumentAccessResult');
