import { createHash } from 'node:crypto';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Runtime } from '../runtime';
import type { Idempotency, Page } from '../store/records';
import type { TenantScope } from '../tenancy';
import type { AppEnv } from './context';
import { ok, okList } from './envelope';
import type { Precondition } from '../collection';
import { etagHeader, ifMatchHeaders, ifMatchOf, preconditionFailed, setEtag } from './preconditions';
import { commonErrors, deletedSchema, envelope, errorResponse, jsonContent, listEnvelope, locationHeader, replayedHeader } from './openapi-schemas';
import { paginationQuery } from './pagination';

/** What a resource supplies; the five routes and their OpenAPI entries are the same for all. */
export interface CrudSpec<Input, Out> {
  /** e.g. `/v1/agents` */
  basePath: string;
  /** Path parameter name, e.g. `agentId`. */
  idParam: string;
  tag: string;
  noun: string;
  /** The resource in operation ids: `Agent` gives createAgent, listAgents, getAgent, replaceAgent, deleteAgent. */
  operationNoun: string;
  input: z.ZodType<Input>;
  output: z.ZodType<Out>;
  /** Extra query parameters of `GET …/{id}` (e.g. `include`). */
  getQuery?: z.ZodObject;
  create(rt: Runtime, scope: TenantScope, input: Input, idempotency?: Idempotency): Promise<{ record: Out; replayed: boolean }>;
  get(rt: Runtime, scope: TenantScope, id: string, query: Record<string, unknown>): Promise<Out>;
  list(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<Out>>;
  replace(rt: Runtime, scope: TenantScope, id: string, input: Input, precondition?: Precondition): Promise<Out>;
  remove(rt: Runtime, scope: TenantScope, id: string, precondition?: Precondition): Promise<unknown>;
}

export const idempotencyHeader = z.object({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .openapi({ description: 'Retries with the same key and body return the first result instead of creating again' }),
});

const article = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;

export function idempotencyOf(c: Context<AppEnv>, input: unknown): Idempotency | undefined {
  const key = c.req.header('idempotency-key');
  if (!key) return undefined;
  const requestHash = createHash('sha256').update(JSON.stringify(input)).digest('hex');
  return { key, requestHash };
}

/** A paginated list route (`?limit=&cursor=` → `okList`), for the public and the platform API alike. */
export function registerListRoute<Row, Out = Row>(
  app: OpenAPIHono<AppEnv>,
  rt: Runtime,
  spec: {
    path: string;
    operationId: string;
    tag: string;
    summary: string;
    security: Array<Record<string, string[]>>;
    errors: Record<number, ReturnType<typeof jsonContent>>;
    item: z.ZodType;
    scope(c: Context<AppEnv>): TenantScope;
    list(rt: Runtime, scope: TenantScope, page: { limit: number; cursor?: string }): Promise<Page<Row>>;
    /** Shapes each stored row for the response. */
    map?: (row: Row) => Out;
  },
) {
  app.openapi(
    createRoute({
      method: 'get',
      path: spec.path,
      operationId: spec.operationId,
      tags: [spec.tag],
      summary: spec.summary,
      security: spec.security,
      request: { query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(spec.item), spec.summary), ...spec.errors },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const result = await spec.list(rt, spec.scope(c), page);
      const { map } = spec;
      const items: unknown[] = map ? result.items.map((row) => map(row)) : result.items;
      return okList(c, items, { limit: page.limit, nextCursor: result.nextCursor });
    },
  );
}

export function registerCrud<Input, Out extends { id: string; version: number }>(app: OpenAPIHono<AppEnv>, rt: Runtime, spec: CrudSpec<Input, Out>) {
  const itemPath = `${spec.basePath}/{${spec.idParam}}`;
  const params = z.object({ [spec.idParam]: z.string().min(1).max(200) });
  const body = { content: { 'application/json': { schema: spec.input } }, required: true };
  const scope = (c: Context<AppEnv>) => c.get('identity').scope;
  const idOf = (c: Context<AppEnv>) => c.req.param(spec.idParam)!;
  const security = [{ ApiKeyAuth: [] }];

  app.openapi(
    createRoute({
      method: 'post',
      path: spec.basePath,
      operationId: `create${spec.operationNoun}`,
      tags: [spec.tag],
      summary: `Create ${article(spec.noun)}`,
      security,
      request: { body, headers: idempotencyHeader },
      responses: {
        201: { ...jsonContent(envelope(spec.output), `The created ${spec.noun}`), headers: { Location: locationHeader, 'Idempotent-Replayed': replayedHeader, ...etagHeader } },
        409: jsonContent(errorResponse, 'The Idempotency-Key was already used with a different body'),
        ...commonErrors,
      },
    }),
    async (c) => {
      const input: Input = c.req.valid('json');
      const { record, replayed } = await spec.create(rt, scope(c), input, idempotencyOf(c, input));
      c.header('Location', `${spec.basePath}/${record.id}`);
      if (replayed) c.header('Idempotent-Replayed', 'true');
      setEtag(c, record);
      return ok(c, record, 201);
    },
  );

  registerListRoute(app, rt, {
    path: spec.basePath,
    operationId: `list${spec.operationNoun}s`,
    tag: spec.tag,
    summary: `List ${spec.noun}s, newest first`,
    security,
    errors: commonErrors,
    item: spec.output,
    scope,
    list: (rt, scope, page) => spec.list(rt, scope, page),
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: itemPath,
      operationId: `get${spec.operationNoun}`,
      tags: [spec.tag],
      summary: `Get ${article(spec.noun)}`,
      security,
      request: { params, query: spec.getQuery ?? z.object({}) },
      responses: { 200: { ...jsonContent(envelope(spec.output), `The ${spec.noun}`), headers: etagHeader }, ...commonErrors },
    }),
    async (c) => {
      const record = await spec.get(rt, scope(c), idOf(c), c.req.valid('query'));
      setEtag(c, record);
      return ok(c, record);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: itemPath,
      operationId: `replace${spec.operationNoun}`,
      tags: [spec.tag],
      summary: `Replace ${article(spec.noun)}`,
      description: 'Validated as on create. id, createdAt, updatedAt, status and version are ignored. With If-Match (the ETag of a GET), replaced only while still at that version (else 412).',
      security,
      request: { params, body, headers: ifMatchHeaders },
      responses: {
        200: { ...jsonContent(envelope(spec.output), `The replaced ${spec.noun}`), headers: etagHeader },
        409: jsonContent(commonErrors[400].content['application/json'].schema, 'Modified concurrently; retry'),
        ...preconditionFailed,
        ...commonErrors,
      },
    }),
    async (c) => {
      const record = await spec.replace(rt, scope(c), idOf(c), c.req.valid('json'), ifMatchOf(c));
      setEtag(c, record);
      return ok(c, record);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: itemPath,
      operationId: `delete${spec.operationNoun}`,
      tags: [spec.tag],
      summary: `Delete ${article(spec.noun)}`,
      description: 'With If-Match (the ETag of a GET), deleted only while still at that version (else 412).',
      security,
      request: { params, headers: ifMatchHeaders },
      responses: { 200: jsonContent(envelope(deletedSchema), 'Deleted'), ...preconditionFailed, ...commonErrors },
    }),
    async (c) => {
      await spec.remove(rt, scope(c), idOf(c), ifMatchOf(c));
      return ok(c, { id: idOf(c), deleted: true as const });
    },
  );
}
