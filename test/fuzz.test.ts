import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { rngOf } from './helpers/random';
import { call } from './helpers/http';
import { platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Malformed requests for every operation of both OpenAPI documents, from a seeded generator (the
 * same requests every run): no answer may be a 5xx, and every 4xx carries the error body.
 */
const app = createLocalApp(testRt);
const PER_OPERATION = 50;

type FieldSchema = { type?: string; enum?: unknown[]; default?: unknown };
type Operation = {
  method: string;
  path: string;
  bodyFields: Array<[string, FieldSchema]>;
  /** Whether the document declares a JSON request body, and the example it gives of one. */
  takesBody: boolean;
  example?: unknown;
  auth: 'key' | 'token' | 'admin' | 'none';
  errorStyle: 'cairn' | 'openai';
  jsonRpcStatuses: Set<number>;
};
type Content = Record<string, { example?: unknown; schema?: { $ref?: string; properties?: Record<string, unknown>; example?: unknown } }>;
type OpenApi = {
  paths: Record<string, Record<string, { security?: Array<Record<string, unknown>>; requestBody?: { content?: Content }; responses?: Record<string, { content?: Content }> }>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown>; example?: unknown }> };
};

function operationsOf(doc: OpenApi): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content?.['application/json'];
      const schema = content?.schema;
      const resolved = schema?.$ref ? doc.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      const auth = scheme === 'ApiKeyAuth' ? 'key' : scheme === 'PlatformToken' ? 'token' : scheme === 'PlatformAdmin' ? 'admin' : 'none';
      // The OpenAI-compatible routes document (and answer) OpenAI's error body instead of Cairn's.
      const errorSchema = op.responses?.['400']?.content?.['application/json']?.schema?.$ref ?? '';
      const errorStyle = errorSchema.endsWith('/OpenAiError') ? 'openai' : 'cairn';
      // The MCP endpoint documents JSON-RPC error bodies for what its transport answers (406).
      const jsonRpcStatuses = new Set(Object.entries(op.responses ?? {}).filter(([, r]) => r.content?.['application/json']?.schema?.$ref?.endsWith('/JsonRpcMessage')).map(([status]) => Number(status)));
      const example = content?.example ?? resolved?.example;
      out.push({ method: method.toUpperCase(), path, bodyFields: Object.entries((resolved?.properties ?? {}) as Record<string, FieldSchema>), takesBody: Boolean(content), example, auth, errorStyle, jsonRpcStatuses });
    }
  }
  return out;
}

