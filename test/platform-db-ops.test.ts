import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { pcall, platformTestSecrets, provision, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';

const app = createLocalApp(testRt);
const secrets = platformTestSecrets();

describe('platform db/ops', () => {
  let a: ProvisionedTenant;
  let b: ProvisionedTenant;
  let agentA: string;
  let agentB: string;
  const op = (t: ProvisionedTenant, body: unknown) => pcall(app, 'POST', '/platform/db/ops', t.accessToken, { body });

  beforeAll(async () => {
    a = await provision(app, secrets.adminToken);
    b = await provision(app, secrets.adminToken);
    agentA = (await call(app, 'POST', '/v1/agents', { key: a.apiKey, body: { name: 'A bot', model: 'local/x' } })).body.data.id;
    agentB = (await call(app, 'POST', '/v1/agents', { key: b.apiKey, body: { name: 'B bot', model: 'local/x' } })).body.data.id;
    for (let i = 0; i < 25; i++) {
      const res = await op(a, { operation: 'put', table: 'records', item: { collection: 'orders', id: `o${String(i).padStart(2, '0')}`, data: { total: i * 10, status: i % 3 === 0 ? 'open' : 'closed', customer: `c${i % 5}` } } });
      expect(res.status).toBe(200);
    }
    await op(b, { operation: 'put', table: 'records', item: { collection: 'orders', id: 'o00', data: { total: 999, status: 'open' } } });
  });

  it('documents every allowed table: fields, types, key, operations, writable fields', async () => {
    const res = await pcall(app, 'GET', '/platform/db/ops', a.accessToken);
    expect(res.status).toBe(200);
    const names = res.body.data.tables.map((t: { name: string }) => t.name);
    expect(names).toEqual(expect.arrayContaining(['agents', 'knowledge_collections', 'documents', 'sessions', 'messages', 'memory_nodes', 'memory_edges', 'workflow_definitions', 'workflow_executions', 'records']));
    const agents = res.body.data.tables.find((t: { name: string }) => t.name === 'agents');
    expect(agents.key).toEqual(['id']);
    expect(agents.operations).toEqual(['get', 'query', 'put', 'update', 'delete', 'count']);
    expect(agents.writable).toContain('temperature');
    expect(agents.fields).toContainEqual({ name: 'temperature', type: 'number', nullable: false, writable: true, description: '0–2' });
    expect(res.body.data.operators).toEqual(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'begins_with', 'in', 'exists']);
  });

  it('runs every condition operator against records', async () => {
    const ids = async (where: unknown) => {
      const res = await op(a, { operation: 'query', table: 'records', where: { collection: 'orders', ...(where as object) }, limit: 100 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.items.map((r: { id: string }) => r.id);
    };
    expect(await ids({ id: 'o03' })).toEqual(['o03']);
    expect(await ids({ 'data.status': { eq: 'open' } })).toEqual(['o00', 'o03', 'o06', 'o09', 'o12', 'o15', 'o18', 'o21', 'o24']);
    expect((await ids({ 'data.status': { ne: 'open' } })).length).toBe(16);
    expect(await ids({ 'data.total': { lt: 20 } })).toEqual(['o00', 'o01']);
    expect(await ids({ 'data.total': { lte: 20 } })).toEqual(['o00', 'o01', 'o02']);
    expect(await ids({ 'data.total': { gt: 220 } })).toEqual(['o23', 'o24']);
    expect(await ids({ 'data.total': { gte: 220 } })).toEqual(['o22', 'o23', 'o24']);
    expect(await ids({ 'data.total': { between: [50, 70] } })).toEqual(['o05', 'o06', 'o07']);
    expect(await ids({ id: { begins_with: 'o1' } })).toHaveLength(10);
    expect(await ids({ 'data.customer': { in: ['c1', 'c2'] }, 'data.total': { lt: 100 } })).toEqual(['o01', 'o02', 'o06', 'o07']);
    expect(await ids({ 'data.missing': { exists: true } })).toEqual([]);
    expect(await ids({ 'data.total': { exists: true } })).toHaveLength(25);
  });

  it('pages with a cursor, counts, selects fields', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await op(a, { operation: 'query', table: 'records', where: { collection: 'orders' }, limit: 10, cursor, select: ['id', 'data.total'] });
      expect(res.status).toBe(200);
      for (const row of res.body.data.items) {
        expect(Object.keys(row).sort()).toEqual(['data.total', 'id']);
        seen.push(row.id);
      }
      cursor = res.body.data.nextCursor ?? undefined;
      expect(res.body.data.hasMore).toBe(cursor !== undefined);
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(25);
    // Filtered paging: every match exactly once, in key order, however the pages fall.
    const open: string[] = [];
    cursor = undefined;
    do {
      const res = await op(a, { operation: 'query', table: 'records', where: { collection: 'orders', 'data.status': 'open' }, limit: 2, cursor });
      open.push(...res.body.data.items.map((r: { id: string }) => r.id));
      cursor = res.body.data.nextCursor ?? undefined;
    } while (cursor);
    expect(open).toEqual(['o00', 'o03', 'o06', 'o09', 'o12', 'o15', 'o18', 'o21', 'o24']);
    const count = await op(a, { operation: 'count', table: 'records', where: { collection: 'orders', 'data.status': 'open' } });
    expect(count.body.data).toMatchObject({ count: 9, complete: true });
    // A cursor of one partition does not continue another.
    const first = await op(a, { operation: 'query', table: 'records', where: { collection: 'orders' }, limit: 1 });
    const other = await op(a, { operation: 'query', table: 'records', where: { collection: 'invoices' }, cursor: first.body.data.nextCursor });
    expect(other.status).toBe(400);
    expect(other.body.error.details.field).toBe('cursor');
  });

  it('gets, updates (merging data) and deletes a record; put replaces', async () => {
    const got = await op(a, { operation: 'get', table: 'records', key: { collection: 'orders', id: 'o01' } });
    expect(got.body.data.item).toMatchObject({ collection: 'orders', id: 'o01', data: { total: 10 }, version: 1, tenantId: a.tenantId, schema: a.schema });
    const updated = await op(a, { operation: 'update', table: 'records', key: { collection: 'orders', id: 'o01' }, item: { data: { status: 'refunded', customer: null } } });
    expect(updated.body.data.item).toMatchObject({ data: { total: 10, status: 'refunded' }, version: 2 });
    expect(updated.body.data.item.data.customer).toBeUndefined();
    const replaced = await op(a, { operation: 'put', table: 'records', item: { collection: 'orders', id: 'o01', data: { total: 11 } } });
    expect(replaced.body.data.item).toMatchObject({ data: { total: 11 }, version: 3, createdAt: got.body.data.item.createdAt });
    const generated = await op(a, { operation: 'put', table: 'records', item: { collection: 'notes', data: { text: 'hi' } } });
    expect(generated.body.data.item.id).toMatch(/^rec_/);
    expect((await op(a, { operation: 'delete', table: 'records', key: { collection: 'notes', id: generated.body.data.item.id } })).body.data.deleted).toBe(1);
    expect((await op(a, { operation: 'get', table: 'records', key: { collection: 'notes', id: generated.body.data.item.id } })).body.data.item).toBeNull();
  });

  it('reads and writes agents through the public schema rules', async () => {
    const list = await op(a, { operation: 'query', table: 'agents', select: ['id', 'name'] });
    expect(list.body.data.items).toEqual([{ id: agentA, name: 'A bot' }]);
    const made = await op(a, { operation: 'put', table: 'agents', item: { name: 'Made by ops', model: 'local/x', temperature: 0.1 } });
    expect(made.status).toBe(200);
    expect(made.body.data.item).toMatchObject({ name: 'Made by ops', temperature: 0.1, maxTokens: 1024 });
    const bad = await op(a, { operation: 'put', table: 'agents', item: { name: 'x', model: 'local/x', temperature: 9 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'item.temperature', reason: 'must be between 0 and 2' });
    const upd = await op(a, { operation: 'update', table: 'agents', key: { id: made.body.data.item.id }, item: { description: 'patched' } });
    expect(upd.body.data.item).toMatchObject({ description: 'patched', temperature: 0.1, version: 2 });
    expect((await call(app, 'GET', `/v1/agents/${made.body.data.item.id}`, { key: a.apiKey })).body.data.description).toBe('patched');
    expect((await op(a, { operation: 'count', table: 'agents', where: { model: 'local/x' } })).body.data.count).toBe(2);
  });

  it('never reads or writes across tenants', async () => {
    // B's agent id, used with A's token, finds nothing and changes nothing.
    expect((await op(a, { operation: 'get', table: 'agents', key: { id: agentB } })).body.data.item).toBeNull();
    expect((await op(a, { operation: 'update', table: 'agents', key: { id: agentB }, item: { name: 'hijacked' } })).body.data).toMatchObject({ item: null, updated: false });
    expect((await op(a, { operation: 'delete', table: 'agents', key: { id: agentB } })).body.data.deleted).toBe(0);
    expect((await call(app, 'GET', `/v1/agents/${agentB}`, { key: b.apiKey })).body.data.name).toBe('B bot');
    // Same collection and id in both tenants: each sees only its own.
    expect((await op(b, { operation: 'get', table: 'records', key: { collection: 'orders', id: 'o00' } })).body.data.item.data.total).toBe(999);
    expect((await op(a, { operation: 'get', table: 'records', key: { collection: 'orders', id: 'o00' } })).body.data.item.data.total).toBe(0);
    expect((await op(b, { operation: 'count', table: 'records', where: { collection: 'orders' } })).body.data.count).toBe(1);
    await op(b, { operation: 'delete', table: 'records', key: { collection: 'orders', id: 'o00' } });
    expect((await op(a, { operation: 'get', table: 'records', key: { collection: 'orders', id: 'o00' } })).body.data.item).not.toBeNull();
  });

  const deep = (levels: number): unknown => (levels === 0 ? 'x' : { eq: deep(levels - 1) });
  const rejected: Array<[string, unknown, string]> = [
    ['another tenant in where', { operation: 'query', table: 'agents', where: { tenantId: 'someone-else' } }, 'where.tenantId'],
    ['another tenant in key', { operation: 'get', table: 'agents', key: { id: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w', tenantId: 'someone-else' } }, 'key.tenantId'],
    ['another tenant in item', { operation: 'put', table: 'records', item: { collection: 'x', data: {}, tenantId: 'someone-else' } }, 'item.tenantId'],
    ['another schema in where', { operation: 'query', table: 'agents', where: { schema: 'public' } }, 'where.schema'],
    ['a schema-qualified table of another schema', { operation: 'query', table: 'public.agents' }, 'table'],
    ['an unknown table', { operation: 'query', table: 'users' }, 'table'],
    ['an injected table name', { operation: 'query', table: 'agents; DROP TABLE agents' }, 'table'],
    ['a prototype key as table', { operation: 'query', table: '__proto__' }, 'table'],
    ['an unknown field', { operation: 'query', table: 'agents', where: { password: 'x' } }, 'where.password'],
    ['an injected field name', { operation: 'query', table: 'agents', where: { 'name) OR (1=1': 'x' } }, 'where.name) OR (1=1'],
    ['a prototype field', { operation: 'query', table: 'agents', where: { constructor: 'x' } }, 'where.constructor'],
    ['an unknown select field', { operation: 'query', table: 'agents', select: ['pk'] }, 'select[0]'],
    ['an unknown operator', { operation: 'query', table: 'agents', where: { name: { like: '%' } } }, 'where.name.like'],
    ['a wrong value type', { operation: 'query', table: 'agents', where: { temperature: { gt: 'hot' } } }, 'where.temperature.gt'],
    ['a nested where', { operation: 'query', table: 'agents', where: { name: deep(30) } }, 'where.name.eq'],
    ['too many conditions', { operation: 'query', table: 'records', where: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`data.f${i}`, i])) }, 'where'],
    ['an oversized in list', { operation: 'query', table: 'agents', where: { name: { in: Array.from({ length: 101 }, (_, i) => `n${i}`) } } }, 'where.name.in'],
    ['an oversized value', { operation: 'query', table: 'agents', where: { name: 'x'.repeat(2000) } }, 'where.name'],
    ['a key that reaches into another partition', { operation: 'query', table: 'documents', where: { knowledgeSourceId: 'ks_x#FILE' } }, 'where.knowledgeSourceId'],
    ['a raw DynamoDB key', { operation: 'get', table: 'agents', key: { pk: `T#${'x'}`, sk: 'y' } }, 'key.pk'],
    ['a write to a read-only field', { operation: 'update', table: 'agents', key: { id: 'agt_01jd8x2k3m4n5p6q7r8s9t0v1w' }, item: { createdAt: 'x' } }, 'item.createdAt'],
    ['a write to a read-only table', { operation: 'put', table: 'knowledge_collections', item: { name: 'x' } }, 'operation'],
    ['an unknown operation', { operation: 'scan', table: 'agents' }, 'operation'],
    ['a query without its partition', { operation: 'query', table: 'messages', where: { role: 'user' } }, 'where.agentId'],
  ];

  it.each(rejected)('answers 400 to %s', async (_name, body, field) => {
    const res = await op(a, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('INVALID_REQUEST');
    expect(res.body.error.details.field).toBe(field);
    expect(res.body.meta.requestId).toBeTruthy();
  });
});
