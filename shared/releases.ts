import { createHash } from 'node:crypto';
import { z } from '@hono/zod-openapi';
import jsonPatch from 'fast-json-patch';
import { NotFoundError } from './errors';
import type { BaseRecord } from './store/records';
import type { Runtime } from './runtime';
import type { AliasRecord, Route, VersionRecord } from './store/releases';
import type { RecordKind } from './store/records';
import type { TenantScope } from './tenancy';

/**
 * What agents and workflows share about releases: alias names and routing as requests give them,
 * the choice of a version for a session, cached reads of aliases and versions, and diffs that
 * never show a secret.
 */

/** Versions kept per resource: past it, publishing is a 409 until old ones are deleted. */
export const MAX_VERSIONS = 500;

/** `draft` names the working copy wherever a version or alias may be named. */
export const DRAFT = 'draft';

export const aliasName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, { error: 'must start with a lowercase letter and hold at most 32 lowercase letters, digits or -' })
  .refine((name) => name !== DRAFT, { error: 'is reserved: draft means the working copy' })
  .openapi({ example: 'live' });

/** What a run names: a version, an alias (`draft`: the working copy), or neither (the draft). */
export interface ReleaseTarget {
  version?: number;
  alias?: string;
}

/**
 * `<id>`, or `<id>:<alias>`, `<id>:<version>`, `<id>:draft` (how the OpenAI-compatible routes, MCP
 * and a workflow agent step name a release): the id and what to run of it; undefined when what
 * follows the colon is neither a version nor an alias name.
 */
export function parseAddress(address: string): { id: string; target: ReleaseTarget } | undefined {
  const at = address.indexOf(':');
  if (at < 0) return { id: address, target: {} };
  const id = address.slice(0, at);
  const name = address.slice(at + 1);
  if (/^[1-9][0-9]{0,8}$/.test(name)) return { id, target: { version: Number(name) } };
  if (name !== DRAFT && !aliasName.safeParse(name).success) return undefined;
  return { id, target: { alias: name } };
}

/** The body fields of a request that runs a release (`alias` or `version`; neither: the draft); `oneRelease` refines them. */
export const releaseFields = (aliasDescription: string) => ({
  alias: z.union([aliasName, z.literal(DRAFT)]).optional().openapi({ description: aliasDescription, example: 'live' }),
  version: z.int().min(1).optional().openapi({ description: 'Run this version. Without alias or version: the draft' }),
});

/** A request names one release at most. */
export function oneRelease(body: ReleaseTarget, ctx: z.RefinementCtx) {
  if (body.alias !== undefined && body.version !== undefined) ctx.addIssue({ code: 'custom', path: ['version'], message: 'must be absent when alias is given: name one or the other' });
}

/** A version number as a path or query gives it. */
export const versionNumber = z.coerce.number().int({ error: 'must be a version number' }).min(1, { error: 'must be a version number (1 or more)' }).openapi({ example: 1 });

/** `{routing: [{version, weight}]}`: integer weights summing to 100; one entry may leave its weight out (it takes the rest). */
export const aliasInput = z
  .strictObject({
    routing: z
      .array(z.strictObject({ version: z.int().min(1), weight: z.int().min(0).max(100).optional() }))
      .min(1)
      .max(4, { error: 'must have at most 4 entries' })
      .openapi({ description: 'Up to 4 versions with integer weights summing to 100 (one entry may omit its weight: it takes the rest)' }),
  })
  .superRefine((body, ctx) => {
    const omitted = body.routing.flatMap((r, i) => (r.weight === undefined ? [i] : []));
    if (omitted.length > 1) ctx.addIssue({ code: 'custom', path: ['routing', omitted[1]!, 'weight'], message: 'is required: only one entry may leave its weight out' });
    const given = body.routing.reduce((sum, r) => sum + (r.weight ?? 0), 0);
    if (omitted.length === 0 && given !== 100) ctx.addIssue({ code: 'custom', path: ['routing', body.routing.length - 1, 'weight'], message: `makes the weights sum to ${given}: they must sum to 100` });
    if (omitted.length === 1 && given > 100) ctx.addIssue({ code: 'custom', path: ['routing', omitted[0]!, 'weight'], message: `has nothing left: the other weights sum to ${given}` });
    body.routing.forEach((r, i) => {
      const first = body.routing.findIndex((o) => o.version === r.version);
      if (first !== i) ctx.addIssue({ code: 'custom', path: ['routing', i, 'version'], message: `repeats version ${r.version} (routing[${first}])` });
    });
  })
  .openapi('AliasInput', { example: { routing: [{ version: 2, weight: 90 }, { version: 3 }] } });

