import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { modelsWithStandIn, testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';

/**
 * Tool-call policy: rules over a call's arguments and context decide whether it runs, waits for a
 * person or is denied. An OpenAI stand-in calls the tool named in the message with the amount in
 * it, then answers with what the tool round said; a shop stand-in records the calls that reached it.
 */
const shopCalls: string[] = [];
const shop = createServer((req, res) => {
  shopCalls.push(`${req.method} ${req.url}`);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.url === '/lookup' ? { customer: 'cust@example.com' } : { ok: true }));
});
const providerBodies: string[] = [];
const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    providerBodies.push(raw);
    const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null }> };
    const tool = body.messages.filter((m) => m.role === 'tool').at(-1);
    const said = body.messages.filter((m) => m.role === 'user').at(-1)!.content!;
    const [, name, amount] = /^(\w+) (\d+)/.exec(said) ?? [];
    const message = tool
      ? { role: 'assistant', content: `Tool said: ${tool.content}` }
      : { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify({ amount: Number(amount) }) } }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: tool ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
    );
  });
});

let rt: Runtime;
let t: TestTenant;
let shopUrl = '';
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(rt), method, path, { key: t.apiKey, ...(body === undefined ? {} : { body }) });
const tool = (name: string, policy: unknown) => ({ type: 'http', name, description: `${name} an order`, method: 'POST', url: `${shopUrl}/${name}`, parameters: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] }, policy });

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://localhost:${(shop.address() as AddressInfo).port}`;
  rt = { ...testRt, models: modelsWithStandIn(provider) };
  t = await newTenant();
});
afterAll(async () => {
  await new Promise<void>((resolve) => provider.close(() => resolve()));
  await new Promise<void>((resolve) => shop.close(() => resolve()));
});

