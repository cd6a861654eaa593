import { OpenApiProblem } from '../errors';
import { exposedName } from './tool-kind';

/**
 * An OpenAPI 3.x document read into the operations an agent may call: each operation's arguments as
 * one JSON Schema object (its path, query and header parameters, and a JSON request body as
 * `body`), with `$ref`s inside the document resolved and OpenAPI 3.0's `nullable` made JSON Schema.
 * What cannot be called this way (external `$ref`s, a required non-JSON body, cookie parameters) is
 * left out, or refused where the allow-list names it.
 */
export interface OpenApiOperation {
  /** The tool's name as the model sees it. */
  name: string;
  operationId: string;
  description: string;
  method: string;
  /** The server's base URL, absolute. */
  server: string;
  path: string;
  /** Which argument goes where. */
  params: Array<{ name: string; in: 'path' | 'query' | 'header'; arg: string }>;
  /** The argument that is the JSON body, if the operation takes one. */
  bodyArg?: string;
  parameters: Record<string, unknown>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value a local `$ref` (`#/components/schemas/Order`) points at. */
function pointAt(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new OpenApiProblem('document', `uses ${ref}: only references inside the document (#/…) can be read`);
  let current: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    current = isObject(current) || Array.isArray(current) ? (current as Json)[key] : undefined;
    if (current === undefined) throw new OpenApiProblem('document', `uses ${ref}, which points at nothing`);
  }
  return current;
}

/** Values a document may expand to once its `$ref`s are followed: a document of references to references must not exhaust memory. */
const MAX_RESOLVED_VALUES = 200_000;

/** Resolves `$ref`s within a budget of values; a reference back into itself (a recursive schema) becomes an open schema. */
function resolve(doc: Json, value: unknown, budget: { left: number }, seen: readonly string[] = []): unknown {
  if (Array.isArray(value) || isObject(value)) {
    if (--budget.left < 0) throw new OpenApiProblem('document', `is too large once its $refs are resolved (more than ${MAX_RESOLVED_VALUES} values)`);
  }
  if (Array.isArray(value)) return value.map((v) => resolve(doc, v, budget, seen));
  if (!isObject(value)) return value;
  if (typeof value.$ref === 'string') {
    if (seen.includes(value.$ref) || seen.length > 32) return {};
    return resolve(doc, pointAt(doc, value.$ref), budget, [...seen, value.$ref]);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(doc, v, budget, seen)]));
}

const DROPPED = new Set(['example', 'examples', 'xml', 'externalDocs', 'discriminator', 'nullable', 'deprecated', 'readOnly', 'writeOnly']);
/** Keywords whose values are maps of schemas, and those whose values are schemas or lists of them; the rest (enum, const, default) are data. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'allOf', 'anyOf', 'oneOf', 'not', 'prefixItems', 'contains']);

/** OpenAPI's schema dialect as JSON Schema: `nullable` becomes a `null` type, annotations models do not need are dropped. */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isObject(value)) out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchemaOf(v)]));
    else out[key] = SCHEMA_VALUES.has(key) ? jsonSchemaOf(value) : value;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

/** A schema of the document as a JSON Schema object (an absent one: any value). */
const schemaObject = (schema: unknown): Json => (isObject(schema) ? (jsonSchemaOf(schema) as Json) : {});

const jsonContent = (content: unknown): Json | undefined => {
  if (!isObject(content)) return undefined;
  const key = Object.keys(content).find((type) => /^application\/(.+\+)?json\b/i.test(type) || type === '*/*');
  if (!key) return undefined;
  const media = content[key];
  return isObject(media) ? media : {};
};

/** The server operations are called at: `baseUrl`, else the operation's, path's or document's first server (its variables at their defaults). */
function serverOf(candidates: unknown[], documentUrl: string | undefined, baseUrl: string | undefined): string {
  if (baseUrl) return baseUrl.replace(/\/+$/, '');
  const server = candidates.find((s): s is Json[] => Array.isArray(s) && s.length > 0)?.[0];
  let url = isObject(server) && typeof server.url === 'string' ? server.url : '';
  if (isObject(server) && isObject(server.variables)) {
    url = url.replace(/\{([^}]+)\}/g, (whole, name: string) => {
      const variable = (server.variables as Json)[name];
      return isObject(variable) && (typeof variable.default === 'string' || typeof variable.default === 'number') ? String(variable.default) : whole;
    });
  }
  try {
    const absolute = new URL(url, documentUrl);
    if (absolute.protocol === 'http:' || absolute.protocol === 'https:') return absolute.toString().replace(/\/+$/, '');
  } catch {
    /* refused below */
  }
  throw new OpenApiProblem('baseUrl', `is required: the document names no absolute http(s) server${url ? ` (it names ${url})` : ''}`);
}