/** The routing with every weight filled in. */
export function routingOf(input: z.infer<typeof aliasInput>): Route[] {
  const given = input.routing.reduce((sum, r) => sum + (r.weight ?? 0), 0);
  return input.routing.map((r) => ({ version: r.version, weight: r.weight ?? 100 - given }));
}

export const aliasShown = z
  .object({ name: z.string(), routing: z.array(z.object({ version: z.int(), weight: z.int() })), createdAt: z.string(), updatedAt: z.string() })
  .openapi('Alias');

export const presentAlias = (alias: AliasRecord) => ({ name: alias.name, routing: alias.routing, createdAt: alias.createdAt, updatedAt: alias.updatedAt });

/**
 * The version a session runs under an alias: the one it ran before while the alias still routes to
 * it; otherwise one chosen by weight from the session id (the same session id lands on the same
 * version, and new sessions split as the weights say).
 */
export function versionForSession(routing: Route[], sessionId: string, before?: number): number {
  if (before !== undefined && routing.some((r) => r.version === before && r.weight > 0)) return before;
  const bucket = createHash('sha256').update(sessionId).digest().readUInt32BE(0) % 100;
  let cumulative = 0;
  for (const route of routing) {
    cumulative += route.weight;
    if (bucket < cumulative) return route.version;
  }
  return routing[routing.length - 1]!.version;
}

/** Reads of one kind's releases with the runtime's short-lived caches (an alias 5 s, a version 60 s). */
export function cachedReleases<S>(rt: Runtime, kind: RecordKind, shape: z.ZodType<S>, label: string) {
  const store = rt.store.releases.of(kind, shape);
  const key = (scope: TenantScope, id: string, what: string) => `${scope.tenantId}#${scope.schema}#${kind}#${id}#${what}`;
  return {
    store,
    async version(scope: TenantScope, id: string, version: number): Promise<VersionRecord<S>> {
      const k = key(scope, id, `v${version}`);
      const cached = rt.caches.releaseVersions.get(k) as VersionRecord<S> | undefined;
      if (cached) return cached;
      const found = await store.getVersion(scope, id, version);
      if (!found) throw new NotFoundError(`${label} version`, `${id}:${version}`);
      rt.caches.releaseVersions.set(k, found);
      return found;
    },
    async alias(scope: TenantScope, id: string, name: string): Promise<AliasRecord> {
      const k = key(scope, id, `a${name}`);
      const cached = rt.caches.releaseAliases.get(k) as AliasRecord | undefined;
      if (cached) return cached;
      const found = await store.getAlias(scope, id, name);
      if (!found) throw new NotFoundError(`${label} alias`, `${id}:${name}`);
      rt.caches.releaseAliases.set(k, found);
      return found;
    },
    /** This instance changed what it may hold: forget it at once (others within the time to live). */
    forget(scope: TenantScope, id: string, what: { version?: number; alias?: string }) {
      if (what.version !== undefined) rt.caches.releaseVersions.forget(key(scope, id, `v${what.version}`));
      if (what.alias !== undefined) rt.caches.releaseAliases.forget(key(scope, id, `a${what.alias}`));
    },
  };
}

/** A sealed secret as the secret box stores it. */
/**
 * That an agent or workflow exists, and the version or alias named of it: a 404 naming what is
 * missing. For callers that only need to know a run can start (evaluation runs), without the
 * resource's own schemas.
 */
