import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { aliasInput, aliasName, diffShown, DRAFT, versionNumber } from '../releases';
import type { Runtime } from '../runtime';
import type { TenantScope } from '../tenancy';
import type { AppEnv } from './context';
import { ok, okList } from './envelope';
import { envelope, errorResponse, jsonContent, listEnvelope, locationHeader, replayedHeader } from './openapi-schemas';
import { paginationQuery } from './pagination';
import { idempotencyHeader, idempotencyOf } from './crud-routes';
import type { Idempotency } from '../store/records';

type Page = { limit: number; cursor?: string };
type VersionRef = number | typeof DRAFT;

/** One kind of versioned resource (agents, workflows) behind one door (the public API, the platform API). */
export interface ReleaseRoutesSpec {
  /** `/v1/agents`, `/platform/agent`, `/v1/workflows`. */
  basePath: string;
  idParam: string;
  noun: string;
  /** In operation ids: `Agent` gives publishAgentVersion, listAgentAliases… */
  operationNoun: string;
  tag: string;
  security: Array<Record<string, string[]>>;
  errors: Record<number, unknown>;
  scope: (c: Context<AppEnv>) => TenantScope;
  versionShown: z.ZodType;
  /** The resource as responses show it. */
  shown: z.ZodType;
  aliasShown: z.ZodType;
  publish(rt: Runtime, scope: TenantScope, id: string, description: string): Promise<{ version: number }>;
  listVersions(rt: Runtime, scope: TenantScope, id: string, page: Page): Promise<{ items: unknown[]; nextCursor: string | null }>;
  getVersion(rt: Runtime, scope: TenantScope, id: string, version: number): Promise<unknown>;
  deleteVersion(rt: Runtime, scope: TenantScope, id: string, version: number): Promise<unknown>;
  diff(rt: Runtime, scope: TenantScope, id: string, from: VersionRef, to: VersionRef): Promise<unknown>;
  putAlias(rt: Runtime, scope: TenantScope, id: string, name: string, input: z.infer<typeof aliasInput>): Promise<unknown>;
  listAliases(rt: Runtime, scope: TenantScope, id: string): Promise<unknown[]>;
  getAlias(rt: Runtime, scope: TenantScope, id: string, name: string): Promise<unknown>;
  deleteAlias(rt: Runtime, scope: TenantScope, id: string, name: string): Promise<unknown>;
  /** `cairn.agent/v1`… and the document's schema, as an import takes it. */
  format: string;
  documentSchema: z.ZodType;
  exportOf(rt: Runtime, scope: TenantScope, id: string): Promise<unknown>;
  importOf(rt: Runtime, scope: TenantScope, document: never, idempotency?: Idempotency): Promise<{ record: Record<string, unknown>; replayed: boolean }>;
}

const publishInput = z
  .strictObject({ description: z.string().max(2000).default('').openapi({ example: 'Shorter answers; order lookup tool' }) })
  .openapi('PublishVersionRequest', { example: { description: 'Shorter answers; order lookup tool' } });
const conflict = (description: string) => ({ 409: jsonContent(errorResponse, description) });

/**
 * `<base>/{id}/versions` and `/aliases`: publish the draft as a numbered version, list, read, diff
 * and delete versions, and route aliases to them by weight.
 */
