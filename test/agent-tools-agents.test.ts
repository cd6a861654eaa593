import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { storedAgent, type Agent } from '../shared/agents/agent-schema';
import type { Runtime } from '../shared/runtime';
import { chatStandIn } from './helpers/chat-stand-in';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { modelsWithStandIn, testLocal, testRt } from './helpers/runtime';

/**
 * Agents as tools: an agent asks another, which answers in a child session under its own
 * definition. An OpenAI-compatible stand-in at the wire plays every agent by its instructions
 * ("You are <name>"): with tools and no results yet it calls its first tool with the question;
 * otherwise it answers as itself, passing on what its tool said, citing [1] when it was given a
 * passage.
 */
const provider = chatStandIn((body) => {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const name = /You are (\w+)/.exec(system)?.[1] ?? 'nobody';
  const question = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
  const toolResult = body.messages.filter((m) => m.role === 'tool').at(-1)?.content;
  const tool = body.tools?.[0]?.function.name;
  if (tool && toolResult === undefined) return { call: { id: `call_${name}`, name: tool, arguments: { message: question } } };
  return { text: toolResult !== undefined ? `${name} relays: ${toolResult}` : system.includes('ship within two days') ? `${name}: orders ship within two days [1].` : `${name} answers "${question}"` };
});

let rt: Runtime;
let t: TestTenant;
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(rt), method, path, { key: t.apiKey, body });
const agentNamed = async (name: string, extra: Record<string, unknown> = {}) => {
  const created = await api('POST', '/v1/agents', { name, model: 'openai/gpt-4o', instructions: `You are ${name}.`, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data.id as string;
};
const asks = (agentId: string, name = 'ask') => ({ type: 'agent', name, description: `Asks another agent`, agent: agentId });

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  rt = { ...testRt, models: modelsWithStandIn(provider) };
  t = await newTenant();
});
afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