describe('tool-call policy', () => {
  it('lets small refunds through, holds larger ones for a person, and denies the largest without calling', async () => {
    const agentId = (
      await api('POST', '/v1/agents', {
        name: 'Refunds',
        model: 'openai/gpt-4o',
        tools: [
          tool('refund', [
            { when: 'arguments.amount > 1000', action: 'deny', reason: 'Refunds over 1,000 are refused' },
            { when: 'arguments.amount > 100', action: 'require_approval', reason: 'Refunds over 100 need a person' },
          ]),
        ],
      })
    ).body.data.id;
    const before = shopCalls.length;
    const small = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'refund 50' })).body.data;
    expect(small).toMatchObject({ status: 'completed', reply: 'Tool said: {"ok":true}' });
    expect(shopCalls.length).toBe(before + 1);

    const held = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'refund 500' })).body.data;
    expect(held).toMatchObject({ status: 'requires_action', pendingToolCalls: [{ tool: 'refund', arguments: { amount: 500 } }] });
    expect(shopCalls.length).toBe(before + 1);
    const approved = (await api('POST', `/v1/agents/${agentId}/converse`, { toolApprovals: [{ id: 'call_1', approved: true }], context: { sessionId: held.sessionId } })).body.data;
    expect(approved.status).toBe('completed');
    expect(shopCalls.length).toBe(before + 2);

    const denied = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'refund 5000' })).body.data;
    expect(denied.status).toBe('completed');
    expect(denied.reply).toBe("Tool said: Error: This call was denied by the tool's policy: Refunds over 1,000 are refused");
    expect(denied.toolCalls[0]).toMatchObject({ tool: 'refund', error: "This call was denied by the tool's policy: Refunds over 1,000 are refused" });
    expect(shopCalls.length).toBe(before + 2);
  });

  it('judges on the end user: only user U may close an account', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Accounts', model: 'openai/gpt-4o', tools: [tool('close', [{ when: "user.id != 'U'", action: 'deny', reason: 'Only U may close accounts' }])] })).body.data.id;
    const before = shopCalls.length;
    const byU = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'close 1', context: { userId: 'U' } })).body.data;
    expect(byU.toolCalls[0].error).toBeUndefined();
    const byV = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'close 1', context: { userId: 'V' } })).body.data;
    expect(byV.toolCalls[0].error).toContain('Only U may close accounts');
    const anonymous = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'close 1' })).body.data;
    expect(anonymous.toolCalls[0].error).toContain('denied');
    expect(shopCalls.length).toBe(before + 1);
  });

  it('refuses a rule that does not parse, naming it', async () => {
    const bad = await api('POST', '/v1/agents', { name: 'Bad', model: 'openai/gpt-4o', tools: [tool('refund', [{ when: 'arguments.amount >', action: 'deny' }])] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('tools[0].policy[0].when');
  });

  it('refuses a rule that reads a field no call has, naming the rule and the field: a deny that can never match is not written', async () => {
    for (const [when, field] of [
      ['amount > 1000', 'amount'],
      ['arguments.amonut > 1000', 'arguments.amonut'],
      ['user.email = "a@b.c"', 'user.email'],
      ['arguments.amount > 10 and $exists(customer)', 'customer'],
      ['tool.name = "refund"', 'tool.name'],
    ]) {
      const bad = await api('POST', '/v1/agents', { name: 'Bad', model: 'openai/gpt-4o', tools: [tool('lookup', undefined), tool('refund', [{ when: 'tool = "refund"', action: 'allow' }, { when, action: 'deny' }])] });
      expect(bad.status, when).toBe(400);
      expect(bad.body.error.details.field, when).toBe('tools[1].policy[1].when');
      expect(bad.body.error.details.reason, when).toContain(`reads ${field}`);
    }
    const hinted = await api('POST', '/v1/agents', { name: 'Bad', model: 'openai/gpt-4o', tools: [tool('refund', [{ when: 'amount > 1000', action: 'deny' }])] });
    expect(hinted.body.error.details.reason).toContain('the argument is arguments.amount');
    // What a call has is accepted, filters and variables included.
    const good = await api('POST', '/v1/agents', {
      name: 'Good',
      model: 'openai/gpt-4o',
      tools: [tool('refund', [{ when: '$.arguments.amount > 1000 and user.id != null and tenant.id and agent.version != "draft" and tool = "refund" and ($a := arguments.amount; $a > 5)', action: 'deny' }])],
    });
    expect(good.status, JSON.stringify(good.body)).toBe(201);
    // A workflow step's call has no agent, and an http step's arguments are method, url and body.
    for (const [policy, field] of [
      [[{ when: 'arguments.amount > 100', action: 'deny' }], 'steps[0].config.policy[0].when'],
      [[{ when: 'agent.id = "x"', action: 'deny' }], 'steps[0].config.policy[0].when'],
    ] as const) {
      const wf = await api('POST', '/v1/workflows', { name: 'Refund', steps: [{ id: 'pay', type: 'http', config: { method: 'POST', url: `${shopUrl}/refund`, body: {}, policy } }] });
      expect(wf.status, policy[0].when).toBe(400);
      expect(wf.body.error.details.field).toBe(field);
    }
    const toolStep = await api('POST', '/v1/workflows', { name: 'Refund', steps: [{ id: 'pay', type: 'tool', config: { tool: tool('refund', [{ when: 'agent.id = "x"', action: 'deny' }]) } }] });
    expect(toolStep.status).toBe(400);
    expect(toolStep.body.error.details.field).toBe('steps[0].config.tool.policy[0].when');
  });

  it('fails a workflow http step its policy denies, for good, naming the rule', async () => {
    const wf = await api('POST', '/v1/workflows', {
      name: 'Refund',
      steps: [{ id: 'pay', type: 'http', config: { method: 'POST', url: `${shopUrl}/refund`, body: { amount: '{{parameters.amount}}' }, policy: [{ when: 'arguments.body.amount > 100', action: 'deny', reason: 'Over 100 goes to a person' }] } }],
    });
    expect(wf.status).toBe(201);
    const before = shopCalls.length;
    const small = (await api('POST', `/v1/workflows/${wf.body.data.id}/execute`, { input: 'refund', parameters: { amount: 50 }, mode: 'sync' })).body.data;
    expect(small.status).toBe('succeeded');
    const large = (await api('POST', `/v1/workflows/${wf.body.data.id}/execute`, { input: 'refund', parameters: { amount: 500 }, mode: 'sync' })).body.data;
    expect(large.status).toBe('failed');
    expect(large.steps[0].error.message).toBe('The call of http was denied by policy rule 0: Over 100 goes to a person');
    // Not retried: one attempt.
    expect(large.steps[0].attempt).toBe(1);
    expect(shopCalls.length).toBe(before + 1);
  });

  it('tokenizes what a tool returns before the model sees it, and restores it for the person', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Lookup', model: 'openai/gpt-4o', guardrails: { pii: { entities: ['email'], action: 'tokenize' } }, tools: [tool('lookup', undefined)] })).body.data.id;
    const before = providerBodies.length;
    const turn = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'lookup 7' })).body.data;
    const sent = providerBodies.slice(before).join('\n');
    expect(sent).not.toContain('cust@example.com');
    expect(sent).toContain('<EMAIL_1>');
    expect(turn.reply).toBe('Tool said: {"customer":"cust@example.com"}');
    expect(turn.guardrails).toEqual([{ type: 'pii', entity: 'email', action: 'tokenize', where: 'tool_result', enforced: true }]);
  });

  it('keeps a turn waiting for approval as the session is: its values tokenized, acted on once approved', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Held', model: 'openai/gpt-4o', guardrails: { pii: { entities: ['email'], action: 'tokenize' } }, tools: [{ ...tool('refund', undefined), requireApproval: true }] })).body.data.id;
    const held = (await api('POST', `/v1/agents/${agentId}/converse`, { message: 'refund 300 to ana@example.com' })).body.data;
    expect(held.status).toBe('requires_action');
    const paused = await rt.store.pausedTurns.peek(t.scope, agentId, held.sessionId);
    expect(JSON.stringify(paused)).not.toContain('ana@example.com');
    expect(JSON.stringify(paused)).toContain('<EMAIL_1>');
    const before = providerBodies.length;
    const done = (await api('POST', `/v1/agents/${agentId}/converse`, { toolApprovals: [{ id: 'call_1', approved: true }], context: { sessionId: held.sessionId } })).body.data;
    expect(done.status).toBe('completed');
    expect(providerBodies.slice(before).join('\n')).not.toContain('ana@example.com');
    // The person sees their question as they asked it.
    const shown = (await api('GET', `/v1/agents/${agentId}/sessions/${held.sessionId}/messages`)).body.data;
    expect(shown[0].content).toBe('refund 300 to ana@example.com');
  });
});
