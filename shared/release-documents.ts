import { z } from '@hono/zod-openapi';
import { AppError, ValidationError } from './errors';
import { isPlainObject } from './json-objects';
import { aliasInput, aliasName, isSealed, routingOf } from './releases';
import type { Runtime } from './runtime';
import type { SealedSecret, SecretBox } from './secrets/secret-box';
import type { BaseRecord, Idempotency, RecordKind } from './store/records';
import type { TenantScope } from './tenancy';
import { isoNow } from './clock';

/**
 * Export and import of a versioned resource (an agent, a workflow) as a portable document — its
 * draft, every version and every alias — that a team keeps in git and applies from CI. No secret
 * leaves: each sealed one becomes a placeholder, `${secret:<name>}`, in the field a request would
 * give it in; an import fills placeholders from its `secrets`, and one left unfilled is imported
 * without its secret (`configured: false`, unusable until set) or, a webhook, left out.
 */

/** `${secret:tools.order_status.auth}`. */
const PLACEHOLDER = /^\$\{secret:([^}]{1,300})\}$/;
const placeholder = (name: string) => `\${secret:${name}}`;

/** The field of a secret's holder its secret is given in: an auth's by its type, a webhook's `secret`. */
function secretField(holder: Record<string, unknown>): string {
  if (holder.type === 'bearer') return 'token';
  if (holder.type === 'header') return 'value';
  if (holder.type === 'basic') return 'password';
  return 'secret';
}

type Path = Array<string | number>;

/** Where a stored definition holds sealed secrets: the paths of the objects that hold them. */
function sealedHolders(value: unknown, path: Path = []): Array<{ path: Path; sealed: unknown }> {
  if (Array.isArray(value)) return value.flatMap((v, i) => sealedHolders(v, [...path, i]));
  if (!isPlainObject(value)) return [];
  if (isSealed(value.sealed)) return [{ path, sealed: value.sealed }];
  return Object.entries(value).flatMap(([k, v]) => sealedHolders(v, [...path, k]));
}

/** A placeholder's name from its holder's path: list items by their name or id (`tools.order_status.auth`, `steps.fetch.config.auth`). */
function nameOf(root: unknown, path: Path): string {
  let node = root;
  const parts: string[] = [];
  for (const part of path) {
    const next = (node as Record<string | number, unknown>)[part];
    if (typeof part === 'number') parts.push(isPlainObject(next) && typeof (next.name ?? next.id) === 'string' ? String(next.name ?? next.id) : String(part));
    else parts.push(part);
    node = next;
  }
  return parts.join('.');
}

function at(root: unknown, path: Path): Record<string, unknown> | undefined {
  let node = root;
  for (const part of path) node = isPlainObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[part] : undefined;
  return isPlainObject(node) ? node : undefined;
}

/** Names placeholders across the draft and versions: the same secret keeps one name, a different one at the same place gets `~2`, `~3`. */
class Placeholders {
  private readonly byName = new Map<string, Array<{ sealed: string; usedIn: Array<number | 'draft'> }>>();

  name(base: string, sealed: unknown, usedIn: number | 'draft'): string {
    const key = JSON.stringify(sealed);
    const seen = this.byName.get(base) ?? [];
    this.byName.set(base, seen);
    let index = seen.findIndex((s) => s.sealed === key);
    if (index < 0) index = seen.push({ sealed: key, usedIn: [] }) - 1;
    if (!seen[index]!.usedIn.includes(usedIn)) seen[index]!.usedIn.push(usedIn);
    return index === 0 ? base : `${base}~${index + 1}`;
  }

  list() {
    return [...this.byName].flatMap(([base, seen]) => seen.map((s, i) => ({ name: i === 0 ? base : `${base}~${i + 1}`, usedIn: s.usedIn })));
  }
}

type Fields<S> = Omit<S, keyof BaseRecord>;

/** A secret box that gives the same sealed secret for the same value and context. */
function sealingOnce(box: SecretBox): SecretBox {
  const sealed = new Map<string, Promise<SealedSecret>>();
  return {
    ...box,
    seal(plaintext, context) {
      const key = JSON.stringify([plaintext, context]);
      if (!sealed.has(key)) sealed.set(key, box.seal(plaintext, context));
      return sealed.get(key)!;
    },
  };
}

