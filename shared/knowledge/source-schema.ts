import { z } from '@hono/zod-openapi';
import { httpUrl, integerBetween, readOnlyFields, recordFields, uniqueItems } from '../schema-helpers';
import { bucketRefusal, SOURCE_STATUSES, SOURCE_TYPES, type SOURCE_READ_ONLY_EXTRA } from './source-limits';
import { END_USER_ID, GROUP_NAME, groupsInput } from '../identity';


const IDENT = '[A-Za-z_][A-Za-z0-9_$]{0,62}';
const identifier = z
  .string()
  .regex(new RegExp(`^${IDENT}$`), { error: 'must be a column name (letters, digits, _ or $; not starting with a digit; ≤ 63)' });

const CREDENTIAL_KEYS = ['username', 'user', 'password'];
const credentialsHint =
  'is a credential: credentials are never part of config; send them to POST /v1/knowledge-sources/{id}/connect';

/** A credential in config gets a reason that says where it belongs, not just "unknown field". */
function flagCredentials(value: unknown, ctx: z.RefinementCtx): unknown {
  if (typeof value === 'object' && value !== null) {
    for (const key of CREDENTIAL_KEYS) {
      if (key in value) ctx.addIssue({ code: 'custom', path: [key], message: credentialsHint });
    }
  }
  return value;
}

const postgresConfigObject = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[A-Za-z0-9._:\-[\]]+$/, { error: 'must be a host name or IP address' })
      .openapi({ example: 'db.example.com' }),
    port: z
      .int({ error: 'must be an integer between 1 and 65535' })
      .min(1, { error: 'must be an integer between 1 and 65535' })
      .max(65535, { error: 'must be an integer between 1 and 65535' })
      .default(5432),
    database: z.string().min(1).max(63).openapi({ example: 'shop' }),
    table: z
      .string()
      .regex(new RegExp(`^${IDENT}(\\.${IDENT})?$`), {
        error: 'must be a table name, optionally schema-qualified (schema.table)',
      })
      .openapi({ example: 'public.articles' }),
    idColumn: identifier.optional().openapi({ description: 'Default: the primary key' }),
    textColumns: z.array(identifier).min(1).max(100).optional().openapi({ description: 'Default: every text-like column' }),
    metadataColumns: z.array(identifier).max(100).optional(),
    titleColumn: identifier.optional().openapi({ description: 'The column a row is cited by (default: one named title, name, subject, headline or heading, else the start of the first text column)' }),
    updatedAtColumn: identifier.optional().openapi({ description: 'Enables incremental re-sync' }),
    accessColumn: identifier.optional().openapi({ description: 'Who may read each row: a text array, a JSON array, or a comma-separated text of `user:<id>` and `group:<name>` entries (NULL: the source’s access decides). A changed list is indexed again at the next sync' }),
    ssl: z.boolean().default(false),
  })
  .openapi('PostgresConfig');

export const postgresConfig = z.preprocess(flagCredentials, postgresConfigObject);

export const s3Config = z
  .strictObject({
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, { error: 'must be an S3 bucket name' })
      .superRefine((bucket, ctx) => {
        const refusal = bucketRefusal(bucket);
        if (refusal) ctx.addIssue({ code: 'custom', message: refusal });
      })
      .openapi({ example: 'acme-handbooks', description: 'A bucket of the deployer’s account that the deployment lists in the CDK context s3SourceBuckets' }),
    prefix: z.string().max(1024).default('').openapi({ example: 'policies/', description: 'Only objects whose keys start with it' }),
  })
  .openapi('S3Config');

const pageUrl = httpUrl();
const urlPattern = z
  .string()
  .min(1)
  .max(500)
  .openapi({ description: 'A glob over the URL’s path and query: * matches any characters (e.g. /docs/*)' });

