/**
 * `npm run bench`: what asking another agent costs over the asked agent's own turn.
 *
 * An OpenAI-compatible stand-in (no delay) plays every agent: an agent with a tool calls it once
 * and then answers; one without answers at once. Measured, taking turns, each REPS times after a
 * warm-up, in milliseconds and DynamoDB requests (the local queue's own items left out):
 * - the callee's own turn (`converse` with it);
 * - the caller's turn with a local HTTP tool (the same two model calls, a tool that answers at once);
 * - the caller's turn with an `agent` tool asking the callee;
 * - the caller's turn with an `a2a` tool asking the callee, published over A2A on this server.
 * An agent tool call's added cost is the third less the second less the first; the A2A call's, the
 * fourth less the second less the first. Writes bench/results/agents.json.
 */
import './allow-local-tools';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { benchApp, mean, percentile, standInModels, startBenchServices, writeResults } from './common';

const REPS = Number(process.env.BENCH_AGENTS_REPS ?? 30);

async function main() {
  const services = await startBenchServices('cairn-bench-agents');
  const provider = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null }>; tools?: Array<{ function: { name: string } }> };
      const question = body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
      const answered = body.messages.some((m) => m.role === 'tool');
      const tool = body.tools?.[0]?.function.name;
      const message =
        tool && !answered
          ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: JSON.stringify({ message: question }) } }] }
          : { role: 'assistant', content: `Answer to: ${question}` };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'm', choices: [{ index: 0, message, finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }),
      );
    });
  });
  const tool = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"answer":"fine"}'));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => tool.listen(0, '127.0.0.1', resolve));

  const { serve } = await import('@hono/node-server');
  const { createDb } = await import('../shared/store/db');
  const counted = { requests: 0 };
  const db = createDb();
  const send = db.client.send.bind(db.client);
  const countingDb = {
    ...db,
    client: {
      send: async (command: Parameters<typeof send>[0]) => {
        if (!JSON.stringify(command.input).includes('"QUEUE#')) counted.requests++;
        return send(command);
      },
    },
  } as typeof db;
  const { app, call, apiKey, local } = await benchApp('ten_agentsbench', { db: countingDb, models: await standInModels(provider) });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const agent = async (body: Record<string, unknown>) => (await call('POST', '/v1/agents', { model: 'openai/gpt-4o', ...body })).data.id;

  const callee = await agent({ name: 'Callee', a2a: { enabled: true } });
  const agents = {
    callee,
    withHttpTool: await agent({ name: 'With an HTTP tool', tools: [{ type: 'http', name: 'ask', description: 'Asks', method: 'POST', url: `http://127.0.0.1:${(tool.address() as AddressInfo).port}/ask`, parameters: { type: 'object', properties: { message: { type: 'string' } } } }] }),
    withAgentTool: await agent({ name: 'With an agent tool', tools: [{ type: 'agent', name: 'ask', description: 'Asks the callee', agent: callee }] }),
    withA2aTool: await agent({ name: 'With an a2a tool', tools: [{ type: 'a2a', name: 'ask', description: 'Asks the callee over A2A', card: `${base}/a2a/${callee}/.well-known/agent-card.json`, auth: { type: 'bearer', token: apiKey } }] }),
  };
  const measured = Object.fromEntries(Object.keys(agents).map((k) => [k, { ms: [] as number[], requests: [] as number[] }])) as Record<keyof typeof agents, { ms: number[]; requests: number[] }>;
  for (let i = 0; i <= REPS; i++) {
    for (const [kind, id] of Object.entries(agents) as Array<[keyof typeof agents, string]>) {
      counted.requests = 0;
      const t0 = performance.now();
      const reply = await call('POST', `/v1/agents/${id}/converse`, { message: `question ${i}` });
      const ms = performance.now() - t0;
      if (!String(reply.data.reply).startsWith('Answer to')) throw new Error(`${kind}: ${JSON.stringify(reply).slice(0, 300)}`);
      if (i === 0) continue;
      measured[kind].ms.push(ms);
      measured[kind].requests.push(counted.requests);
    }
  }
  const summary = (kind: keyof typeof agents) => ({ ms: { p50: Math.round(percentile(measured[kind].ms, 0.5) * 10) / 10, mean: mean(measured[kind].ms) }, requests: mean(measured[kind].requests) });
  const [own, http, asked, overA2a] = [summary('callee'), summary('withHttpTool'), summary('withAgentTool'), summary('withA2aTool')];
  const added = (turn: typeof own) => ({ ms: Math.round((turn.ms.p50 - http.ms.p50 - own.ms.p50) * 10) / 10, requests: Math.round((turn.requests - http.requests - own.requests) * 10) / 10 });
  writeResults('agents', {
    date: new Date().toISOString(),
    turnsMeasured: REPS,
    calleeOwnTurn: own,
    callerWithHttpTool: http,
    callerWithAgentTool: asked,
    callerWithA2aTool: overA2a,
    agentToolAdds: added(asked),
    a2aToolAdds: added(overA2a),
    notes: 'Added = the caller turn with the tool, less the same caller with an HTTP tool that answers at once, less the callee’s own turn. A2A also writes the callee’s run (a task is a background run) and goes through HTTP twice.',
  });
  server.close();
  await local.stop();
  provider.close();
  tool.close();
  await services.stop();
}

await main();
