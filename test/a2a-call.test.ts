import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { call } from './helpers/http';
import { testLocal, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Cairn calling an agent over A2A: a second Cairn server on its own socket publishes a billing
 * agent (another tenant, as another team or company would run it); an agent of this tenant asks it
 * through an `a2a` tool, and so does a workflow `tool` step. Every request goes through the
 * outbound guard, with the tool's sealed key.
 */
const app = createLocalApp(testRt);
let remote: ServerType;
let remoteBase = '';
let them: TestTenant;
let us: TestTenant;
let billing = '';
let refunder = '';
/** The remote agent's refund service. */
const refunds = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ refunded: true, amount: 42 })));

const a2aTool = (agentId: string, key?: string) => ({
  type: 'a2a',
  name: 'ask_billing',
  description: 'Asks the billing team’s agent about refunds and invoices',
  card: `${remoteBase}/a2a/${agentId}/.well-known/agent-card.json`,
  ...(key ? { auth: { type: 'bearer', token: key } } : {}),
});

beforeAll(async () => {
  await new Promise<void>((resolve) => refunds.listen(0, '127.0.0.1', resolve));
  remote = serve({ fetch: createLocalApp(testRt).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => remote.once('listening', () => resolve()));
  // By the name tests may reach (TOOL_ALLOWED_HOSTS=localhost): any other private address is refused.
  remoteBase = `http://localhost:${(remote.address() as AddressInfo).port}`;
  [them, us] = await Promise.all([newTenant(), newTenant()]);
  const ks = await call(app, 'POST', '/v1/knowledge-sources', { key: them.apiKey, body: { name: 'Billing handbook', type: 'file-collection', files: [{ path: 'refunds.md', content: '# Refunds\n\nRefunds take 5 business days to reach the original card.' }] } });
  await call(app, 'POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, { key: them.apiKey, body: {} });
  await testLocal.ingestion!.drain();
  billing = (await call(app, 'POST', '/v1/agents', { key: them.apiKey, body: { name: 'Billing', model: 'local/extractive', capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ks.body.data.id], a2a: { enabled: true } } })).body.data.id;
  refunder = (
    await call(app, 'POST', '/v1/agents', {
      key: them.apiKey,
      body: { name: 'Refunder', model: 'local/extractive', a2a: { enabled: true }, tools: [{ type: 'http', name: 'refund_order', description: 'Refunds an order', requireApproval: true, method: 'POST', url: `http://localhost:${(refunds.address() as AddressInfo).port}/refunds`, parameters: { type: 'object', properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$' } }, required: ['orderId'] } }] },
    })
  ).body.data.id;
});
afterAll(() => {
  remote.close();
  refunds.close();
});

describe('calling A2A agents', () => {
  it('asks a remote agent from a turn: its card read, the task streamed to its end, the answer as the tool result', async () => {
    const front = await call(app, 'POST', '/v1/agents', { key: us.apiKey, body: { name: 'Front desk', model: 'local/extractive', tools: [a2aTool(billing, them.apiKey)] } });
    expect(front.status, JSON.stringify(front.body)).toBe(201);
    // The key is sealed: never shown.
    expect(front.body.data.tools[0].auth).toEqual({ type: 'bearer', configured: true });
    const turn = await call(app, 'POST', `/v1/agents/${front.body.data.id}/converse`, { key: us.apiKey, body: { message: 'How long do refunds take?' } });
    expect(turn.status).toBe(200);
    expect(turn.body.data.toolCalls[0]).toMatchObject({ tool: 'ask_billing', arguments: { message: 'How long do refunds take?' } });
    expect(turn.body.data.toolCalls[0].result).toContain('5 business days');
    expect(turn.body.data.reply).toContain('5 business days');
    // The remote side ran it as a task of its own tenant: a run of the billing agent.
    const runs = (await call(app, 'GET', `/v1/agents/${billing}/runs`, { key: them.apiKey })).body.data;
    expect(runs[0]).toMatchObject({ status: 'completed', message: 'How long do refunds take?' });
  });

  it('serves workflow tool steps too', async () => {
    const workflow = await call(app, 'POST', '/v1/workflows', { key: us.apiKey, body: { name: 'Ask billing', steps: [{ id: 'ask', type: 'tool', config: { tool: a2aTool(billing, them.apiKey), arguments: { message: '{{user_message}}' } } }] } });
    expect(workflow.status, JSON.stringify(workflow.body)).toBe(201);
    const started = await call(app, 'POST', `/v1/workflows/${workflow.body.data.id}/execute`, { key: us.apiKey, body: { input: 'How long do refunds take?' } });
    expect(started.status, JSON.stringify(started.body)).toBeLessThan(300);
    await testLocal.workflowSteps!.drain();
    const run = (await call(app, 'GET', `/v1/workflows/${workflow.body.data.id}/executions/${started.body.data.id}`, { key: us.apiKey })).body.data;
    expect(run.status, JSON.stringify(run)).toBe('succeeded');
    expect(JSON.stringify(run.output)).toContain('5 business days');
  });

  it('pauses the caller’s turn when the remote task asks for input, and answers the task with the person’s decision', async () => {
    const desk = (await call(app, 'POST', '/v1/agents', { key: us.apiKey, body: { name: 'Desk', model: 'local/extractive', tools: [{ ...a2aTool(refunder, them.apiKey), description: 'Asks the billing team’s agent to refund an order' }] } })).body.data.id;
    const waiting = await call(app, 'POST', `/v1/agents/${desk}/converse`, { key: us.apiKey, body: { message: 'Please refund order A17' } });
    expect(waiting.body.data.status, JSON.stringify(waiting.body.data)).toBe('requires_action');
    const [pending] = waiting.body.data.pendingToolCalls;
    expect(pending).toMatchObject({ tool: 'ask_billing', arguments: { message: 'Please refund order A17' } });
    expect(pending.asks).toMatch(/asks for input \(task run_[^)]+\): Waiting for a person to approve: refund_order/);
    const resumed = await call(app, 'POST', `/v1/agents/${desk}/converse`, { key: us.apiKey, body: { context: { sessionId: waiting.body.data.sessionId }, toolApprovals: [{ id: pending.id, approved: true }] } });
    expect(resumed.body.data.status, JSON.stringify(resumed.body.data)).toBe('completed');
    expect(resumed.body.data.toolCalls.at(-1).result).toContain('42');
    // The remote task went on with the approval and ended.
    const runs = (await call(app, 'GET', `/v1/agents/${refunder}/runs`, { key: them.apiKey })).body.data;
    expect(runs[0]).toMatchObject({ status: 'completed' });
  });

  it('says what went wrong: no key, a remote asking for input, a card on the server’s own services', async () => {
    const keyless = (await call(app, 'POST', '/v1/agents', { key: us.apiKey, body: { name: 'Keyless', model: 'local/extractive', tools: [a2aTool(billing)] } })).body.data.id;
    const refused = await call(app, 'POST', `/v1/agents/${keyless}/converse`, { key: us.apiKey, body: { message: 'How long do refunds take?' } });
    expect(refused.body.data.toolCalls[0].error, JSON.stringify(refused.body.data)).toMatch(/401|API key/);

    // A remote task that stops for input (its own approval) is the caller's error, saying what it asks.
    const asking = await call(app, 'POST', '/v1/workflows', { key: us.apiKey, body: { name: 'Refund', steps: [{ id: 'ask', type: 'tool', config: { tool: a2aTool(refunder, them.apiKey), arguments: { message: 'Please refund order A17' } } }] } });
    const started = await call(app, 'POST', `/v1/workflows/${asking.body.data.id}/execute`, { key: us.apiKey, body: { input: 'go' } });
    await testLocal.workflowSteps!.drain();
    const execution = (await call(app, 'GET', `/v1/workflows/${asking.body.data.id}/executions/${started.body.data.id}`, { key: us.apiKey })).body.data;
    expect(execution.status).toBe('failed');
    expect(execution.error.message).toMatch(/asks for input \(task run_[^)]+\): Waiting for a person to approve: refund_order/);

    const store = new URL(process.env.DYNAMODB_ENDPOINT!);
    const inward = (await call(app, 'POST', '/v1/agents', { key: us.apiKey, body: { name: 'Inward', model: 'local/extractive', tools: [{ ...a2aTool(billing, them.apiKey), card: `http://localhost:${store.port}/.well-known/agent-card.json` }] } })).body.data.id;
    const blocked = await call(app, 'POST', `/v1/agents/${inward}/converse`, { key: us.apiKey, body: { message: 'How long do refunds take?' } });
    expect(blocked.body.data.toolCalls[0].error).toContain('own services');
  });
});