/** What differs between resources that export and import: everything else is `documentsOf`'s. */
export interface PortableResource<S extends BaseRecord, Shown, L extends string> {
  kind: RecordKind;
  shape: z.ZodType<S>;
  /** `agent`, `workflow`: the document's field for a definition, and `cairn.<label>/v1` its format. */
  label: L;
  draft(rt: Runtime, scope: TenantScope, id: string): Promise<S>;
  /** A stored definition as a client sends it (what responses show, read-only fields left out). */
  inputOf(record: S): Record<string, unknown>;
  /** Validates a definition as a create would (references included) and makes it ready to store; errors name its own fields. */
  prepare(rt: Runtime, scope: TenantScope, input: unknown): Promise<Fields<S>>;
  /** Creates the draft from a definition as the create route would. */
  create(rt: Runtime, scope: TenantScope, input: unknown, idempotency?: Idempotency): Promise<{ record: Shown & { id: string }; replayed: boolean }>;
  remove(rt: Runtime, scope: TenantScope, id: string): Promise<unknown>;
  /** A definition the documented example imports. */
  example: Record<string, unknown>;
}

/** A failure naming a field of the definition, named under where the definition stands in the document. */
async function under<T>(prefix: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError && error.code === 'INVALID_REQUEST' && typeof error.details?.field === 'string') {
      throw new ValidationError(`${prefix}.${error.details.field}`, typeof error.details.reason === 'string' ? error.details.reason : error.message);
    }
    throw error;
  }
}

/** Replaces exact ids (`ids`: the exporting deployment's → this one's) and fills placeholders; says what was left unfilled. */
function filled(definition: unknown, given: { secrets: Record<string, string>; ids: Record<string, string> }, unfilled: (name: string, holder: Record<string, unknown>) => void): unknown {
  // An id alone, or naming a release of it (`agt_…:live`, as an agent step does).
  const swapped = (text: string) => {
    const at = text.indexOf(':');
    const id = at < 0 ? text : text.slice(0, at);
    return Object.hasOwn(given.ids, id) ? `${given.ids[id]}${at < 0 ? '' : text.slice(at)}` : text;
  };
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return swapped(value);
    if (Array.isArray(value)) return value.map(walk).filter((v) => v !== undefined);
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = {};
    let missing = false;
    for (const [key, v] of Object.entries(value)) {
      const name = typeof v === 'string' ? PLACEHOLDER.exec(v)?.[1] : undefined;
      if (name === undefined) {
        const walked = walk(v);
        if (walked !== undefined) out[key] = walked;
      } else if (Object.hasOwn(given.secrets, name)) out[key] = given.secrets[name];
      else {
        unfilled(name, value);
        missing = true;
      }
    }
    if (!missing) return out;
    // An auth without its secret is kept as not configured; anything else that needs one (a webhook) is left out.
    return 'type' in value ? { ...out, configured: false } : undefined;
  };
  return walk(definition);
}

/**
 * A resource's documents: `exportOf` answers `{format, <label>, versions, aliases, placeholders}`;
 * `importOf` creates a new resource from one, with the same version numbers and aliases.
 */
