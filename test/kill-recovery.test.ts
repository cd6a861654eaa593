import { mkdtempSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, waitFor, type Started } from './helpers/processes';

/**
 * Local mode killed with SIGKILL mid-work, restarted on the same data: the stored queues and the
 * work leases bring the work back by themselves. A short lease keeps the test quick.
 */
const dataDir = mkdtempSync(join(tmpdir(), 'cairn-kill-'));
const running: Started[] = [];
let base = '';
let key = '';

/** An OpenAI-compatible provider that holds its first request open (the step "runs") and answers the rest. */
const requests: string[] = [];
const provider = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => (body += d.toString()));
  req.on('end', () => {
    if (body.includes('rounds: ')) return scriptRounds(body, res);
    requests.push(body);
    if (requests.length === 1) return; // never answered: the server is killed meanwhile
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Recovered answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2 } }));
  });
});

/** A background run's model: a call of the `record` tool per round until the message's number of rounds, then the answer. */
function scriptRounds(raw: string, res: ServerResponse) {
  const body = JSON.parse(raw) as { messages: Array<{ role: string; content: string | null }>; tools?: unknown[] };
  const asked = Number(/rounds: (\d+)/.exec(body.messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? 0);
  const done = body.messages.filter((m) => m.role === 'tool').length;
  const message =
    done < asked && body.tools?.length
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${done}`, type: 'function', function: { name: 'record', arguments: JSON.stringify({ n: done }) } }] }
      : { role: 'assistant', content: `Done after ${done} rounds.` };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'c', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message, finish_reason: done < asked ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2 } }));
}

/** The run's tool: records each call with its Idempotency-Key; holds round 5 open the first time (the server is killed meanwhile). */
const recorded: Array<{ n: number; key: string }> = [];
const tool = createServer((req, res) => {
  let raw = '';
  req.on('data', (d: Buffer) => (raw += d.toString()));
  req.on('end', () => {
    const n = (JSON.parse(raw) as { n: number }).n;
    recorded.push({ n, key: String(req.headers['idempotency-key']) });
    if (n === 5 && recorded.filter((r) => r.n === 5).length === 1) return;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ recorded: n }));
  });
});

async function startServer() {
  const port = (provider.address() as { port: number }).port;
  const server = runScript('local/server.ts', [], {
    PORT: '0',
    DATA_DIR: dataDir,
    WORK_LEASE_SECONDS: '2',
    // The test polls the API while work runs; the free plan's rate limit is not what it tests.
    DEV_API_KEY_PLAN: 'unlimited',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    // The run's tool is on this machine (by name: its address itself stays refused).
    TOOL_ALLOWED_HOSTS: 'localhost',
  });
  running.push(server);
  await waitFor(() => /DEV_API_KEY=\S+/.test(server.output()) || server.child.exitCode !== null, 'the server banner');
  key = /DEV_API_KEY=(\S+)/.exec(server.output())?.[1] ?? '';
  if (!key) throw new Error(`server did not start:\n${server.output()}`);
  base = `http://127.0.0.1:${/Cairn is running at http:\/\/localhost:(\d+)/.exec(server.output())![1]}`;
  return server;
}

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = (await res.json()) as { data: Record<string, unknown> & { id: string; status: string } };
  // A failed poll must say what the server answered, not fail later on a missing field.
  if (res.status >= 400 && method === 'GET') throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, body: json };
};

async function kill(server: Started) {
  server.child.kill('SIGKILL');
  await server.exited;
}

beforeAll(async () => {
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => tool.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  tool.closeAllConnections();
  await new Promise<void>((resolve) => tool.close(() => resolve()));
  for (const s of running) if (s.child.exitCode === null) s.child.kill('SIGKILL');
  provider.closeAllConnections();
  await new Promise<void>((resolve) => provider.close(() => resolve()));
});