export interface CompileOptions {
  /** The tool's name: each operation's tool is named `<prefix>_<operationId>`. */
  prefix: string;
  /** operationIds the agent may call; all when absent. */
  allow?: string[];
  /** Where the document was read from (relative servers resolve against it). */
  documentUrl?: string;
  baseUrl?: string;
  max: number;
}

export function compileOpenApi(document: unknown, options: CompileOptions): OpenApiOperation[] {
  if (!isObject(document) || typeof document.openapi !== 'string' || !/^3\.[01]\./.test(`${document.openapi}.`)) {
    throw new OpenApiProblem('document.openapi', 'must be an OpenAPI 3.0 or 3.1 document (openapi: "3.x.y"); Swagger 2.0 is not read');
  }
  if (!isObject(document.paths)) throw new OpenApiProblem('document.paths', 'must be an object of paths');
  const budget = { left: MAX_RESOLVED_VALUES };
  const found: Array<{ id: string; build: () => OpenApiOperation | string }> = [];
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const item = resolve(document, rawItem, budget) as Json;
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isObject(operation)) continue;
      const id = typeof operation.operationId === 'string' ? operation.operationId : `${method}${path}`.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, '');
      found.push({ id, build: () => buildOperation(document, options, path, method, item, operation, id, budget) });
    }
  }
  const byId = new Map(found.map((f) => [f.id, f]));
  let chosen = found;
  if (options.allow) {
    chosen = options.allow.map((id, i) => {
      const operation = byId.get(id);
      if (!operation) throw new OpenApiProblem(`operations[${i}]`, `names ${id}, which is not an operation of the document (it has ${[...byId.keys()].slice(0, 20).join(', ') || 'none'})`);
      return operation;
    });
  } else if (found.length > options.max) {
    throw new OpenApiProblem('operations', `must list the operations the agent may call: the document has ${found.length}, more than ${options.max}`);
  }
  const operations: OpenApiOperation[] = [];
  for (const [i, entry] of chosen.entries()) {
    const built = entry.build();
    if (typeof built === 'string') {
      // Named in the allow-list: say why it cannot be called. Otherwise it is left out.
      if (options.allow) throw new OpenApiProblem(`operations[${i}]`, `names ${entry.id}, which cannot be called as a tool: ${built}`);
      continue;
    }
    operations.push(built);
  }
  if (operations.length === 0) throw new OpenApiProblem('document.paths', 'holds no operation that can be called as a tool');
  return operations;
}

/** One operation as a tool, or why it cannot be one. */
function buildOperation(doc: Json, options: CompileOptions, path: string, method: string, item: Json, operation: Json, id: string, budget: { left: number }): OpenApiOperation | string {
  const listed = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const declared = [...listed(item.parameters), ...listed(operation.parameters)].map((p) => resolve(doc, p, budget));
  // An operation's parameter overrides the path's of the same name and place.
  const unique = new Map(declared.filter(isObject).map((p) => [`${String(p.in)}:${String(p.name)}`, p]));
  const properties: Json = {};
  const required: string[] = [];
  const params: OpenApiOperation['params'] = [];
  for (const p of unique.values()) {
    if (typeof p.name !== 'string') continue;
    if (p.in === 'cookie') {
      if (p.required) return `it needs the cookie ${p.name}`;
      continue;
    }
    if (p.in !== 'path' && p.in !== 'query' && p.in !== 'header') continue;
    const arg = p.name in properties ? `${p.name}_${p.in}` : p.name;
    const schema = schemaObject(p.schema ?? jsonContent(p.content)?.schema ?? { type: 'string' });
    properties[arg] = { ...schema, ...(typeof p.description === 'string' ? { description: p.description.slice(0, 500) } : {}) };
    if (p.required || p.in === 'path') required.push(arg);
    params.push({ name: p.name, in: p.in, arg });
  }
  let bodyArg: string | undefined;
  const requestBody = resolve(doc, operation.requestBody, budget) as Json | undefined;
  if (isObject(requestBody)) {
    const media = jsonContent(requestBody.content);
    if (!media) {
      if (requestBody.required) return 'its request body is not JSON';
    } else {
      bodyArg = 'body' in properties ? 'requestBody' : 'body';
      properties[bodyArg] = { ...schemaObject(media.schema), ...(typeof requestBody.description === 'string' ? { description: requestBody.description.slice(0, 500) } : {}) };
      if (requestBody.required) required.push(bodyArg);
    }
  }
  const summary = [operation.summary, operation.description].find((s): s is string => typeof s === 'string' && s.trim() !== '')?.trim() ?? '';
  return {
    name: exposedName(options.prefix, id),
    operationId: id,
    description: `${summary ? `${summary} ` : ''}(${method.toUpperCase()} ${path})`.slice(0, 1000),
    method: method.toUpperCase(),
    server: serverOf([operation.servers, item.servers, doc.servers], options.documentUrl, options.baseUrl),
    path,
    params,
    ...(bodyArg ? { bodyArg } : {}),
    parameters: { type: 'object', properties, ...(required.length ? { required } : {}) },
  };
}
