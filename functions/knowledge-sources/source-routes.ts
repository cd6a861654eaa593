import { createRoute, z } from '@hono/zod-openapi';
import { requestCompaction, compactionAccepted, connectInput, filePath, filesUpload, uploadInput, uploadTicket, type FilesUpload, searchInput, searchResponse, knowledgeSource, knowledgeSourceInput, addFiles, filesOf, createKnowledgeSource, knowledgeSources, presentSource, publicSource, removeFile, replaceKnowledgeSource, searchKnowledgeSource, type FileBytes, completeUpload, createUpload, documentAccessInput, documentAccessShown, setDocumentAccess } from '../../shared/knowledge';
import { connectKnowledgeSource, removeKnowledgeSource } from '../../shared/agents';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../shared/http/context';
import { endUserTokenHeaders, requestEndUser } from '../../shared/http/end-user';
import { ValidationError } from '../../shared/errors';
import { registerCrud } from '../../shared/http/crud-routes';
import { ok } from '../../shared/http/envelope';
import { commonErrors, envelope, jsonContent } from '../../shared/http/openapi-schemas';
import type { RuntimeWith } from '../../shared/runtime';

const multipartFiles = z
  .record(z.string(), z.unknown())
  .openapi({ type: 'object', properties: { file: { type: 'array', items: { type: 'string', format: 'binary' } } }, description: 'File parts; each part’s filename is the file’s path' });

const isMultipart = (type: string | undefined) => /^multipart\/form-data/i.test(type ?? '');

/** The file parts of a multipart body; a filename that is not a valid path is a 400 naming the part. */
async function filesOfForm(form: Record<string, unknown>): Promise<FileBytes[]> {
  const parts = Object.entries(form).flatMap(([field, value]) => (Array.isArray(value) ? (value as unknown[]) : [value]).map((v) => ({ field, value: v })));
  const files: FileBytes[] = [];
  for (const [index, { field, value }] of parts.entries()) {
    if (!(value instanceof File)) continue;
    const path = filePath.safeParse(value.name);
    if (!path.success) throw new ValidationError(`${field}[${index}].filename`, `${path.error.issues[0]?.message ?? 'is not a valid path'}: ${JSON.stringify(value.name)}`);
    files.push({ path: path.data, bytes: new Uint8Array(await value.arrayBuffer()), ...(value.type && value.type !== 'application/octet-stream' ? { contentType: value.type } : {}) });
  }
  if (new Set(files.map((f) => f.path)).size !== files.length) throw new ValidationError('files', 'two parts have the same filename (path)');
  return files;
}

const includeQuery = z.object({
  include: z.enum(['content']).optional().openapi({ description: '`content` adds each file’s content' }),
});