describe('local mode killed with SIGKILL mid-work', () => {
  it('finishes a workflow step that was running when the process died', async () => {
    const server = await startServer();
    const workflow = await api('POST', '/v1/workflows', { name: 'one step', steps: [{ type: 'generation', config: { model: 'openai/gpt-4o-mini', prompt: 'Answer {{user_message}}' } }] });
    const started = await api('POST', `/v1/workflows/${workflow.body.data.id}/execute`, { input: 'where is my parcel?', mode: 'async' });
    expect(started.status).toBe(202);
    const executionPath = `/v1/workflows/${workflow.body.data.id}/executions/${started.body.data.id}`;
    await waitFor(() => requests.length === 1, 'the step to call the model');
    expect((await api('GET', executionPath)).body.data.status).toBe('running');
    await kill(server);

    await startServer();
    let execution = (await api('GET', executionPath)).body.data;
    const deadline = Date.now() + 30_000;
    while (execution.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      execution = (await api('GET', executionPath)).body.data;
    }
    expect(execution.status).toBe('succeeded');
    expect(execution.output).toMatchObject({ text: 'Recovered answer' });
    // The step ran again after the restart: a second attempt, a second request to the model.
    expect((execution.steps as Array<{ attempt: number }>)[0]!.attempt).toBe(2);
    expect(requests).toHaveLength(2);
  }, 90_000);

  it('finishes a sync that was indexing when the process died', async () => {
    const files = Array.from({ length: 1200 }, (_, i) => ({
      path: `notes/${String(i).padStart(4, '0')}.md`,
      content: `# Note ${i}\n\nThe parcel number ${i} left the depot in ${['Lyon', 'Porto', 'Oslo', 'Riga'][i % 4]} on day ${i % 28}. ${'Handled with care. '.repeat(20)}`,
    }));
    const created = await api('POST', '/v1/knowledge-sources', { name: 'notes', type: 'file-collection', files });
    expect(created.status).toBe(201);
    const sourcePath = `/v1/knowledge-sources/${created.body.data.id}`;
    expect((await api('POST', `${sourcePath}/connect`, {})).status).toBe(202);
    // Killed as soon as batches are being indexed.
    let status = '';
    for (const until = Date.now() + 30_000; status !== 'indexing' && status !== 'ready' && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 20));
      status = (await api('GET', sourcePath)).body.data.status;
    }
    await kill(running[running.length - 1]!);
    expect(status).toBe('indexing');

    await startServer();
    let source = (await api('GET', sourcePath)).body.data;
    // Generous: on a loaded two-core machine (the whole suite at once) re-indexing 1,200 notes takes a minute.
    const deadline = Date.now() + 120_000;
    while (source.status !== 'ready' && source.status !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      source = (await api('GET', sourcePath)).body.data;
    }
    expect(source.status).toBe('ready');
    expect(source.stats).toMatchObject({ documents: 1200 });
    const found = (await api('POST', `${sourcePath}/search`, { query: 'parcel number 1034', topK: 1 })) as unknown as { status: number; body: { data: { results: Array<{ path: string }> } } };
    expect(found.status).toBe(200);
    expect(found.body.data.results[0]!.path).toBe('notes/1034.md');
  }, 200_000);

  it('finishes a background run that was in a tool call when the process died: every round reaches the tool, a retried call with the same Idempotency-Key', async () => {
    const server = running[running.length - 1]!;
    const toolUrl = `http://localhost:${(tool.address() as { port: number }).port}/record`;
    const agent = await api('POST', '/v1/agents', {
      name: 'Recorder',
      model: 'openai/gpt-4o-mini',
      tools: [{ type: 'http', name: 'record', description: 'Records an item', method: 'POST', url: toolUrl, parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } }],
    });
    const started = await api('POST', `/v1/agents/${agent.body.data.id}/runs`, { message: 'rounds: 12' });
    expect(started.status).toBe(202);
    const runPath = `/v1/agents/${agent.body.data.id}/runs/${started.body.data.id}`;
    await waitFor(() => recorded.some((r) => r.n === 5), 'the run to reach its sixth round');
    await kill(server);

    await startServer();
    let run = (await api('GET', runPath)).body.data;
    const deadline = Date.now() + 60_000;
    while (run.status !== 'completed' && run.status !== 'failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      run = (await api('GET', runPath)).body.data;
    }
    expect(run).toMatchObject({ status: 'completed', reply: 'Done after 12 rounds.' });
    expect([...new Set(recorded.map((r) => r.n))]).toEqual([...Array(12).keys()]);
    // Only the call in flight when the process died was made twice, with one key.
    const fifth = recorded.filter((r) => r.n === 5);
    expect(fifth).toHaveLength(2);
    expect(fifth[0]!.key).toBe(fifth[1]!.key);
    expect(recorded.filter((r) => r.n !== 5).every((r, i, all) => all.filter((o) => o.n === r.n).length === 1)).toBe(true);
    expect(new Set(recorded.map((r) => r.key)).size).toBe(12);
  }, 120_000);
});
