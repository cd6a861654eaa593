import { createServer } from 'node:http';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../local/http-server';
import { createLocalApp } from '../local/local-app';
import { openaiProvider } from '../shared/models/openai-provider';
import type { Runtime } from '../shared/runtime';
import { testRt } from './helpers/runtime';
import { newTenant, type TestTenant } from './helpers/tenant';
import { waitFor } from './helpers/processes';

/**
 * A slow OpenAI-compatible provider at the HTTP wire: a streamed reply of 40 chunks, one every 50 ms.
 * It records whether each reply was sent to the end or its connection was closed first.
 */
function slowProvider() {
  const replies: Array<{ sent: number; finished: boolean; closedEarly: boolean }> = [];
  const server = createServer((req, res) => {
    const reply = { sent: 0, finished: false, closedEarly: false };
    replies.push(reply);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const timer = setInterval(() => {
      if (reply.sent === 40) {
        clearInterval(timer);
        chunk({ choices: [{ delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 40 } });
        res.end('data: [DONE]\n\n');
        reply.finished = true;
        return;
      }
      chunk({ choices: [{ delta: { content: `w${reply.sent} ` } }] });
      reply.sent++;
    }, 50);
    res.on('close', () => {
      clearInterval(timer);
      if (!reply.finished) reply.closedEarly = true;
    });
  });
  return { server, replies };
}

describe('a streamed converse the caller abandons', () => {
  const provider = slowProvider();
  let cairn: ServerType;
  let base: string;
  let t: TestTenant;
  let rt: Runtime;
  beforeAll(async () => {
    await new Promise<void>((resolve) => provider.server.listen(0, '127.0.0.1', resolve));
    const engine = openaiProvider({ baseUrl: `http://127.0.0.1:${(provider.server.address() as { port: number }).port}/v1`, apiKey: 'sk-test' });
    rt = { ...testRt, models: { resolve: async (name) => ({ name: `openai/${name}`, model: name, engine }) } };
    cairn = await startHttpServer(createLocalApp(rt).fetch, { port: 0, hostname: '127.0.0.1', clock: rt.clock });
    base = `http://127.0.0.1:${(cairn.address() as { port: number }).port}`;
    t = await newTenant();
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => cairn.close(() => resolve()));
    await new Promise<void>((resolve) => (provider.server).close(() => resolve()));
  });

  it('cancels the model call and keeps the partial reply marked interrupted', async () => {
    const headers = { 'x-api-key': t.apiKey, 'content-type': 'application/json' };
    const agent = ((await (await fetch(`${base}/v1/agents`, { method: 'POST', headers, body: JSON.stringify({ name: 'Slow', model: 'gpt-4o' }) })).json()) as { data: { id: string } }).data.id;
    const controller = new AbortController();
    const res = await fetch(`${base}/v1/agents/${agent}/converse`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ message: 'Tell me a long story', stream: true, context: { sessionId: 'abandoned' } }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/event: delta/g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await waitFor(() => provider.replies[0]?.closedEarly === true, 'the provider’s reply to be cancelled', 5000);
    expect(provider.replies[0]!.finished).toBe(false);
    expect(provider.replies[0]!.sent).toBeLessThan(40);
    let stored: Array<{ role: string; content: string; interrupted?: boolean }> = [];
    for (let i = 0; i < 50 && stored.length < 2; i++) {
      stored = ((await (await fetch(`${base}/v1/agents/${agent}/sessions/abandoned/messages`, { headers })).json()) as { data: typeof stored }).data;
      if (stored.length < 2) await new Promise((r) => setTimeout(r, 100));
    }
    expect(stored).toHaveLength(2);
    expect(stored[1]).toMatchObject({ role: 'assistant', interrupted: true });
    expect(stored[1]!.content).toMatch(/^w0 w1 w2 /);
    expect(stored[1]!.content.split(' ').filter(Boolean).length).toBeLessThan(40);
  });
});
