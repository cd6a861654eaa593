import { z } from 'zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { BaseRecord } from '../shared/store/records';
import { call } from './helpers/http';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * The store parses what it reads through each entity's declared shape: an item written under
 * older rules still reads (missing settings take their defaults), an item without the shape is a
 * 500 at the read, never a value some caller trusts.
 */
describe('the typed store boundary', () => {
  const app = createLocalApp(testRt);
  let t: TestTenant;
  beforeAll(async () => {
    t = await newTenant();
  });
  // A table that takes any item: writes what an older release (or a broken writer) left behind.
  const anyAgents = testRt.store.records.table('AGENT', z.custom<BaseRecord & Record<string, unknown>>(() => true));
  const putAgent = (item: BaseRecord & Record<string, unknown>) => anyAgents.create(t.scope, item);
  const base = { createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', version: 1, name: 'Old', model: 'local/extractive', temperature: 0.2, maxTokens: 256, capabilities: ['chat'] };

  it('reads an agent stored before its newer settings existed, with their defaults', async () => {
    await putAgent({ ...base, id: 'agt_01kamold0000000000000000aa' });
    const res = await call(app, 'GET', '/v1/agents/agt_01kamold0000000000000000aa', { key: t.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: 'agt_01kamold0000000000000000aa', name: 'Old', description: '', maxToolSteps: 5, knowledgeSourceIds: [], tools: [] });
    const turn = await call(app, 'POST', '/v1/agents/agt_01kamold0000000000000000aa/converse', { key: t.apiKey, body: { message: 'hello' } });
    expect(turn.status).toBe(200);
  });

  it('answers 500 for an agent item without its shape, naming nothing of it, and lists no half-read agents', async () => {
    await putAgent({ ...base, id: 'agt_01kamold0000000000000000bb', model: 987654321, capabilities: 'chat' });
    const res = await call(app, 'GET', '/v1/agents/agt_01kamold0000000000000000bb', { key: t.apiKey });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('INTERNAL_ERROR');
    expect(JSON.stringify(res.body)).not.toContain('987654321');
    expect(JSON.stringify(res.body)).not.toContain('capabilities');
    const list = await call(app, 'GET', '/v1/agents', { key: t.apiKey });
    expect(list.status).toBe(500);
  });
});