export async function assertReleaseExists(rt: Runtime, scope: TenantScope, kind: RecordKind, label: string, id: string, release: ReleaseTarget): Promise<void> {
  if (!(await rt.store.records.exists(scope, kind, id))) throw new NotFoundError(label, id);
  const releases = cachedReleases(rt, kind, z.unknown(), label);
  if (release.alias !== undefined) await releases.alias(scope, id, release.alias);
  else if (release.version !== undefined) await releases.version(scope, id, release.version);
}

export const isSealed = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && 'wrap' in v && 'iv' in v && 'tag' in v && 'data' in v;

/**
 * A resource's definition as a diff compares it: record bookkeeping left out, and every sealed
 * secret replaced by a marker — `[secret]` in the first, `[secret changed]` in the second where it
 * differs from the first's at the same place — so a diff says a secret changed, never what it is.
 */
function diffViews(from: unknown, to: unknown): [unknown, unknown] {
  const mask = (a: unknown, b: unknown, second: boolean): unknown => {
    if (isSealed(b)) return second && JSON.stringify(a) !== JSON.stringify(b) ? '[secret changed]' : '[secret]';
    if (Array.isArray(b)) return b.map((v, i) => mask(Array.isArray(a) ? a[i] : undefined, v, second));
    if (typeof b === 'object' && b !== null) {
      return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, mask(typeof a === 'object' && a !== null ? (a as Record<string, unknown>)[k] : undefined, v, second)]));
    }
    return b;
  };
  const strip = (v: unknown) => {
    const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...rest } = v as Record<string, unknown>;
    return rest;
  };
  return [mask(undefined, strip(from), false), mask(strip(from), strip(to), true)];
}

/** An RFC 6902 JSON Patch from one definition to another (secrets shown only as changed). */
export function diffOf(from: unknown, to: unknown) {
  const [a, b] = diffViews(from, to);
  return jsonPatch.compare(a as object, b as object);
}

export const diffShown = z
  .object({
    from: z.union([z.int(), z.literal(DRAFT)]),
    to: z.union([z.int(), z.literal(DRAFT)]),
    changes: z.array(z.object({ op: z.string(), path: z.string(), from: z.string().optional(), value: z.unknown().optional() })).openapi({ description: 'RFC 6902 JSON Patch from `from` to `to`' }),
  })
  .openapi('VersionDiff');

/** A versioned resource as a run reads it: its kind, its stored shape, and its draft. */
export interface RunnableResource<S extends BaseRecord> {
  kind: RecordKind;
  shape: z.ZodType<S>;
  /** `agent`, `workflow`: in messages, and as the field a version shows its snapshot in. */
  label: string;
  /** The draft (a 404 when there is none). */
  draft(rt: Runtime, scope: TenantScope, id: string): Promise<S>;
  /** The draft as a run takes it: possibly as this instance read it within a second (records' `getRecent`); `draft` when absent. */
  runDraft?(rt: Runtime, scope: TenantScope, id: string): Promise<S>;
}

/**
 * What a run names: a version, an alias (the version `before` while the alias still routes to it,
 * else one placed by weight from `key`) or neither (the draft), and which it is. Kept apart from
 * the rest of `releasesOf` so that what runs a resource does not carry what manages its releases.
 */
export function resolverOf<S extends BaseRecord>(resource: RunnableResource<S>) {
  const releases = (rt: Runtime) => cachedReleases(rt, resource.kind, resource.shape, resource.label);
  return async (rt: Runtime, scope: TenantScope, id: string, target: { version?: number; alias?: string }, key: string, before?: number | typeof DRAFT): Promise<{ definition: S; version: number | typeof DRAFT }> => {
    if (target.version !== undefined) return { definition: (await releases(rt).version(scope, id, target.version)).snapshot, version: target.version };
    if (target.alias === undefined || target.alias === DRAFT) return { definition: await (resource.runDraft ?? resource.draft)(rt, scope, id), version: DRAFT };
    const alias = await releases(rt).alias(scope, id, target.alias);
    const version = versionForSession(alias.routing, key, typeof before === 'number' ? before : undefined);
    return { definition: (await releases(rt).version(scope, id, version)).snapshot, version };
  };
}