export const webConfig = z
  .strictObject({
    startUrls: z.array(pageUrl).max(20).default([]).openapi({ example: ['https://help.example.com/'] }),
    sitemap: pageUrl.optional().openapi({ description: 'A sitemap.xml (or sitemap index) whose URLs are crawled too' }),
    sameSite: z.boolean().default(true).openapi({ description: 'Follow links to the start URLs’ hosts only' }),
    include: z.array(urlPattern).max(50).default([]).openapi({ description: 'Only URLs matching one of these (default: all)' }),
    exclude: z.array(urlPattern).max(50).default([]),
    maxDepth: integerBetween(0, 10).default(3).openapi({ description: 'Links followed from a start URL' }),
    maxPages: integerBetween(1, 5000).default(200),
    concurrency: integerBetween(1, 8).default(4).openapi({ description: 'Requests at once (per crawl)' }),
  })
  .refine((c) => c.startUrls.length > 0 || c.sitemap !== undefined, { error: 'give startUrls or a sitemap', path: ['startUrls'] })
  .openapi('WebConfig');

/** Relative, normalised paths: no leading slash, no `.`/`..` segments, no empty segments. */
const SEGMENT_RULES = 'must be a relative path without empty, "." or ".." segments';
export const filePath = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (p) =>
      !p.startsWith('/') &&
      !p.includes('\\') &&
      !/[\u0000-\u001f]/.test(p) &&
      p.split('/').every((s) => s !== '' && s !== '.' && s !== '..'),
    { error: SEGMENT_RULES },
  )
  // A path is part of its item's key, which holds 1,024 bytes: characters outside ASCII take more than one.
  .refine((p) => Buffer.byteLength(p) <= 1024, { error: 'must be at most 1,024 bytes of UTF-8' })
  .openapi({ example: 'policies/returns.md', description: 'At most 1,024 bytes of UTF-8' });

const userId = z.string().regex(END_USER_ID, { error: 'must be 1–200 characters, no slash or space' });
// As tokens and callers name groups (paths like /org/finance included).
const groupName = z.string().regex(GROUP_NAME, { error: 'must be 1–200 characters, no space' });
export const documentAccessInput = z
  .strictObject({
    users: z.array(userId).max(1000).default([]).openapi({ description: 'End user ids (a verified token’s user claim, or context.userId)' }),
    groups: z.array(groupName).max(1000).default([]).openapi({ description: 'Group names (a verified token’s groups claim, or context.groups)' }),
  })
  .openapi('DocumentAccess', { example: { users: ['u-42'], groups: ['finance'] } });

export const sourceAccessMode = z
  .enum(['open', 'restricted'])
  .openapi({ description: 'open (default): documents without an access list are readable by everyone; restricted: by nobody' });

export const fileInput = z
  .strictObject({
    path: filePath,
    content: z.string().optional().openapi({ example: '# Returns\nItems can be returned within 30 days.', description: 'Text (UTF-8). Exactly one of content and contentBase64.' }),
    contentBase64: z
      .string()
      .regex(/^[A-Za-z0-9+/]*={0,2}$/, { error: 'must be base64 (RFC 4648, with + and /)' })
      .optional()
      .openapi({ description: 'Any file as base64: PDF, DOCX, PPTX, XLSX, or text. Exactly one of content and contentBase64.' }),
    contentType: z.string().max(200).optional().openapi({ description: 'Default: from the extension' }),
    access: documentAccessInput.optional().openapi({ description: 'Who may read the file (none: the source’s access decides)' }),
  })
  .superRefine((f, ctx) => {
    if ((f.content === undefined) === (f.contentBase64 === undefined)) ctx.addIssue({ code: 'custom', path: ['content'], message: 'exactly one of content and contentBase64 is required' });
  })
  .openapi('FileInput');

export const fileList = z
  .array(fileInput)
  .max(10_000)
  .superRefine(uniqueItems((f: { path: string }) => f.path, 'path', 'path'));

