import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalApp } from '../local/local-app';
import { localEngine } from '../shared/models/local-engine';
import type { Runtime } from '../shared/runtime';
import { call } from './helpers/http';
import { newTenant, type TestTenant } from './helpers/tenant';
import { modelsWithStandIn, testRt } from './helpers/runtime';

/**
 * An agent's `code` tool: the model writes a script, Cairn runs it in the sandbox (local mode's
 * worker threads) and gives back its result and logs, or where it failed. An OpenAI-compatible
 * stand-in at the wire writes the scripts it is told to, and records the tool results it is sent;
 * the built-in engine uses the tool for arithmetic the message asks.
 */
const sent: Array<Array<{ role: string; content: string | null }>> = [];
const provider = createServer((req, res) => {
  let raw = '';
  req.on('data', (c: Buffer) => (raw += c.toString()));
  req.on('end', () => {
    const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null }> };
    sent.push(body.messages);
    const script = /script: (.*)$/s.exec(body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '')?.[1];
    const done = body.messages.some((m) => m.role === 'tool');
    const message =
      script && !done
        ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_code', arguments: JSON.stringify({ source: script }) } }] }
        : { role: 'assistant', content: `Tool said: ${body.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? 'nothing'}` };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } }),
    );
  });
});

let rt: Runtime;
let t: TestTenant;
const api = (method: string, path: string, body?: unknown) => call(createLocalApp(rt), method, path, { key: t.apiKey, body });

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  rt = { ...testRt, models: modelsWithStandIn(provider) };
  t = await newTenant();
});
afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

describe('the code tool', () => {
  it('runs the model’s script and gives back its result and logs, or where it failed', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Coder', model: 'openai/gpt-4o', tools: [{ type: 'code' }] })).body.data.id as string;
    const agent = (await api('GET', `/v1/agents/${agentId}`)).body.data;
    expect(agent.tools[0]).toMatchObject({ type: 'code', name: 'run_code', language: 'javascript' });

    const ok = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'script: const items = [3, 4, 5];\nconsole.log("n", items.length);\nreturn items.map((n) => n * n);' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.toolCalls[0]).toMatchObject({ tool: 'run_code', result: '{"result":[9,16,25],"logs":["n 3"]}' });
    expect(ok.body.data.reply).toBe('Tool said: {"result":[9,16,25],"logs":["n 3"]}');

    const thrown = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'script: const a = 1;\nthrow new RangeError("too big");' });
    expect(thrown.body.data.toolCalls[0].error).toBe('RangeError: too big (line 2, column 21)');
    const escaped = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'script: return this.constructor.constructor("return process")().env' });
    expect(escaped.body.data.toolCalls[0].error).toMatch(/ReferenceError: 'process' is not defined/);
  });

  it('is held to the agent’s tool policy like any tool', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Careful', model: 'openai/gpt-4o', tools: [{ type: 'code', policy: [{ when: '$contains(arguments.source, "while")', action: 'deny', reason: 'no loops here' }] }] })).body.data.id as string;
    const denied = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'script: while (true) {}' });
    expect(denied.body.data.toolCalls[0].error).toContain('no loops here');
    const bad = await api('POST', '/v1/agents', { name: 'Wrong', model: 'openai/gpt-4o', tools: [{ type: 'code', policy: [{ when: 'arguments.script = "x"', action: 'deny' }] }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('tools[0].policy[0].when');
  });

  it('is what the built-in engine uses for arithmetic the message asks, and not for anything else', async () => {
    const agentId = (await api('POST', '/v1/agents', { name: 'Calculator', model: 'local/extractive', tools: [{ type: 'code' }] })).body.data.id as string;
    const computed = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'What is (12.5 + 7) * 3?' });
    expect(computed.body.data.toolCalls).toMatchObject([{ tool: 'run_code', arguments: { source: 'return (12.5 + 7) * 3;' }, result: '{"result":58.5}' }]);
    expect(computed.body.data.reply).toContain('58.5');
    const percent = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'How much is 17% of 2,340?' });
    expect(percent.body.data.reply).toContain('397.8');
    const none = await api('POST', `/v1/agents/${agentId}/converse`, { message: 'Call me back at 555-0132 on 2026-12-01, please.' });
    expect(none.body.data.toolCalls ?? []).toEqual([]);
  });

  it('totals the amounts of money the grounding gives for what is asked, and leaves dates and counts alone', async () => {
    const tool = { name: 'run_code', description: 'Runs JavaScript and gives back what it returns', parameters: { type: 'object', properties: { source: { type: 'string', description: 'JavaScript: a script whose top-level `return` gives the result' } }, required: ['source'] } };
    const passages = [
      { title: 'Refunds', text: 'On 2026-11-02 refund R1 of €20.50 was paid. Refund R2 came to 35 EUR after 3 days. The shop opened in 1998.' },
      { title: 'Shipping', text: 'Express shipping costs $9.90 and takes 2 days.' },
    ];
    const ask = (message: string) => localEngine.generate({ model: 'local/extractive', messages: [{ role: 'user', content: message }], now: Date.now(), temperature: 0, maxTokens: 200, tools: [tool], passages }, AbortSignal.timeout(5000));
    expect((await ask('What do the refunds come to in total?')).toolCalls).toMatchObject([{ name: 'run_code', arguments: { source: 'return [20.50, 35].reduce((a, b) => a + b, 0);' } }]);
    expect((await ask('What is the average refund?')).toolCalls?.[0]?.arguments).toEqual({ source: 'return [20.50, 35].reduce((a, b) => a + b, 0) / 2;' });
    // One amount is no sum; a question without an aggregate asks nothing to compute.
    expect((await ask('What is the total for express shipping?')).toolCalls).toBeUndefined();
    expect((await ask('When was refund R1 paid?')).toolCalls).toBeUndefined();
  });
});