/** What differs between versioned resources (agents, workflows): everything else is `releasesOf`'s. */
export interface ReleasedResource<S extends BaseRecord, Shown> extends RunnableResource<S> {
  /** `agentId`, `workflowId`: the field naming the resource in what these functions answer. */
  idField: string;
  present(resource: S): Shown;
  /** Throws the 400 a PUT of the draft would answer now: a draft that no longer validates is not published. */
  validate(rt: Runtime, scope: TenantScope, draft: S): Promise<void>;
}

/**
 * A resource's releases: the draft published as immutable numbered versions, listed, read, diffed
 * and deleted, and aliases routing to them by weight; `resolve` gives what a run names.
 */
export function releasesOf<S extends BaseRecord, Shown>(resource: ReleasedResource<S, Shown>) {
  const { label, idField } = resource;
  const releases = (rt: Runtime) => cachedReleases(rt, resource.kind, resource.shape, label);
  const shown = (id: string, v: VersionRecord<S>) => ({ [idField]: id, version: v.version, description: v.description, createdAt: v.createdAt, [label]: resource.present(v.snapshot) });
  const definitionOf = async (rt: Runtime, scope: TenantScope, id: string, ref: number | typeof DRAFT) =>
    ref === DRAFT ? resource.draft(rt, scope, id) : (await releases(rt).version(scope, id, ref)).snapshot;

  return {
    async publish(rt: Runtime, scope: TenantScope, id: string, description: string) {
      const draft = await resource.draft(rt, scope, id);
      await resource.validate(rt, scope, draft);
      const published = await releases(rt).store.publish(scope, id, draft, description, MAX_VERSIONS);
      return { ...shown(id, published), version: published.version };
    },
    async listVersions(rt: Runtime, scope: TenantScope, id: string, page: { limit: number; cursor?: string }) {
      await resource.draft(rt, scope, id);
      const listed = await releases(rt).store.listVersions(scope, id, page);
      return { items: listed.items.map((v) => shown(id, v)), nextCursor: listed.nextCursor };
    },
    async getVersion(rt: Runtime, scope: TenantScope, id: string, version: number) {
      await resource.draft(rt, scope, id);
      return shown(id, await releases(rt).version(scope, id, version));
    },
    async deleteVersion(rt: Runtime, scope: TenantScope, id: string, version: number) {
      await resource.draft(rt, scope, id);
      await releases(rt).store.removeVersion(scope, id, version);
      releases(rt).forget(scope, id, { version });
      return { [idField]: id, version, deleted: true as const };
    },
    /** An RFC 6902 patch from one version (or the draft) to another; secrets only as changed. */
    async diff(rt: Runtime, scope: TenantScope, id: string, from: number | typeof DRAFT, to: number | typeof DRAFT) {
      const [a, b] = await Promise.all([definitionOf(rt, scope, id, from), definitionOf(rt, scope, id, to)]);
      return { from, to, changes: diffOf(a, b) };
    },
    async putAlias(rt: Runtime, scope: TenantScope, id: string, name: string, input: z.infer<typeof aliasInput>) {
      await resource.draft(rt, scope, id);
      const alias = await releases(rt).store.putAlias(scope, id, name, routingOf(input));
      releases(rt).forget(scope, id, { alias: name });
      return { [idField]: id, ...presentAlias(alias) };
    },
    async listAliases(rt: Runtime, scope: TenantScope, id: string) {
      await resource.draft(rt, scope, id);
      return (await releases(rt).store.listAliases(scope, id)).map((a) => ({ [idField]: id, ...presentAlias(a) }));
    },
    async getAlias(rt: Runtime, scope: TenantScope, id: string, name: string) {
      await resource.draft(rt, scope, id);
      return { [idField]: id, ...presentAlias(await releases(rt).alias(scope, id, name)) };
    },
    async deleteAlias(rt: Runtime, scope: TenantScope, id: string, name: string) {
      await resource.draft(rt, scope, id);
      const existed = await releases(rt).store.removeAlias(scope, id, name);
      releases(rt).forget(scope, id, { alias: name });
      if (!existed) throw new NotFoundError(`${label} alias`, `${id}:${name}`);
      return { [idField]: id, name, deleted: true as const };
    },
    resolve: resolverOf(resource),
  };
}