/** `/v1/knowledge-sources`: CRUD, files and uploads, connecting, search and compaction. */
export function registerSourceRoutes(app: OpenAPIHono<AppEnv>, rt: RuntimeWith<'queues' | 'secrets' | 'blobs' | 'models'>) {
  const base = '/v1/knowledge-sources';

  registerCrud(app, rt, {
    basePath: base,
    idParam: 'knowledgeSourceId',
    tag: 'Knowledge sources',
    noun: 'knowledge source',
    operationNoun: 'KnowledgeSource',
    input: knowledgeSourceInput,
    output: knowledgeSource,
    getQuery: includeQuery,
    async create(rt, scope, input, idempotency) {
      const created = await createKnowledgeSource(rt, scope, input, idempotency);
      return { ...created, record: await presentSource(rt, scope, created.record, { files: true }) };
    },
    async get(rt, scope, id, query) {
      const source = await knowledgeSources.get(rt, scope, id);
      return presentSource(rt, scope, source, { files: true, content: query.include === 'content' });
    },
    list: async (rt, scope, page) => {
      const listed = await knowledgeSources.list(rt, scope, page);
      return { ...listed, items: listed.items.map(publicSource) };
    },
    async replace(rt, scope, id, input, precondition) {
      return presentSource(rt, scope, await replaceKnowledgeSource(rt, scope, id, input, precondition), { files: true });
    },
    remove: removeKnowledgeSource,
  });

  const params = z.object({ knowledgeSourceId: z.string().min(1).max(200) });
  const security = [{ ApiKeyAuth: [] }];

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/files`,
      operationId: 'addKnowledgeSourceFiles',
      tags: ['Knowledge sources'],
      summary: 'Add or replace files by path',
      description:
        'JSON (`content` for text, `contentBase64` for any file) or multipart/form-data (each file part’s filename is its path, ' +
        'e.g. `curl -F "file=@manual.pdf;filename=manuals/manual.pdf"`). At most 5 MB of content per request; larger files (up to 100 MB) go through uploads.',
      security,
      request: {
        params,
        body: {
          content: { 'application/json': { schema: filesUpload }, 'multipart/form-data': { schema: multipartFiles } },
          required: false,
        },
      },
      responses: { 200: jsonContent(envelope(knowledgeSource), 'The source with its files'), ...commonErrors },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const id = c.req.valid('param').knowledgeSourceId;
      const files = isMultipart(c.req.header('content-type')) ? await filesOfForm(c.req.valid('form')) : filesOf((c.req.valid('json') as FilesUpload).files ?? []);
      if (files.length === 0) throw new ValidationError('files', 'at least one file is required (JSON files[] or multipart file parts)');
      const { source } = await addFiles(rt, scope, id, files);
      return ok(c, await presentSource(rt, scope, source, { files: true }));
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/uploads`,
      operationId: 'createKnowledgeSourceUpload',
      tags: ['Knowledge sources'],
      summary: 'Start an upload of a large file (up to 100 MB)',
      description:
        'Answers a presigned URL: PUT the file’s bytes there with the given headers (they never pass through the API), then POST …/uploads/{uploadId}/complete. ' +
        'The URL is valid for an hour; an upload not completed within a day is dropped.',
      security,
      request: { params, body: { content: { 'application/json': { schema: uploadInput } }, required: true } },
      responses: { 201: jsonContent(envelope(uploadTicket), 'Where to PUT the file'), ...commonErrors },
    }),
    async (c) => ok(c, await createUpload(rt, c.get('identity').scope, c.req.valid('param').knowledgeSourceId, c.req.valid('json')), 201),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/uploads/{uploadId}/complete`,
      operationId: 'completeKnowledgeSourceUpload',
      tags: ['Knowledge sources'],
      summary: 'Complete an upload: the uploaded file becomes the file at its path',
      description: 'Idempotent: completing again answers the same. 409 while nothing has been PUT; 413 when the object is over 100 MB (it is deleted).',
      security,
      request: { params: params.extend({ uploadId: z.string().min(1).max(200) }) },
      responses: {
        200: jsonContent(envelope(knowledgeSource), 'The source with its files (a connected source is syncing)'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'Nothing uploaded yet'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { knowledgeSourceId, uploadId } = c.req.valid('param');
      const { source } = await completeUpload(rt, scope, knowledgeSourceId, uploadId);
      return ok(c, await presentSource(rt, scope, source, { files: true }));
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: `${base}/{knowledgeSourceId}/documents/{documentId}/access`,
      operationId: 'setDocumentAccess',
      tags: ['Knowledge sources'],
      summary: 'Set who may read one document',
      description:
        'The users and groups that may read the document (search results, grounding, citations, knowledge tools, MCP, A2A and evaluations return it to them only); `null` removes its list, so the source’s `access` decides. Takes effect for the next search, without indexing the text again. A file keeps its list through later syncs; a PostgreSQL row or S3 object takes its source’s list again when it changes there. 409 while the source syncs or compacts.',
      security,
      request: {
        params: params.extend({ documentId: z.string().min(1).max(200).openapi({ description: 'As search results and file lists name it (doc_…)' }) }),
        body: { content: { 'application/json': { schema: z.object({ access: documentAccessInput.nullable() }).openapi('SetDocumentAccessRequest', { example: { access: { users: ['u-42'], groups: ['finance'] } } }) } }, required: true },
      },
      responses: { 200: jsonContent(envelope(documentAccessShown), 'The document’s list now'), 409: jsonContent(commonErrors[400].content['application/json'].schema, 'The source is syncing or compacting'), ...commonErrors },
    }),
    async (c) => {
      const { knowledgeSourceId, documentId } = c.req.valid('param');
      return ok(c, await setDocumentAccess(rt, c.get('identity').scope, knowledgeSourceId, documentId, c.req.valid('json').access));
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: `${base}/{knowledgeSourceId}/files`,
      operationId: 'removeKnowledgeSourceFile',
      tags: ['Knowledge sources'],
      summary: 'Remove one file',
      security,
      request: { params, query: z.object({ path: filePath }) },
      responses: {
        200: jsonContent(
          envelope(z.object({ id: z.string(), path: z.string(), deleted: z.literal(true) })),
          'Removed',
        ),
        ...commonErrors,
      },
    }),
    async (c) => {
      const id = c.req.valid('param').knowledgeSourceId;
      const { path } = c.req.valid('query');
      await removeFile(rt, c.get('identity').scope, id, path);
      return ok(c, { id, path, deleted: true as const });
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/connect`,
      operationId: 'connectKnowledgeSource',
      tags: ['Knowledge sources'],
      summary: 'Connect the source (test and store credentials, link an agent) and ingest it',
      description:
        'PostgreSQL: wrong credentials → 400 (details.field credentials); unreachable host or timeout (5 s) → 502; ' +
        'missing table or column → 400 naming it. Ingestion runs asynchronously: poll GET until status is ready.',
      security,
      request: { params, body: { content: { 'application/json': { schema: connectInput } } } },
      responses: {
        202: jsonContent(envelope(knowledgeSource), 'Ingestion queued (status pending)'),
        200: jsonContent(envelope(knowledgeSource), 'Connected; nothing to ingest'),
        502: jsonContent(commonErrors[400].content['application/json'].schema, 'The database could not be reached'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const scope = c.get('identity').scope;
      const { source, queued } = await connectKnowledgeSource(rt, scope, c.req.valid('param').knowledgeSourceId, c.req.valid('json'));
      return ok(c, source, queued ? 202 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/search`,
      operationId: 'searchKnowledgeSource',
      tags: ['Knowledge sources'],
      summary: 'Search the source (BM25F with pseudo-relevance feedback; hybrid with vectors and a reranker where the source has them)',
      security,
      request: { params, headers: endUserTokenHeaders, body: { content: { 'application/json': { schema: searchInput } }, required: true } },
      responses: {
        200: jsonContent(envelope(searchResponse), 'Best chunks first'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'The source is not ready (details.status)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { scope, keyId } = c.get('identity');
      const { context, ...request } = c.req.valid('json');
      const user = await requestEndUser(c, rt, context);
      const { results, took, mode } = await searchKnowledgeSource(rt, scope, c.req.valid('param').knowledgeSourceId, request, { keyId, user });
      return ok(c, { results, took, mode });
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: `${base}/{knowledgeSourceId}/compact`,
      operationId: 'compactKnowledgeSource',
      tags: ['Knowledge sources'],
      summary: 'Compact the source’s index now',
      description:
        'Merges the index’s segments without the chunks deleted since they were written, and swaps the result in at once ' +
        '(searches before, during and after see the same documents). Runs in the background; a sync queued meanwhile waits for it. ' +
        'Compaction also runs by itself after a sync that leaves many segments or many deleted chunks.',
      security,
      request: { params },
      responses: {
        202: jsonContent(envelope(compactionAccepted), 'Compaction queued'),
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'The source is not ready (details.status) or already compacting (details.compactionId)'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { compactionId, source } = await requestCompaction(rt, c.get('identity').scope, c.req.valid('param').knowledgeSourceId);
      return ok(c, { id: source.id, compactionId, status: source.status }, 202);
    },
  );
}