describe('an agent as a tool', () => {
  it('runs a three-agent chain: each answers in a child session, usage by agent, one trace tree, sources carried up', async () => {
    const ks = await api('POST', '/v1/knowledge-sources', { name: 'kb', type: 'file-collection', files: [{ path: 'shipping.md', content: '# Shipping\n\nOrders ship within two days of payment.' }] });
    await api('POST', `/v1/knowledge-sources/${ks.body.data.id}/connect`, {});
    await testLocal.ingestion!.drain();
    const data = await agentNamed('Data', { capabilities: ['chat', 'document-search'], knowledgeSourceIds: [ks.body.data.id] });
    const research = await agentNamed('Research', { tools: [asks(data, 'ask_data')] });
    const front = await agentNamed('Front', { tools: [asks(research, 'ask_research')] });

    const turn = await api('POST', `/v1/agents/${front}/converse`, { message: 'When do orders ship?', context: { userId: 'u-1' } });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    const reply = turn.body.data;
    expect(reply.reply).toBe('Front relays: Research relays: Data: orders ship within two days [1].');
    // The passage Data cited is the caller's source too, with its knowledge source and document.
    expect(reply.sources).toHaveLength(1);
    expect(reply.sources[0]).toMatchObject({ knowledgeSourceId: ks.body.data.id, path: 'shipping.md', documentId: expect.any(String) });
    const researchCall = reply.toolCalls[0];
    expect(researchCall).toMatchObject({ tool: 'ask_research', child: { agentId: research, sessionId: expect.stringMatching(/^ses_/) } });

    // Each child session is linked to the session of the agent that asked, for the same end user.
    const researchSessions = (await api('GET', `/v1/agents/${research}/sessions`)).body.data;
    expect(researchSessions).toEqual([expect.objectContaining({ sessionId: researchCall.child.sessionId, userId: 'u-1', parentAgentId: front, parentSessionId: reply.sessionId })]);
    const researchTurn = (await api('GET', `/v1/agents/${research}/sessions/${researchCall.child.sessionId}/messages`)).body.data;
    const dataCall = researchTurn[1].toolCalls[0];
    expect(dataCall).toMatchObject({ tool: 'ask_data', child: { agentId: data } });
    const dataSessions = (await api('GET', `/v1/agents/${data}/sessions`)).body.data;
    expect(dataSessions[0]).toMatchObject({ parentAgentId: research, parentSessionId: researchCall.child.sessionId });
    expect((await api('GET', `/v1/agents/${front}/sessions`)).body.data[0].parentSessionId).toBeUndefined();

    // Usage is each agent's own: two model calls for the two that asked, one for Data.
    const byAgent = (await api('GET', '/v1/usage?groupBy=agent')).body.data.rows as Array<{ group: string; inputTokens: number; toolCalls: number; requests: number }>;
    const usageOf = (id: string) => byAgent.find((r) => r.group === id);
    expect(usageOf(front)).toMatchObject({ inputTokens: 20, toolCalls: 1 });
    expect(usageOf(research)).toMatchObject({ inputTokens: 20, toolCalls: 1 });
    expect(usageOf(data)).toMatchObject({ inputTokens: 10, toolCalls: 0 });

    // One trace: each callee's model calls are below the tool span of the agent that asked it.
    const spans = (await api('GET', `/v1/traces/${turn.headers.get('x-request-id')}`)).body.data.spans as Array<{ spanId: string; parentSpanId?: string; name: string; attributes: Record<string, unknown> }>;
    const parentOf = (s: { parentSpanId?: string }) => spans.find((p) => p.spanId === s.parentSpanId);
    const ancestors = (s: { parentSpanId?: string }): string[] => {
      const p = parentOf(s);
      return p ? [p.name, ...ancestors(p)] : [];
    };
    const chatsOf = (agentId: string) => spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'chat' && s.attributes['cairn.agent.id'] === agentId);
    expect(chatsOf(front)).toHaveLength(2);
    expect(chatsOf(data)).toHaveLength(1);
    expect(ancestors(chatsOf(data)[0]!).slice(0, 3)).toEqual(['execute_tool ask_data', 'execute_tool ask_research', 'POST /v1/agents/:agentId/converse']);
    for (const chat of chatsOf(research)) expect(ancestors(chat)[0]).toBe('execute_tool ask_research');
  });

  it('pauses the caller’s turn while the asked agent waits for a person, and goes on with the decision', async () => {
    const refunds = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"refunded":true}'));
    await new Promise<void>((resolve) => refunds.listen(0, '127.0.0.1', resolve));
    const refunder = await agentNamed('Refunder', {
      tools: [{ type: 'http', name: 'refund_order', description: 'Refunds an order', method: 'POST', requireApproval: true, url: `http://localhost:${(refunds.address() as AddressInfo).port}/refunds`, parameters: { type: 'object', properties: { message: { type: 'string' } } } }],
    });
    const front = await agentNamed('Desk', { tools: [asks(refunder, 'ask_refunds')] });
    const waiting = await api('POST', `/v1/agents/${front}/converse`, { message: 'Refund order A17' });
    expect(waiting.body.data.status, JSON.stringify(waiting.body.data)).toBe('requires_action');
    const [pending] = waiting.body.data.pendingToolCalls;
    expect(pending).toMatchObject({ tool: 'ask_refunds', asks: expect.stringContaining(`The agent ${refunder} waits for a person to approve refund_order`) });
    // Approving the caller's call approves what the asked agent waits on; its turn goes on, then the caller's.
    const resumed = await api('POST', `/v1/agents/${front}/converse`, { context: { sessionId: waiting.body.data.sessionId }, toolApprovals: [{ id: pending.id, approved: true }] });
    expect(resumed.body.data.status, JSON.stringify(resumed.body.data)).toBe('completed');
    expect(resumed.body.data.reply).toBe('Desk relays: Refunder relays: {"refunded":true}');
    refunds.close();
  });

  it('refuses on write an agent that does not exist, a loop, and a chain deeper than three', async () => {
    const missing = await api('POST', '/v1/agents', { name: 'Lost', model: 'openai/gpt-4o', tools: [asks('agt_01jd8x2k3m4n5p6q7r8s9t0v1w')] });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe('tools[0].agent');
    const e = await agentNamed('E');
    const noAlias = await api('POST', '/v1/agents', { name: 'Lost', model: 'openai/gpt-4o', tools: [asks(`${e}:live`)] });
    expect(noAlias.body.error.details.field).toBe('tools[0].agent');
    const stranger = await newTenant();
    const across = await call(createLocalApp(rt), 'POST', '/v1/agents', { key: stranger.apiKey, body: { name: 'Thief', model: 'openai/gpt-4o', tools: [asks(e)] } });
    expect(across.body.error.details.field).toBe('tools[0].agent');

    const d = await agentNamed('D', { tools: [asks(e)] });
    const c = await agentNamed('C', { tools: [asks(d)] });
    const b = await agentNamed('B', { tools: [asks(c)] });
    // B → C → D → E is three below B; A would put four below itself.
    const tooDeep = await api('POST', '/v1/agents', { name: 'A', model: 'openai/gpt-4o', tools: [{ type: 'http', name: 'x', description: 'x', url: 'https://example.com' }, asks(b)] });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.body.error.details.field).toBe('tools[1].agent');
    expect(tooDeep.body.error.message).toContain('at most 3');

    // E asking B would close the loop B → C → D → E → B.
    const loop = await api('PUT', `/v1/agents/${e}`, { name: 'E', model: 'openai/gpt-4o', tools: [asks(b)] });
    expect(loop.status).toBe(400);
    expect(loop.body.error.details.field).toBe('tools[0].agent');
    expect(loop.body.error.message).toContain(`${e} → ${b} → ${c} → ${d} → ${e}`);
    const self = await api('PUT', `/v1/agents/${e}`, { name: 'E', model: 'openai/gpt-4o', tools: [asks(e)] });
    expect(self.status).toBe(400);
    // Nothing was stored by the refused writes.
    expect((await api('GET', `/v1/agents/${e}`)).body.data.tools).toEqual([]);
  });

  it('stops a chain that became too deep or loops at run time with a tool error, never a loop', async () => {
    const b = await agentNamed('Bee');
    const a = await agentNamed('Ay', { tools: [asks(b)] });
    // Written around the checks (as a release changed since would be): B now asks A.
    await rt.store.records.table('AGENT', storedAgent).update(t.scope, b, (current) => ({ ...current, tools: [{ ...asks(a), requireApproval: false }] as Agent['tools'] }));
    const turn = await api('POST', `/v1/agents/${a}/converse`, { message: 'Hello?' });
    expect(turn.status, JSON.stringify(turn.body)).toBe(200);
    const inner = (await api('GET', `/v1/agents/${b}/sessions/${turn.body.data.toolCalls[0].child.sessionId}/messages`)).body.data[1];
    expect(inner.toolCalls[0].error).toBe(`Asking ${a} would make a loop: ${a} → ${b} → ${a}`);
  });
});