/** Server-computed fields of a source: sent back by a client, they are ignored like the others. */
const sourceReadOnly = {
  ...readOnlyFields,
  stats: z.unknown().optional().openapi({ description: 'read-only; ignored' }),
  error: z.unknown().optional().openapi({ description: 'read-only; ignored' }),
  fileCount: z.unknown().optional().openapi({ description: 'read-only; ignored' }),
  totalBytes: z.unknown().optional().openapi({ description: 'read-only; ignored' }),
  crawl: z.unknown().optional().openapi({ description: 'read-only; ignored' }),
} satisfies Record<(typeof SOURCE_READ_ONLY_EXTRA)[number], z.ZodType> & typeof readOnlyFields;

export const chunkingSchema = z
  .strictObject({
    size: integerBetween(200, 8000).default(1500).openapi({ description: 'Target chunk size in characters' }),
    overlap: integerBetween(0, 2000).default(200).openapi({ description: 'Characters repeated between consecutive chunks' }),
  })
  .refine((c) => c.overlap <= c.size / 2, { error: 'overlap must be at most half the size', path: ['overlap'] })
  .openapi('Chunking');

const modelName = (providers: readonly string[], example: string) =>
  z
    .string()
    .max(200)
    .regex(new RegExp(`^(${providers.join('|')})/[A-Za-z0-9._:/-]+$`), { error: `must be provider/model with a provider of ${providers.join(', ')}` })
    .openapi({ example });

export const embeddingSettings = z
  .strictObject({
    model: modelName(['bedrock', 'openai', 'openai-compatible'], 'bedrock/amazon.titan-embed-text-v2:0'),
    dimensions: integerBetween(64, 4096).optional().openapi({ description: 'For models that take it (Titan v2: 256, 512 or 1024; OpenAI text-embedding-3: any up to its size)' }),
  })
  .openapi('EmbeddingSettings');

export const rerankSettings = z
  .strictObject({
    model: modelName(['bedrock', 'cohere'], 'bedrock/cohere.rerank-v3-5:0'),
    candidates: integerBetween(2, 100).default(20).openapi({ description: 'The best fused results the reranker orders' }),
  })
  .openapi('RerankSettings');

const common = {
  name: z.string().trim().min(1).max(200).openapi({ example: 'Help centre' }),
  description: z.string().max(4000).default(''),
  chunking: chunkingSchema.optional().openapi({ description: 'Default: 1,500 characters with 200 of overlap' }),
  embedding: embeddingSettings.optional().openapi({
    description: 'Hybrid search: every chunk is embedded at ingestion (changing the model re-embeds at the next sync); searches fuse vector and BM25F ranks',
  }),
  rerank: rerankSettings.optional().openapi({ description: 'Hybrid searches reorder their best results with this reranker' }),
  access: sourceAccessMode.default('open'),
};

export const knowledgeSourceInput = z
  .discriminatedUnion('type', [
    z.strictObject({ ...common, type: z.literal('postgresql'), config: postgresConfig, ...sourceReadOnly }),
    z.strictObject({ ...common, type: z.literal('file-collection'), files: fileList.default([]), ...sourceReadOnly }),
    z.strictObject({ ...common, type: z.literal('s3'), config: s3Config, ...sourceReadOnly }),
    z.strictObject({ ...common, type: z.literal('web'), config: webConfig, ...sourceReadOnly }),
  ])
  .openapi('KnowledgeSourceInput', { example: { name: 'Help centre', type: 'file-collection', files: [{ path: 'policies/returns.md', content: '# Returns\nItems can be returned within 30 days of delivery.' }] } });

export const uploadInput = z
  .strictObject({
    path: filePath,
    size: z.int({ error: 'must be the file’s size in bytes' }).min(1, { error: 'must be at least 1 byte' }).openapi({ description: 'Bytes; at most 104,857,600 (100 MB)' }),
    contentType: z.string().max(200).optional().openapi({ description: 'Default: from the extension. The PUT must send the same Content-Type.' }),
    access: documentAccessInput.optional().openapi({ description: 'Who may read the file (none: the source’s access decides)' }),
  })
  .openapi('UploadRequest', { example: { path: 'manuals/router.pdf', size: 1048576, contentType: 'application/pdf' } });

