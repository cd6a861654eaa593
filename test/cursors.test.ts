import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { platformTestSecrets, provision, pcall, type ProvisionedTenant } from './helpers/platform';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';
import { storedAgent } from '../shared/agents/agent-schema';

const app = createLocalApp(testRt);
/** The forged cursor that used to reach DynamoDB with an empty sort key: base64url of {"sk":""}. */
const FORGED = ['eyJzayI6IiJ9', 'not-a-cursor', 'a.b', 'YWdlbnQ.AAAAAAAAAAAAAAAAAAAAAA', '....'];

describe('pagination cursors', () => {
  let a: TestTenant;
  let b: TestTenant;
  let platform: ProvisionedTenant;
  let workflowId: string;
  let agentId: string;
  let cursorOfA: string;
  beforeAll(async () => {
    [a, b] = await Promise.all([newTenant(), newTenant()]);
    platform = await provision(app, platformTestSecrets().adminToken);
    for (let i = 0; i < 3; i++) agentId = (await call(app, 'POST', '/v1/agents', { key: a.apiKey, body: { name: `a${i}`, model: 'gpt-4' } })).body.data.id;
    await call(app, 'POST', '/v1/agents', { key: b.apiKey, body: { name: 'b', model: 'gpt-4' } });
    workflowId = (await call(app, 'POST', '/v1/workflows', { key: a.apiKey, body: { name: 'w', steps: [{ type: 'generation', model: 'gpt-4', prompt: 'hi' }] } })).body.data.id;
    cursorOfA = (await call(app, 'GET', '/v1/agents?limit=1', { key: a.apiKey })).body.meta.pagination.nextCursor;
  });
  afterEach(() => vi.restoreAllMocks());

  it('continues a list with the cursor it handed out', async () => {
    const next = await call(app, 'GET', `/v1/agents?limit=1&cursor=${cursorOfA}`, { key: a.apiKey });
    expect(next.status).toBe(200);
    expect(next.body.data).toHaveLength(1);
  });

  it('answers 400 naming the cursor for forged ones on every list route', async () => {
    const lists: Array<[string, (cursor: string) => ReturnType<typeof call>]> = [
      ['/v1/agents', (c) => call(app, 'GET', `/v1/agents?cursor=${c}`, { key: a.apiKey })],
      ['/v1/knowledge-sources', (c) => call(app, 'GET', `/v1/knowledge-sources?cursor=${c}`, { key: a.apiKey })],
      ['/v1/workflows', (c) => call(app, 'GET', `/v1/workflows?cursor=${c}`, { key: a.apiKey })],
      ['messages', (c) => call(app, 'GET', `/v1/agents/${agentId}/sessions/s1/messages?cursor=${c}`, { key: a.apiKey })],
      ['executions', (c) => call(app, 'GET', `/v1/workflows/${workflowId}/executions?cursor=${c}`, { key: a.apiKey })],
      ['/platform/agent', (c) => pcall(app, 'GET', `/platform/agent?cursor=${c}`, platform.accessToken)],
      ['/platform/workflow/definitions', (c) => pcall(app, 'GET', `/platform/workflow/definitions?cursor=${c}`, platform.accessToken)],
      ['/platform/knowledge/collections', (c) => pcall(app, 'GET', `/platform/knowledge/collections?cursor=${c}`, platform.accessToken)],
      ['db/ops', (c) => pcall(app, 'POST', '/platform/db/ops', platform.accessToken, { body: { operation: 'query', table: 'agents', cursor: c } })],
    ];
    for (const [name, list] of lists) {
      for (const cursor of FORGED) {
        const res = await list(cursor);
        expect(res.status, `${name} ${cursor}`).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'cursor' } });
      }
    }
  });

  it('refuses another tenant’s cursor and another list’s, without reading', async () => {
    const foreign = await call(app, 'GET', `/v1/agents?cursor=${cursorOfA}`, { key: b.apiKey });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.details.field).toBe('cursor');
    const otherList = await call(app, 'GET', `/v1/workflows?cursor=${cursorOfA}`, { key: a.apiKey });
    expect(otherList.status).toBe(400);
    // The store refuses before it sends anything.
    const send = vi.spyOn(testRt.store.db.client, 'send');
    await expect(testRt.store.records.table('AGENT', storedAgent).list(b.scope, { limit: 5, cursor: cursorOfA })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    await expect(testRt.store.records.table('AGENT', storedAgent).list(a.scope, { limit: 5, cursor: 'eyJzayI6IiJ9' })).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    expect(send).not.toHaveBeenCalled();
  });
});