export function documentsOf<S extends BaseRecord, Shown, L extends string>(resource: PortableResource<S, Shown, L>) {
  const { label } = resource;
  const format = `cairn.${label}/v1`;
  const releases = (rt: Runtime) => rt.store.releases.of(resource.kind, resource.shape);
  // The definitions stand under the resource's own name (`agent`, `workflow`): checked as objects here, validated as creates by the import.
  const documentSchema = z
    .looseObject({
      format: z.literal(format, { error: `must be ${format}` }),
      versions: z
        .array(z.looseObject({ version: z.int().min(1), description: z.string().max(2000).default(''), createdAt: z.iso.datetime().optional() }))
        .max(500)
        .default([]),
      aliases: z.array(z.object({ name: aliasName, routing: aliasInput.shape.routing })).max(100).default([]),
      placeholders: z.unknown().optional().openapi({ description: 'Read-only: what the export lists; ignored' }),
      exportedAt: z.unknown().optional().openapi({ description: 'Read-only; ignored' }),
      secrets: z
        .record(z.string().max(300), z.string().min(1).max(4096))
        .default({})
        .openapi({ description: 'A value for each placeholder `${secret:<name>}` to fill, by name' }),
      ids: z
        .record(z.string().max(200), z.string().min(1).max(200))
        .default({})
        .openapi({ description: 'Ids to replace wherever they appear (the exporting deployment’s knowledge source or workflow ids → this one’s)' }),
    })
    .openapi({
      description: `An exported document (\`${format}\`): \`${label}\` (the draft) and each version's \`${label}\` as a create takes it`,
      example: {
        format,
        [label]: resource.example,
        versions: [{ version: 1, description: 'First release', [label]: resource.example }],
        aliases: [{ name: 'live', routing: [{ version: 1 }] }],
        secrets: {},
      },
    })
    .superRefine((doc, ctx) => {
      if (!isPlainObject(doc[label])) ctx.addIssue({ code: 'custom', path: [label], message: `must be the ${label} (an object)` });
      const numbers = doc.versions.map((v) => v.version);
      numbers.forEach((n, i) => {
        if (numbers.indexOf(n) !== i) ctx.addIssue({ code: 'custom', path: ['versions', i, 'version'], message: `repeats version ${n}` });
        if (!isPlainObject(doc.versions[i]![label])) ctx.addIssue({ code: 'custom', path: ['versions', i, label], message: `must be the ${label} (an object)` });
      });
      doc.aliases.forEach((alias, i) => {
        if (doc.aliases.findIndex((a) => a.name === alias.name) !== i) ctx.addIssue({ code: 'custom', path: ['aliases', i, 'name'], message: `repeats alias ${alias.name}` });
        const parsed = aliasInput.safeParse({ routing: alias.routing });
        if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', path: ['aliases', i, ...issue.path] as Path, message: issue.message });
        alias.routing.forEach((r, j) => {
          if (!numbers.includes(r.version)) ctx.addIssue({ code: 'custom', path: ['aliases', i, 'routing', j, 'version'], message: `is ${r.version}, which is not one of the document's versions` });
        });
      });
    });

  /** A stored definition as the document holds it: its input form, each sealed secret a placeholder. */
  function portable(stored: S, names: Placeholders, usedIn: number | 'draft'): Record<string, unknown> {
    const input = structuredClone(resource.inputOf(stored));
    for (const { path, sealed } of sealedHolders(stored)) {
      const holder = at(input, path);
      if (!holder) continue;
      delete holder.configured;
      holder[secretField(holder)] = placeholder(names.name(nameOf(stored, path), sealed, usedIn));
    }
    return input;
  }

  return {
    format,
    documentSchema,

    async exportOf(rt: Runtime, scope: TenantScope, id: string) {
      const draft = await resource.draft(rt, scope, id);
      const [versions, aliases] = await Promise.all([releases(rt).allVersions(scope, id), releases(rt).listAliases(scope, id)]);
      // Oldest first, so a secret keeps its name as versions are added.
      const names = new Placeholders();
      const shownVersions = versions.map((v) => ({ version: v.version, description: v.description, createdAt: v.createdAt, [label]: portable(v.snapshot, names, v.version) }));
      return {
        format,
        exportedAt: isoNow(rt.clock),
        [label]: portable(draft, names, 'draft'),
        versions: shownVersions,
        aliases: aliases.map((a) => ({ name: a.name, routing: a.routing })),
        placeholders: names.list(),
      };
    },

    /**
     * A new resource from a document: every definition is validated first (a 400 names its field
     * in the document, and nothing is written); then the draft is created, and its versions and
     * aliases written under their numbers. Should a write fail after the draft, the draft and what
     * was written go, so a retry starts clean.
     */
    async importOf(given: Runtime, scope: TenantScope, doc: z.infer<typeof documentSchema>, idempotency?: Idempotency) {
      // One secret used by several definitions is sealed once, as a publish copies it: an export of what was imported names it once.
      const rt: Runtime = { ...given, secrets: sealingOnce(given.secrets) };
      const unfilled = new Map<string, { name: string; in: string[]; effect: string }>();
      const fill = (definition: unknown, where: string) =>
        filled(definition, doc, (name, holder) => {
          const entry = unfilled.get(name) ?? { name, in: [], effect: 'type' in holder ? 'imported without its secret (configured: false): not usable until one is set' : 'left out: it needs its secret' };
          entry.in.push(where);
          unfilled.set(name, entry);
        });
      const versions = [...doc.versions].sort((a, b) => a.version - b.version);
      const snapshots = [];
      for (const [i, v] of versions.entries()) {
        const where = `versions[${doc.versions.indexOf(v)}].${label}`;
        const fields = await under(where, () => resource.prepare(rt, scope, fill(v[label], `version ${v.version}`)));
        const createdAt = v.createdAt ?? isoNow(rt.clock);
        snapshots[i] = { version: v.version, description: v.description, createdAt, fields };
      }
      const created = await under(label, () => resource.create(rt, scope, fill(doc[label], 'draft'), idempotency));
      const id = created.record.id;
      if (!created.replayed) {
        try {
          await releases(rt).restoreVersions(
            scope,
            id,
            snapshots.map((s) => ({ version: s.version, description: s.description, createdAt: s.createdAt, snapshot: { ...s.fields, id, createdAt: s.createdAt, updatedAt: s.createdAt, version: 1 } as S })),
          );
          for (const alias of doc.aliases) await releases(rt).putAlias(scope, id, alias.name, routingOf({ routing: alias.routing }));
        } catch (error) {
          await resource.remove(rt, scope, id).catch(() => undefined);
          throw error;
        }
      }
      return {
        record: {
          [label]: created.record,
          versions: versions.map((v) => v.version),
          aliases: doc.aliases.map((a) => a.name),
          unfilledSecrets: [...unfilled.values()],
        },
        replayed: created.replayed,
      };
    },
  };
}