export function registerReleaseRoutes(app: OpenAPIHono<AppEnv>, rt: Runtime, spec: ReleaseRoutesSpec) {
  const { scope, security, noun, operationNoun: n } = spec;
  const tags = [spec.tag];
  const item = `${spec.basePath}/{${spec.idParam}}`;
  const idParams = z.object({ [spec.idParam]: z.string().min(1).max(200) });
  const versionParams = idParams.extend({ version: versionNumber });
  const aliasParams = idParams.extend({ alias: aliasName });
  const idOf = (c: Context<AppEnv>) => c.req.param(spec.idParam)!;
  const versionOf = (c: Context<AppEnv>) => Number(c.req.param('version'));
  const aliasOf = (c: Context<AppEnv>) => c.req.param('alias')!;
  const errors = spec.errors as Record<number, { content: Record<string, unknown>; description: string }>;

  app.openapi(
    createRoute({
      method: 'post',
      path: `${item}/versions`,
      operationId: `publish${n}Version`,
      tags,
      summary: 'Publish the draft as the next version',
      description: `Snapshots the ${noun} as it is now (everything that shapes what it does, sealed credentials included) as an immutable, numbered version. 400 when the draft does not validate; 409 past 500 versions.`,
      security,
      request: { params: idParams, body: { content: { 'application/json': { schema: publishInput } }, required: false } },
      responses: { 201: jsonContent(envelope(spec.versionShown), 'The version'), ...conflict(`The ${noun} has 500 versions: delete old ones first`), ...errors },
    }),
    async (c) => {
      const published = await spec.publish(rt, scope(c), idOf(c), c.req.valid('json').description);
      c.header('Location', `${spec.basePath}/${idOf(c)}/versions/${published.version}`);
      return ok(c, published, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/versions`,
      operationId: `list${n}Versions`,
      tags,
      summary: `A${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun}’s versions, newest first`,
      security,
      request: { params: idParams, query: paginationQuery },
      responses: { 200: jsonContent(listEnvelope(spec.versionShown), 'A page of versions'), ...errors },
    }),
    async (c) => {
      const page = c.req.valid('query');
      const listed = await spec.listVersions(rt, scope(c), idOf(c), page);
      return okList(c, listed.items, { limit: page.limit, nextCursor: listed.nextCursor });
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/versions/{version}`,
      operationId: `get${n}Version`,
      tags,
      summary: `One version of a${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun}`,
      security,
      request: { params: versionParams },
      responses: { 200: jsonContent(envelope(spec.versionShown), 'The version'), ...errors },
    }),
    async (c) => ok(c, await spec.getVersion(rt, scope(c), idOf(c), versionOf(c))),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: `${item}/versions/{version}`,
      operationId: `delete${n}Version`,
      tags,
      summary: 'Delete a version no alias routes to',
      security,
      request: { params: versionParams },
      responses: {
        200: jsonContent(envelope(z.object({ [spec.idParam]: z.string(), version: z.int(), deleted: z.literal(true) })), 'Deleted'),
        ...conflict('An alias routes to the version (details.aliases)'),
        ...errors,
      },
    }),
    async (c) => ok(c, await spec.deleteVersion(rt, scope(c), idOf(c), versionOf(c))),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/versions/{version}/diff`,
      operationId: `diff${n}Versions`,
      tags,
      summary: 'What changed from a version to another (or to the draft)',
      description: 'An RFC 6902 JSON Patch from `version` to `against` (default: the draft). Sealed secrets are never shown: a changed one appears as "[secret changed]".',
      security,
      request: {
        params: versionParams,
        query: z.object({ against: z.union([z.literal(DRAFT), versionNumber]).default(DRAFT).openapi({ description: 'A version number, or draft', example: DRAFT }) }),
      },
      responses: { 200: jsonContent(envelope(diffShown), 'The patch'), ...errors },
    }),
    async (c) => ok(c, await spec.diff(rt, scope(c), idOf(c), versionOf(c), c.req.valid('query').against)),
  );

  const exported = z
    .object({
      format: z.literal(spec.format),
      exportedAt: z.string(),
      [noun]: z.record(z.string(), z.unknown()).openapi({ description: `The draft, as a create takes it; each secret a placeholder \`\${secret:<name>}\`` }),
      versions: z.array(z.object({ version: z.int(), description: z.string(), createdAt: z.string(), [noun]: z.record(z.string(), z.unknown()) })),
      aliases: z.array(z.object({ name: z.string(), routing: z.array(z.object({ version: z.int(), weight: z.int() })) })),
      placeholders: z.array(z.object({ name: z.string(), usedIn: z.array(z.union([z.int(), z.literal(DRAFT)])) })).openapi({ description: 'Each secret left out, and where it is used' }),
    })
    .openapi(`${n}Document`);

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/export`,
      operationId: `export${n}`,
      tags,
      summary: `Export a${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun} with its versions and aliases`,
      description: `A portable document (\`${spec.format}\`) to keep in git and import elsewhere: the draft, every version and every alias. No secret is in it: each sealed one is a placeholder \`\${secret:<name>}\` in the field a request gives it in, listed in \`placeholders\`.`,
      security,
      request: { params: idParams },
      responses: { 200: jsonContent(envelope(exported), 'The document'), ...errors },
    }),
    async (c) => ok(c, await spec.exportOf(rt, scope(c), idOf(c))),
  );

  const imported = z
    .object({
      [noun]: spec.shown,
      versions: z.array(z.int()),
      aliases: z.array(z.string()),
      unfilledSecrets: z
        .array(z.object({ name: z.string(), in: z.array(z.string()), effect: z.string() }))
        .openapi({ description: 'Placeholders the request gave no value for, where they stand, and what that means (a tool imported unusable; a webhook left out)' }),
    })
    .openapi(`${n}Import`);

  app.openapi(
    createRoute({
      method: 'post',
      path: `${spec.basePath}/import`,
      operationId: `import${n}`,
      tags,
      summary: `Create a${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun} from an exported document`,
      description: `A new ${noun} with the document's draft, its versions under the same numbers, and its aliases. Every definition is validated first (a 400 names its field in the document) and nothing is written unless all pass. \`secrets\` fills placeholders by name; \`ids\` replaces ids of the exporting deployment (knowledge sources, workflows, agents) with this one's.`,
      security,
      request: { body: { content: { 'application/json': { schema: spec.documentSchema } }, required: true }, headers: idempotencyHeader },
      responses: {
        201: { ...jsonContent(envelope(imported), `The imported ${noun}`), headers: { Location: locationHeader, 'Idempotent-Replayed': replayedHeader } },
        409: jsonContent(errorResponse, 'The Idempotency-Key was already used with a different body'),
        ...errors,
      },
    }),
    async (c) => {
      const body = c.req.valid('json') as never;
      const { record, replayed } = await spec.importOf(rt, scope(c), body, idempotencyOf(c, body));
      c.header('Location', `${spec.basePath}/${(record[noun] as { id: string }).id}`);
      if (replayed) c.header('Idempotent-Replayed', 'true');
      return ok(c, record, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'put',
      path: `${item}/aliases/{alias}`,
      operationId: `put${n}Alias`,
      tags,
      summary: 'Create or move an alias',
      description:
        'Routes the alias to up to 4 versions by integer weight (summing to 100; one entry may omit its weight). New sessions are placed by weight; a session keeps its version while the alias still routes to it.',
      security,
      request: { params: aliasParams, body: { content: { 'application/json': { schema: aliasInput } }, required: true } },
      responses: { 200: jsonContent(envelope(spec.aliasShown), 'The alias'), ...errors },
    }),
    async (c) => ok(c, await spec.putAlias(rt, scope(c), idOf(c), aliasOf(c), c.req.valid('json'))),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/aliases`,
      operationId: `list${n}Aliases`,
      tags,
      summary: `A${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun}’s aliases`,
      security,
      request: { params: idParams },
      responses: { 200: jsonContent(envelope(z.array(spec.aliasShown)), 'The aliases'), ...errors },
    }),
    async (c) => ok(c, await spec.listAliases(rt, scope(c), idOf(c))),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: `${item}/aliases/{alias}`,
      operationId: `get${n}Alias`,
      tags,
      summary: `One alias of a${/^[aeiou]/.test(noun) ? 'n' : ''} ${noun}`,
      security,
      request: { params: aliasParams },
      responses: { 200: jsonContent(envelope(spec.aliasShown), 'The alias'), ...errors },
    }),
    async (c) => ok(c, await spec.getAlias(rt, scope(c), idOf(c), aliasOf(c))),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: `${item}/aliases/{alias}`,
      operationId: `delete${n}Alias`,
      tags,
      summary: 'Delete an alias',
      security,
      request: { params: aliasParams },
      responses: { 200: jsonContent(envelope(z.object({ [spec.idParam]: z.string(), name: z.string(), deleted: z.literal(true) })), 'Deleted'), ...errors },
    }),
    async (c) => ok(c, await spec.deleteAlias(rt, scope(c), idOf(c), aliasOf(c))),
  );
}