export const uploadTicket = z
  .object({
    uploadId: z.string().openapi({ example: 'upl_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    path: z.string(),
    size: z.int(),
    contentType: z.string(),
    method: z.literal('PUT'),
    url: z.string().openapi({ description: 'Presigned: PUT the bytes here, with the headers below, before expiresAt' }),
    headers: z.record(z.string(), z.string()),
    expiresAt: z.string(),
  })
  .openapi('Upload');

export const filesUpload = z.strictObject({ files: fileList.min(1) }).partial().openapi('FilesUpload', { example: { files: [{ path: 'policies/shipping.md', content: '# Shipping\nOrders ship within two working days.' }] } });

export const fileSummary = z
  .object({
    path: z.string(),
    documentId: z.string().optional().openapi({ description: 'The document it is indexed as (search results name it; PUT …/documents/{documentId}/access)' }),
    access: documentAccessInput.optional().openapi({ description: 'Who may read it (absent: the source’s access decides)' }),
    size: z.int().openapi({ description: 'Bytes' }),
    contentType: z.string(),
    sha256: z.string().optional().openapi({ description: 'Of the content (absent for objects of an s3 source, which have etag)' }),
    etag: z.string().optional().openapi({ description: 's3 and web sources: the origin’s entity tag' }),
    updatedAt: z.string(),
    error: z
      .object({ code: z.string(), message: z.string() })
      .optional()
      .openapi({ description: 'Why the last sync could not index this version (e.g. UNREADABLE_DOCUMENT, ENCRYPTED_DOCUMENT, NO_TEXT); the rest of the source is indexed' }),
    content: z.string().optional().openapi({ description: 'Only with ?include=content, for text files' }),
  })
  .openapi('File');

export const knowledgeSource = z
  .object({
    ...recordFields,
    ...common,
    id: z.string().openapi({ example: 'ks_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    type: z.enum(SOURCE_TYPES),
    status: z.enum(SOURCE_STATUSES),
    config: z.union([postgresConfigObject, s3Config, webConfig]).optional(),
    files: z.array(fileSummary).optional().openapi({ description: 'file-collection, s3 and web: on GET of one source (web: path is the page’s URL)' }),
    fileCount: z.int().optional(),
    totalBytes: z.int().optional(),
    stats: z
      .object({ documents: z.int(), chunks: z.int(), lastSyncedAt: z.string(), durationMs: z.int() })
      .optional()
      .openapi({ description: 'After the first successful sync' }),
    error: z.object({ code: z.string(), message: z.string() }).optional().openapi({ description: 'When status is failed' }),
    crawl: z
      .object({
        at: z.string(),
        pages: z.int(),
        changed: z.int(),
        unchanged: z.int(),
        removed: z.int(),
        failed: z.int(),
        failures: z.array(z.object({ url: z.string(), reason: z.string() })).openapi({ description: 'The first 20' }),
      })
      .optional()
      .openapi({ description: 'web: what the last crawl reached' }),
    compaction: z
      .object({ id: z.string(), startedAt: z.string(), until: z.string() })
      .optional()
      .openapi({ description: 'While a compaction merges the index (until: when its hold lapses if its worker died)' }),
  })
  .openapi('KnowledgeSource');

export const compactionAccepted = z
  .object({
    id: z.string().openapi({ description: 'The knowledge source' }),
    compactionId: z.string().openapi({ example: 'cmp_01jd8x2k3m4n5p6q7r8s9t0v1w' }),
    status: z.enum(SOURCE_STATUSES),
  })
  .openapi('CompactionAccepted');

export const connectInput = z
  .strictObject({
    credentials: z
      .strictObject({ username: z.string().min(1).max(63), password: z.string().max(1024) })
      .optional()
      .openapi({ description: 'postgresql: required on the first connect; stored encrypted, never returned' }),
    options: z
      .strictObject({ sync: z.boolean().default(true), index: z.boolean().default(true) })
      .default({ sync: true, index: true })
      .openapi({ description: 'Ingestion runs when both are true; otherwise the source is only connected' }),
    agentId: z.string().min(1).max(200).optional().openapi({ description: 'The agent then lists this source' }),
  })
  .openapi('ConnectRequest', { example: { options: { sync: true, index: true } } });

export const searchInput = z
  .strictObject({
    query: z.string().trim().min(1).max(4000).openapi({ example: 'How long do I have to return an item?' }),
    topK: z.int({ error: 'must be an integer between 1 and 100' }).min(1, { error: 'must be an integer between 1 and 100' }).max(100, { error: 'must be an integer between 1 and 100' }).default(5),
    searchMode: z.enum(['lexical', 'hybrid']).default('hybrid').openapi({
      description: 'hybrid: BM25F candidates rescored by vector similarity and fused (reciprocal rank fusion), then reranked, where the source has an embedding model (and a reranker); otherwise the same as lexical',
    }),
    vectorWeight: z.number().min(0).max(1).default(0.5).openapi({ description: 'hybrid: the vector ranks’ share of the fusion (the BM25F ranks have the rest)' }),
    feedback: z.boolean().default(true).openapi({
      description:
        'Pseudo-relevance feedback (RM3): the query is expanded with terms of its best passages, which finds more for natural-language questions. ' +
        'false: plain BM25F, for keyword and identifier lookups; it reads only the postings that can still change the top results, so it is cheaper on large sources.',
    }),
    filter: z
      .strictObject({
        pathPrefix: z.string().max(1024).optional().openapi({ description: 'Path (or row key) starts with' }),
        metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional().openapi({ description: 'Metadata equals' }),
      })
      .optional(),
    context: z
      .strictObject({
        userId: z.string().min(1).max(200).optional().openapi({ description: 'Whom the search is for, on the caller’s word (X-End-User-Token names a verified user instead)' }),
        groups: groupsInput.openapi({ description: 'Their groups, on the caller’s word (with userId)' }),
      })
      .optional()
      .openapi({ description: 'The end user searching: only documents they may read are ranked. Without one (and without a token) only documents open to everyone' }),
  })
  .openapi('SearchRequest', { example: { query: 'How long do I have to return an item?', topK: 5 } });

/** Where a passage sits in a paged document, cited with it. */
export const sourceLocation = z
  .object({
    page: z.int().optional().openapi({ description: 'PDF: the page the passage starts on (1-based)' }),
    pageEnd: z.int().optional().openapi({ description: 'PDF: the last page, for passages indexed before chunks kept to one page (a re-sync cites one page)' }),
    slide: z.int().optional().openapi({ description: 'PPTX: the slide (1-based)' }),
    sheet: z.string().optional().openapi({ description: 'XLSX: the sheet' }),
  })
  .openapi('SourceLocation');

export const searchResponse = z
  .object({
    results: z.array(
      z.object({
        chunkId: z.string(),
        documentId: z.string(),
        path: z.string().optional(),
        rowKey: z.string().optional(),
        score: z.number(),
        title: z.string(),
        text: z.string(),
        metadata: z.record(z.string(), z.unknown()),
        location: sourceLocation.optional(),
        scores: z
          .object({ lexical: z.number(), vector: z.number().optional(), fused: z.number(), rerank: z.number().optional() })
          .optional()
          .openapi({ description: 'hybrid: BM25F score, cosine similarity, fused score and reranker relevance; score is the last of them' }),
      }),
    ),
    mode: z.enum(['lexical', 'hybrid']).optional().openapi({ description: 'What the search did' }),
    took: z.int().openapi({ description: 'Milliseconds spent searching' }),
  })
  .openapi('SearchResponse');

export type KnowledgeSourceInput = z.infer<typeof knowledgeSourceInput>;
export type FileInput = z.infer<typeof fileInput>;
export type FilesUpload = z.infer<typeof filesUpload>;
export type UploadInput = z.infer<typeof uploadInput>;
export type PostgresConfig = z.infer<typeof postgresConfigObject>;
export type S3Config = z.infer<typeof s3Config>;
export type WebConfig = z.infer<typeof webConfig>;