describe('fuzzing every operation', () => {
  let t: TestTenant;
  let tenant: ProvisionedTenant;
  let operations: Operation[];
  const ids: string[] = [];
  /** The example's ids made real (an agent id for an agent id…), and the path's parameters likewise. */
  const realIds = (text: string) => text.replace(/\b(agt|wf|ks)_[0-9a-z]{26}\b/g, (id) => ids.find((real) => real.startsWith(id.split('_')[0]!)) ?? id);
  const pathOf = (op: Operation) =>
    op.path.replace(/\{([^}]+)\}/g, (_, name: string) => ({ agentId: ids[0], workflowId: ids[1], knowledgeSourceId: ids[2], tenantId: ids[3], version: '1', alias: 'live' })[name] ?? 'x');
  const bodyOf = (op: Operation, fields: Record<string, unknown> = {}) => {
    const example = JSON.parse(realIds(JSON.stringify(op.example ?? {}))) as unknown;
    // A new tenant each time: the example's own id is taken once the first call made it.
    const base = op.path === '/platform/tenants' ? { ...(example as object), tenantId: `fuzz-${Math.random().toString(36).slice(2, 10)}` } : example;
    return JSON.stringify(Array.isArray(base) || typeof base !== 'object' || base === null ? base : { ...base, ...fields });
  };
  const headersOf = (op: Operation): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(op.auth === 'token' ? { authorization: `Bearer ${tenant.accessToken}` } : op.auth === 'admin' ? { authorization: `Bearer ${platformTestSecrets().adminToken}` } : {}),
  });
  const send = (op: Operation, rawBody: string) => call(app, op.method, pathOf(op), { ...(op.auth === 'key' ? { key: t.apiKey } : {}), rawBody, headers: headersOf(op) });
  /** A tenant of each kind with an agent, a workflow and a source: what an earlier test deleted or revoked is fresh again. */
  const freshTenants = async () => {
    t = await newTenant('unlimited');
    tenant = await provision(app, platformTestSecrets().adminToken, { plan: 'unlimited' });
    ids.length = 0;
    // Real ids too, so requests reach past the 404s into the handlers.
    const created = await Promise.all([
      call(app, 'POST', '/v1/agents', { key: t.apiKey, body: { name: 'fuzz', model: 'gpt-4' } }),
      call(app, 'POST', '/v1/workflows', { key: t.apiKey, body: { name: 'fuzz', steps: [{ type: 'generation', model: 'gpt-4', prompt: '{{parameters.a}}' }] } }),
      call(app, 'POST', '/v1/knowledge-sources', { key: t.apiKey, body: { name: 'fuzz', type: 'file-collection', files: [{ path: 'a.md', content: '# A' }] } }),
    ]);
    ids.push(...created.map((r) => String(r.body.data.id)), tenant.tenantId);
    // Versions of the agent and the workflow, so what names one (an alias's routing, a diff) reaches past validation.
    for (let i = 0; i < 3; i++) {
      await call(app, 'POST', `/v1/agents/${ids[0]}/versions`, { key: t.apiKey, body: {} });
      await call(app, 'POST', `/v1/workflows/${ids[1]}/versions`, { key: t.apiKey, body: {} });
    }
  };
  beforeAll(async () => {
    const v1 = (await call(app, 'GET', '/v1/openapi.json')).body as OpenApi;
    const platform = (await call(app, 'GET', '/platform/openapi.json')).body as OpenApi;
    operations = [...operationsOf(v1), ...operationsOf(platform)];
    await freshTenants();
  });

  it('answers no malformed request with a 5xx, and every 4xx with the error body', async () => {
    expect(operations.length).toBeGreaterThan(40);
    const random = rngOf(20261123);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const weird = ['', 'x', 'eyJzayI6IiJ9', '%00', '..%2F..', 'a'.repeat(300), 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', 'ks_zzzzzzzzzzzzzzzzzzzzzzzzzz', '%E2%80%AE', '__proto__', 'null', '-1', '1e400', 'wf_' + '0'.repeat(26), 'exe_x'];
    const scalar = (): unknown => pick([null, true, -1, 0, 1.5, 2 ** 60, '', 'x'.repeat(5000), '{{steps.x.output}}', '<script>', [], {}, 'gpt-4', 'local/x', 'ks_x']);
    const value = (depth: number): unknown => {
      if (depth > 3 || random() < 0.5) return scalar();
      if (random() < 0.5) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, () => [pick(['a', 'type', 'config', 'name', 'steps', 'query', 'data', 'where', 'eq', 'in']), value(depth + 1)]));
    };
    // Free-form JSON, as a tenant's records or a workflow's parameters may hold it.
    const freeForm = (depth: number): Record<string, unknown> =>
      Object.fromEntries(
        Array.from({ length: 1 + Math.floor(random() * 3) }, () => [
          pick(['a', 'total', 'collection', 'id', 'status', '__proto__', 'constructor']),
          depth < 2 && random() < 0.3 ? freeForm(depth + 1) : pick([1, 'x', 2 ** 60, 1e300, null, true, 'c']),
        ]),
      );
    const rawBodies = ['{', 'null', '[]', '"text"', '1e400', `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`, '{"__proto__":{"x":1}}', '{"n":9007199254740993}'];
    const failures: string[] = [];
    let sent = 0;
    for (const op of operations) {
      for (let i = 0; i < PER_OPERATION; i++) {
        const path = op.path.replace(/\{[^}]+\}/g, () => (random() < 0.5 ? pick(ids) : pick(weird)));
        const query = random() < 0.4 ? `?${pick(['limit', 'cursor', 'include', 'status', 'path'])}=${encodeURIComponent(pick(weird))}` : '';
        let rawBody: string | undefined;
        if (op.method !== 'GET' && op.method !== 'DELETE') {
          // Mostly well-typed fields (so requests get past validation into the handlers), some not.
          const typed = ([, f]: [string, FieldSchema]): unknown =>
            f.enum ? pick(f.enum) : f.type === 'string' ? pick(['x', 'gpt-4', 'hello {{input}}', ...ids]) : f.type === 'number' || f.type === 'integer' ? pick([1, 5, 2 ** 60, -1]) : f.type === 'object' ? freeForm(0) : f.type === 'array' ? [] : value(0);
          const fields = op.bodyFields.length > 0 ? op.bodyFields : [['x', {}] as [string, FieldSchema]];
          rawBody = random() < 0.2 ? pick(rawBodies) : JSON.stringify(Object.fromEntries(fields.filter(() => random() < 0.8).map((f) => [f[0], random() < 0.75 ? typed(f) : value(0)])));
        }
        const headers: Record<string, string> = { 'content-type': random() < 0.9 ? 'application/json' : 'text/plain' };
        // What MCP clients send (other routes ignore it), so the MCP endpoint is fuzzed past its Accept check.
        if (random() < 0.7) headers.accept = 'application/json, text/event-stream';
        if (op.auth === 'token') headers.authorization = `Bearer ${tenant.accessToken}`;
        if (op.auth === 'admin') headers.authorization = `Bearer ${platformTestSecrets().adminToken}`;
        const res = await call(app, op.method, path + query, { ...(op.auth === 'key' ? { key: t.apiKey } : {}), rawBody, headers });
        sent++;
        const body = res.body as { error?: { code?: string | number; type?: string; message?: string }; meta?: { requestId?: string }; jsonrpc?: string } | undefined;
        const errorBody = op.jsonRpcStatuses.has(res.status)
          ? body?.jsonrpc === '2.0' && typeof body.error?.code === 'number' && Boolean(body.error.message)
          : op.errorStyle === 'openai' ? Boolean(body?.error?.type && body.error.message && res.headers.get('x-request-id')) : Boolean(body?.error?.code && body.meta?.requestId);
        if (res.status >= 500) failures.push(`${res.status} ${op.method} ${path}${query} ${rawBody?.slice(0, 80) ?? ''}`);
        else if (res.status >= 400 && !errorBody) failures.push(`${res.status} without the error body: ${op.method} ${path}`);
      }
    }
    expect(sent).toBe(operations.length * PER_OPERATION);
    expect(failures.slice(0, 10)).toEqual([]);
  }, 300_000);

  it('documents an example body for every operation that takes one, and the API takes it as valid', async () => {
    await freshTenants();
    const refused: string[] = [];
    for (const op of operations.filter((o) => o.takesBody)) {
      if (op.example === undefined) {
        refused.push(`${op.method} ${op.path}: no example`);
        continue;
      }
      const res = await send(op, bodyOf(op));
      // Valid: the example gets past validation (a step that waits for nobody may be a 404 or 409).
      if (res.status === 400 || res.status === 422 || res.status >= 500) refused.push(`${op.method} ${op.path}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    }
    expect(refused).toEqual([]);
  }, 120_000);

  it('answers values near every size and nesting limit, in every body field of every operation, without a 5xx', async () => {
    await freshTenants();
    const random = rngOf(20261125);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const nest = (levels: number, leaf: unknown, list: boolean): unknown => {
      let v = leaf;
      for (let i = 0; i < levels; i++) v = list ? [v] : { a: v };
      return v;
    };
    // Two-byte characters: under a limit in characters, over it in bytes (keys hold 1,024 bytes);
    // single-byte strings around the 400 KB a record holds and the 1 MB a body may have.
    const strings = [511, 512, 513, 2000, 2001, 10_000, 10_001, 16_000, 16_001, 50_000, 50_001].map((n) => 'Ω'.repeat(n)).concat(['x'.repeat(409_000), 'x'.repeat(409_700), 'x'.repeat(1024 * 1024 - 200)]);
    const nested = [29, 30, 31, 32].flatMap((levels) => [nest(levels, 1, false), nest(levels, 'x', true)]);
    const large = [{ blob: 'x'.repeat(409_500) }, [{ blob: 'Ω'.repeat(204_800) }]];
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    for (const op of operations.filter((o) => o.method !== 'GET' && o.method !== 'DELETE')) {
      for (const [field, schema] of op.bodyFields.length > 0 ? op.bodyFields : [['input', {}] as [string, FieldSchema]]) {
        const candidates = schema.type === 'string' ? strings : schema.type === 'object' || schema.type === 'array' ? [...nested, ...large] : [...strings, ...nested, ...large];
        for (let i = 0; i < 4; i++) {
          // The documented example with one field at a limit, so the request reaches the store.
          const rawBody = bodyOf(op, { [field]: pick(candidates) });
          const res = await send(op, rawBody);
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const body = res.body as { error?: { code?: unknown } } | undefined;
          if (res.status >= 500) failures.push(`${res.status} ${op.method} ${op.path} ${field}: ${rawBody.length} bytes, ${JSON.stringify(res.body).slice(0, 160)}`);
          else if (res.status >= 400 && !body?.error) failures.push(`${res.status} without the error body: ${op.method} ${op.path} ${field}`);
        }
      }
    }
    // Most requests got past validation: the limits were reached, not just the schema's.
    const accepted = [...statuses].filter(([status]) => status < 300).reduce((sum, [, n]) => sum + n, 0);
    expect(accepted).toBeGreaterThan(50);
    expect(statuses.get(413) ?? 0).toBeGreaterThan(10);
    expect(failures.slice(0, 10)).toEqual([]);
  }, 300_000);

  it('answers a request with no body and no content type, to every operation that takes a body, without a 5xx', async () => {
    const failures: string[] = [];
    for (const op of operations.filter((o) => o.method !== 'GET' && o.method !== 'DELETE')) {
      for (const id of ids) {
        const path = op.path.replace(/\{[^}]+\}/g, id);
        const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
        if (op.auth === 'token') headers.authorization = `Bearer ${tenant.accessToken}`;
        if (op.auth === 'admin') headers.authorization = `Bearer ${platformTestSecrets().adminToken}`;
        const res = await call(app, op.method, path, { ...(op.auth === 'key' ? { key: t.apiKey } : {}), headers });
        if (res.status >= 500) failures.push(`${res.status} ${op.method} ${path}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
